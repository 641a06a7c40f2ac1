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
from witness_gate.classify import NEXT_STEPS
from witness_gate.report import diff_reasons as report_reasons

FORMATS = ("text", "github", "sarif", "junit")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
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

    @property
    def message(self) -> str:
        counts = f"failed {self.failures}/{self.runs} replays" if self.runs else "failed"
        unshrunk = "" if self.unshrunk_input is None else f" Unshrunk input: {self.unshrunk_input}"
        return (f"{self.label}: {self.assertion_id} {counts}; witness {self.file} ({self.witness_hash[:12]}) - {self.next_step} "
                f"Cause: {self.cause}: {self.reason} Failing input: {self.failing_input}{unshrunk}")


def findings(record: dict[str, Any], witnesses: dict[str, dict[str, Any]]) -> list[Finding]:
    """Findings from a report or gate record; `witnesses` maps a witness file name to its record."""
    found = []
    for row in record["witnesses"]:
        name = row["file"].rsplit("/", 1)[-1]
        prop = witnesses.get(name, {}).get("property", {})
        blocks = row.get("blocks", row["label"] != "flake")
        found.append(
            Finding(
                row["assertion_id"], row["witness_hash"], row["file"], row["label"], row["failures"], row["runs"],
                row["next_step"], blocks, row.get("frozen_by"), prop.get("path"), prop.get("line"), row["cause"], row["reason"],
                row["input"], row["unshrunk_input"],
            )
        )
    return found


def diff_reasons(record: dict[str, Any]) -> list[str]:
    """A gate record lists its reasons; a classification report's are derived from its diff."""
    return list(record["reasons"]) if "reasons" in record else report_reasons(record)


def junit_xml(record: dict[str, Any], found: list[Finding], suite: str) -> bytes:
    """One testcase per witness (failing when it blocks, skipped when a freeze silences it),
    plus one for the verdict, which carries diff-level reasons such as a mixed edit."""
    root = ElementTree.Element("testsuites")
    cases = []
    for finding in found:
        case = ElementTree.Element("testcase", classname=finding.property_path or suite, name=f"{finding.assertion_id}[{finding.witness_hash[:12]}]")
        if finding.frozen_by:
            ElementTree.SubElement(case, "skipped", message=f"flake frozen by {finding.frozen_by}")
        elif finding.blocks:
            failure = ElementTree.SubElement(case, "failure", message=finding.message, type=finding.label)
            failure.text = finding.message
        cases.append(case)
    verdict = ElementTree.Element("testcase", classname=suite, name="witness-gate verdict")
    if record["exit_code"] != 0:
        text = "\n".join([*diff_reasons(record), f"verdict: {record['verdict']} (exit {record['exit_code']})"])
        failure = ElementTree.SubElement(verdict, "failure", message=f"verdict: {record['verdict']}", type=record["verdict"])
        failure.text = text
    cases.append(verdict)
    failed = sum(1 for case in cases if case.find("failure") is not None)
    skipped = sum(1 for case in cases if case.find("skipped") is not None)
    testsuite = ElementTree.SubElement(
        root, "testsuite", name=suite, tests=str(len(cases)), failures=str(failed), errors="0", skipped=str(skipped)
    )
    testsuite.extend(cases)
    root.set("tests", str(len(cases)))
    root.set("failures", str(failed))
    ElementTree.indent(root)
    return ElementTree.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def sarif(record: dict[str, Any], found: list[Finding]) -> dict[str, Any]:
    """A SARIF 2.1.0 log: one result per blocking witness, at its property's definition."""
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
        if finding.property_path:
            result["locations"] = [{
                "physicalLocation": {
                    "artifactLocation": {"uri": finding.property_path, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": finding.property_line or 1},
                }
            }]
        results.append(result)
    rules = [{"id": label, "name": label, "shortDescription": {"text": text}, "help": {"text": NEXT_STEPS[label]}} for label, text in _RULE_HELP.items()]
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "witness-gate", "version": __version__, "informationUri": "https://witness-gate.dev", "rules": rules}},
            "results": results,
            "properties": {"verdict": record["verdict"], "reasons": diff_reasons(record)},
        }],
    }


def sarif_bytes(record: dict[str, Any], found: list[Finding]) -> bytes:
    return (json.dumps(sarif(record, found), indent=2, sort_keys=True) + "\n").encode()


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(record: dict[str, Any], found: list[Finding]) -> list[str]:
    """GitHub Actions workflow commands: an error per blocking witness, a notice per frozen one."""
    lines = []
    for finding in found:
        if not finding.blocks and not finding.frozen_by:
            continue
        kind = "error" if finding.blocks else "notice"
        where = f"file={_escape_property(finding.property_path)},line={finding.property_line or 1}," if finding.property_path else ""
        lines.append(f"::{kind} {where}title={_escape_property('witness-gate ' + finding.label)}::{_escape_data(finding.message)}")
    for reason in diff_reasons(record):
        lines.append(f"::error title=witness-gate::{_escape_data(reason)}")
    return lines
