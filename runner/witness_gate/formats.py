"""The verdict for other tools: JUnit XML, SARIF 2.1.0 and GitHub annotations.

Pure functions of a classification report or a gate record (plus the witnesses, for
the property's source location). Nothing here reads the clock, so the same run renders
the same bytes.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from typing import Any

from witness_gate import __version__
from witness_gate.labels import NEXT_STEPS
from witness_gate.classification import diff_reasons as report_reasons
from witness_gate.witness import Witness

FORMATS = ("text", "github", "sarif", "junit")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# SARIF rule names, for people: each differs from its stable id (the label), as SARIF asks.
_RULE_NAMES = {
    "regression": "WitnessFailsEveryReplay",
    "flake": "WitnessFailsSomeReplays",
    "oracle_defect": "OracleRejectsUnchangedCode",
    "mixed_edit": "ImplementationAndOracleChangedTogether",
    "not_reproduced": "WitnessNoLongerFails",
    "unclassified": "EvidenceIncomplete",
}
_RULE_HELP = {
    "regression": "The same witness fails on every replay under the pin.",
    "flake": "The same witness fails on some replays and passes on others, under one fixture digest.",
    "oracle_defect": "Only oracle paths changed, and the witness contradicts the spec.",
    "mixed_edit": "Implementation paths and oracle paths both changed.",
    "not_reproduced": "The witness no longer demonstrates the failure: not a pass.",
    "unclassified": "The evidence is incomplete: not a pass.",
}


@dataclass(frozen=True)
class Finding:
    """One witness as the tools see it."""

    assertion_id: str
    witness_hash: str
    file: str
    label: str
    failures: int
    runs: int
    next_step: str
    blocks: bool
    frozen_by: str | None
    property_path: str | None
    property_line: int | None
    cause: str
    reason: str
    failing_input: str
    unshrunk_input: str | None
    changed: tuple[str, ...] = ()  # the changed implementation files the failing test reaches (a review's)

    @property
    def message(self) -> str:
        counts = f"failed {self.failures}/{self.runs} replays" if self.runs else "failed"
        unshrunk = "" if self.unshrunk_input is None else f" Unshrunk input: {self.unshrunk_input}"
        changed = f" Changed implementation it reaches: {', '.join(self.changed)}." if self.changed else ""
        return (
            f"{self.label}: {self.assertion_id} {counts}; witness {self.file} ({self.witness_hash[:12]}) - "
            f"{self.next_step} "
            f"Cause: {self.cause}: {self.reason} Failing input: {self.failing_input}{unshrunk}{changed}"
        )


def findings(record: dict[str, Any], witnesses: dict[str, Witness], changed: tuple[str, ...] = ()) -> list[Finding]:
    """Findings from a report or gate record; `witnesses` maps a witness file name to its
    record, `changed` names the changed implementation files the record's tests reach."""
    found = []
    for row in record["witnesses"]:
        name = row["file"].rsplit("/", 1)[-1]
        witness = witnesses.get(name)
        module = None if witness is None else witness.property_module
        blocks = row.get("blocks", row["label"] != "flake")
        found.append(
            Finding(
                row["assertion_id"],
                row["witness_hash"],
                row["file"],
                row["label"],
                row["failures"],
                row["runs"],
                row["next_step"],
                blocks,
                row.get("frozen_by"),
                None if module is None else module.path,
                None if module is None else module.line,
                row["cause"],
                row["reason"],
                row["input"],
                row["unshrunk_input"],
                changed,
            )
        )
    return found


def diff_reasons(record: dict[str, Any]) -> list[str]:
    """A gate record lists its reasons; a classification report's are derived from its diff."""
    return list(record["reasons"]) if "reasons" in record else report_reasons(record)


def junit_xml(record: dict[str, Any], found: list[Finding], suite: str) -> bytes:
    return junit_document([junit_testsuite(record, found, suite)])


def junit_testsuite(
    record: dict[str, Any], found: list[Finding], suite: str, reasons: list[str] | None = None
) -> ElementTree.Element:
    """One testcase per witness (failing when it blocks, skipped when a freeze silences it),
    plus one for the verdict, which carries diff-level reasons such as a mixed edit."""
    cases = []
    for finding in found:
        case = ElementTree.Element(
            "testcase",
            classname=finding.property_path or suite,
            name=f"{finding.assertion_id}[{finding.witness_hash[:12]}]",
        )
        if finding.frozen_by:
            ElementTree.SubElement(case, "skipped", message=f"flake frozen by {finding.frozen_by}")
        elif finding.blocks:
            if finding.changed:  # the changed code, for tools that annotate a file (the text names every one)
                case.set("file", finding.changed[0])
            failure = ElementTree.SubElement(case, "failure", message=finding.message, type=finding.label)
            failure.text = finding.message
        cases.append(case)
    verdict = ElementTree.Element("testcase", classname=suite, name="witness-gate verdict")
    if record["exit_code"] != 0:
        shown = diff_reasons(record) if reasons is None else reasons
        text = "\n".join([*shown, f"verdict: {record['verdict']} (exit {record['exit_code']})"])
        failure = ElementTree.SubElement(
            verdict, "failure", message=f"verdict: {record['verdict']}", type=record["verdict"]
        )
        failure.text = text
    cases.append(verdict)
    failed = sum(1 for case in cases if case.find("failure") is not None)
    skipped = sum(1 for case in cases if case.find("skipped") is not None)
    testsuite = ElementTree.Element(
        "testsuite", name=suite, tests=str(len(cases)), failures=str(failed), errors="0", skipped=str(skipped)
    )
    testsuite.extend(cases)
    return testsuite


def junit_document(testsuites: list[ElementTree.Element]) -> bytes:
    root = ElementTree.Element("testsuites")
    root.extend(testsuites)
    root.set("tests", str(sum(int(suite.get("tests", "0")) for suite in testsuites)))
    root.set("failures", str(sum(int(suite.get("failures", "0")) for suite in testsuites)))
    ElementTree.indent(root)
    document: bytes = ElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"


def sarif(record: dict[str, Any], found: list[Finding]) -> dict[str, Any]:
    return sarif_log(sarif_results(found), record["verdict"], diff_reasons(record))


def sarif_results(found: list[Finding]) -> list[dict[str, Any]]:
    """One SARIF result per blocking witness, at the changed implementation files its test
    reaches (a review's) and at its property's definition."""
    results = []
    for finding in found:
        if not finding.blocks:
            continue
        result: dict[str, Any] = {
            "ruleId": finding.label,
            "level": "error",
            "message": {"text": finding.message},
            "partialFingerprints": {"witnessHash/v1": finding.witness_hash},
        }
        # The changed code first (code scanning shows a result at its first location, so in the
        # pull request's diff), then the property that found it.
        places = [(path, 1) for path in finding.changed]
        if finding.property_path:
            places.append((finding.property_path, finding.property_line or 1))
        if places:
            result["locations"] = [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": path, "uriBaseId": "%SRCROOT%"},
                        "region": {"startLine": line},
                    }
                }
                for path, line in places
            ]
        results.append(result)
    return results


def sarif_log(results: list[dict[str, Any]], verdict: str, reasons: list[str]) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run."""
    rules = [
        {
            "id": label,
            "name": _RULE_NAMES[label],
            "shortDescription": {"text": text},
            "help": {"text": NEXT_STEPS[label]},
        }
        for label, text in _RULE_HELP.items()
    ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "witness-gate",
                        "version": __version__,
                        "informationUri": "https://witness-gate.dev",
                        "rules": rules,
                    }
                },
                "results": results,
                "properties": {"verdict": verdict, "reasons": reasons},
            }
        ],
    }


def sarif_bytes(record: dict[str, Any], found: list[Finding]) -> bytes:
    return json_bytes(sarif(record, found))


def json_bytes(log: dict[str, Any]) -> bytes:
    return (json.dumps(log, indent=2, sort_keys=True) + "\n").encode()


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(record: dict[str, Any], found: list[Finding]) -> list[str]:
    """GitHub Actions workflow commands: an error per blocking witness, a notice per frozen one."""
    return [*witness_annotations(found), *(annotation("error", reason) for reason in diff_reasons(record))]


def witness_annotations(found: list[Finding]) -> list[str]:
    lines = []
    for finding in found:
        if not finding.blocks and not finding.frozen_by:
            continue
        kind = "error" if finding.blocks else "notice"
        where = (
            f"file={_escape_property(finding.property_path)},line={finding.property_line or 1},"
            if finding.property_path
            else ""
        )
        title = _escape_property("witness-gate " + finding.label)
        lines.append(f"::{kind} {where}title={title}::{_escape_data(finding.message)}")
    return lines


def annotation(kind: str, text: str) -> str:
    return f"::{kind} title=witness-gate::{_escape_data(text)}"


# --- a review: every suite's witnesses, and what blocks beyond them ------------------------


@dataclass(frozen=True)
class SuiteFindings:
    name: str  # the suite, and its gate directory under the review's --out
    record: dict[str, Any]  # its gate record
    found: list[Finding]


def review_junit_xml(review: dict[str, Any], suites: list[SuiteFindings], reasons: list[str]) -> bytes:
    """A testsuite per gated suite, and one for the review's own verdict and reasons."""
    own = junit_testsuite(review, [], "witness-gate review", reasons)
    return junit_document([*(junit_testsuite(suite.record, suite.found, suite.name) for suite in suites), own])


def review_sarif(review: dict[str, Any], suites: list[SuiteFindings], reasons: list[str]) -> dict[str, Any]:
    return sarif_log([result for suite in suites for result in sarif_results(suite.found)], review["verdict"], reasons)


def review_annotations(suites: list[SuiteFindings], reasons: list[str]) -> list[str]:
    """An error per blocking witness and per blocking reason; a warning per oracle edit."""
    lines = [line for suite in suites for line in witness_annotations(suite.found)]
    return lines + [
        annotation("warning" if reason.startswith("oracle edit: ") else "error", reason) for reason in reasons
    ]


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    # A code span holding a backtick needs a double fence, padded so it cannot merge.
    return f"`` {_cell(text)} ``" if "`" in text else f"`{_cell(text)}`"


def review_summary(
    review: dict[str, Any],
    suites: list[SuiteFindings],
    reasons: list[str],
    freeze_steps: dict[tuple[str, str], list[str]],
) -> str:
    """Markdown for a pull request (a comment, or $GITHUB_STEP_SUMMARY): a row per witness
    with its label, counts, cause and failing input, a row for each suite without one, every
    freeze that applies with its expiry, the steps that write an unfrozen flake's freeze, and
    what else blocks or needs the oracle's owners."""
    lines = [
        f"## witness-gate review: {review['verdict']} (exit {review['exit_code']})",
        "",
        f"Base `{review['base'][:12]}`, head `{review['head'][:12]}`, {review['changed_paths']} changed paths.",
        "",
        "| suite | witness | label | failed replays | cause | failing input | next step |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for suite in suites:
        for finding in suite.found:
            counts = f"{finding.failures}/{finding.runs}" if finding.runs else "-"
            expiry = next(
                (row["expires_at"] for row in suite.record["freezes"] if row["file"] == finding.frozen_by), None
            )
            step = _cell(f"frozen by {finding.frozen_by} until {expiry}" if finding.frozen_by else finding.next_step)
            if (suite.name, finding.file) in freeze_steps:
                step += " To freeze it: the steps below."
            lines.append(
                f"| {_cell(suite.name)} | {_cell(finding.assertion_id)} | **{finding.label}** | {counts} | "
                f"{finding.cause} "
                f"| {_code(finding.failing_input)} | {step} |"
            )
        if not suite.found:
            suite_reasons = _cell("; ".join(suite.record["reasons"]) or "nothing failed")
            lines.append(f"| {_cell(suite.name)} | - | {suite.record['verdict']} | - | - | - | {suite_reasons} |")
    freezes = [(suite.name, row) for suite in suites for row in suite.record["freezes"]]
    if freezes:
        lines += [
            "",
            "### Freezes",
            "",
            "| suite | freeze | witness | expires | holds |",
            "| --- | --- | --- | --- | --- |",
        ]
        lines += [
            f"| {_cell(name)} | {_code(row['file'])} | `{row['witness_hash'][:12]}` | {row['expires_at']} "
            f"| {_cell('no: ' + '; '.join(row['problems'])) if row['problems'] else 'yes'} |"
            for name, row in freezes
        ]
    for (name, file), steps in freeze_steps.items():
        lines += [
            "",
            f"### To freeze {_cell(name)}: {_code(file.rsplit('/', 1)[-1])}",
            "",
            "In a checkout of the base, with this job's artifacts in `.artifacts/`; the freeze goes in a pull request "
            "of its own, which the review answers with exit 3 until the oracle's owners approve it:",
            "",
            "```bash",
            *steps,
            "```",
        ]
    if reasons:
        lines += ["", *(f"- {_cell(reason)}" for reason in reasons)]
    return "\n".join(lines) + "\n"
