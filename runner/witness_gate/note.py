"""The review note: rendered from a gate's artifacts, and a drafted one checked against them.

The spec lets a drafter (a person or a model) write a short note that quotes the witness
JSON, and says to discard a note that disagrees with the witness file. `render` writes
the note from the artifacts; `disagreements` reads any note and names every fact it
quotes that the artifacts do not hold: a hash that is no witness's and not the fixture's,
a label or counts on a line about an assertion that are not that assertion's, and a
quoted JSON object whose fields differ from the witness file it names. Pure: text and
records in, text out. The gate decides; a note only repeats it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from witness_gate.canonical import NotPlainJSON, canonical_bytes
from witness_gate.labels import LABELS

if TYPE_CHECKING:  # for its type only: this pure module loads no witness machinery
    from witness_gate.witness import Witness

_HASH = re.compile(r"\b[0-9a-f]{64}\b")
_COUNTS = re.compile(r"\b(\d+)\s*(?:/|of)\s*(\d+)\b")
_JSON_BLOCK = re.compile(r"```json\n(.*?)```", re.S)
_LABEL = re.compile(r"\b(" + "|".join(LABELS) + r")\b")
# Fields of a quoted object that are the gate's row rather than the witness file's.
_ROW_FIELDS = ("label", "failures", "runs", "cause")


def render(gate: dict[str, Any], witnesses: dict[str, Witness]) -> str:
    """Markdown: the verdict, the fixture, and for each witness its label, counts, cause,
    input and the quoted witness JSON (`witnesses` by the row's file name)."""
    lines = [
        f"# witness-gate: {gate['verdict']} (exit {gate['exit_code']})",
        "",
        f"Fixture sha256 `{gate['fixture_digest']}`; {len(gate['witnesses'])} witness(es).",
        "",
    ]
    for row in gate["witnesses"]:
        record = witnesses[row["file"].rsplit("/", 1)[-1]]
        quoted = {
            "assertion_id": record.assertion_id,
            "witness_hash": record.witness_hash,
            "payload": record.shrunk.payload,
            "fixture_digest": record.fixture_digest,
            "hypothesis_version": record.hypothesis_version,
        }
        status = (
            f"frozen by {row['frozen_by']}" if row["frozen_by"] else ("blocks" if row["blocks"] else "does not block")
        )
        lines += [
            f"## {row['assertion_id']}: {row['label']}",
            "",
            f"- {row['assertion_id']}: {row['label']}, {row['failures']}/{row['runs']} replays failed (cause: "
            f"{row['cause']}); {status}",
            f"- witness `{row['witness_hash']}` ({row['file']})",
            "",
            "```json",
            json.dumps({**quoted, **{field: row[field] for field in _ROW_FIELDS}}, indent=2, sort_keys=True),
            "```",
            "",
        ]
    return "\n".join(lines)


def disagreements(text: str, gate: dict[str, Any], witnesses: dict[str, Witness]) -> list[str]:
    """Each fact the note quotes that the artifacts do not hold; a note that quotes no
    witness (and the gate has some) is not evidence, and that is said too."""
    # A quoted object may name any field of the witness file, so it is held to the file's record.
    by_hash = {
        row["witness_hash"]: (row, witnesses[row["file"].rsplit("/", 1)[-1]].to_json()) for row in gate["witnesses"]
    }
    rows_by_assertion: dict[str, list[dict[str, Any]]] = {}
    for row in gate["witnesses"]:
        rows_by_assertion.setdefault(row["assertion_id"], []).append(row)
    problems = []
    for value in sorted(set(_HASH.findall(text)) - set(by_hash) - {gate["fixture_digest"]}):
        problems.append(f"quotes {value}, which is neither a witness hash of these artifacts nor the fixture's digest")
    for number, line in enumerate(_outside_json(text).splitlines(), start=1):
        named = [assertion for assertion in rows_by_assertion if re.search(rf"\b{re.escape(assertion)}\b", line)]
        if len(named) != 1:
            continue  # a line about no assertion, or about several, claims nothing checkable about one
        rows = rows_by_assertion[named[0]]
        for label in _LABEL.findall(line):
            if all(row["label"] != label for row in rows):
                problems.append(f"line {number}: says {named[0]} is {label}; the gate labelled it {_labels(rows)}")
        for failures, runs in _COUNTS.findall(line):
            if all((row["failures"], row["runs"]) != (int(failures), int(runs)) for row in rows):
                problems.append(
                    f"line {number}: says {named[0]} failed {failures}/{runs}; the gate counted {_counts(rows)}"
                )
    quoted_any = False
    for index, block in enumerate(_JSON_BLOCK.findall(text), start=1):
        try:
            quoted = json.loads(block)
        except ValueError:
            problems.append(f"JSON block {index}: not JSON")
            continue
        if not isinstance(quoted, dict) or "witness_hash" not in quoted:
            problems.append(f"JSON block {index}: quotes no witness_hash, so no witness file it could agree with")
            continue
        if quoted["witness_hash"] not in by_hash:
            continue  # named above as an unknown hash
        quoted_any = True
        row, record = by_hash[quoted["witness_hash"]]
        for key, value in sorted(quoted.items()):
            source = row if key in _ROW_FIELDS else record
            if key not in source:
                problems.append(f"JSON block {index}: {key!r} is no field of witness {quoted['witness_hash'][:12]}")
            elif _canonical(value) != _canonical(source[key]):
                problems.append(
                    f"JSON block {index}: {key} is {_short(value)}; the witness file has {_short(source[key])}"
                )
    if gate["witnesses"] and not quoted_any and not set(_HASH.findall(text)) & set(by_hash):
        problems.append(
            "the note quotes no witness of these artifacts (no witness hash, no witness JSON): it is not evidence"
        )
    return problems


def _outside_json(text: str) -> str:
    """The note with its JSON blocks blanked (their lines kept, so line numbers hold)."""
    return _JSON_BLOCK.sub(lambda match: "\n" * match.group(0).count("\n"), text)


def _canonical(value: Any) -> bytes | None:
    try:
        return canonical_bytes(value)
    except NotPlainJSON:  # a quoted value JSON allows but a witness never holds (a float too big, say)
        return None


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _labels(rows: list[dict[str, Any]]) -> str:
    return " and ".join(sorted({row["label"] for row in rows}))


def _counts(rows: list[dict[str, Any]]) -> str:
    return " and ".join(sorted({f"{row['failures']}/{row['runs']}" for row in rows}))
