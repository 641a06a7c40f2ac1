"""Witness records (spec section 2): a retained failing payload and its hash.

A witness names its property module by repository path and source digest, so the
replay can load exactly the oracle that rejected the payload, or notice it moved.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import conditions, schemas, store
from witness_gate.canonical import canonical_bytes, payload_hash
from witness_gate.errors import WitnessGateError
from witness_gate.properties import ASSERTION_ID

SCHEMA_VERSION = 3
# A property's name, or a pytest node id's escaped stem (`file_stem`), then the witness
# hash's first 12 digits: the pattern the report schema gives a witness file, read from it.
FILE_NAME = re.compile(
    json.loads(schemas.schema_text("report"))["properties"]["witnesses"]["items"]["properties"]["file"]["pattern"]
)


@dataclass(frozen=True)
class Call:
    """One property call as the runner recorded it: the payload, the global `random`
    seed it ran under, and the calls that preceded it in the same process."""

    payload: Any
    random_seed: int
    history: tuple[dict[str, Any], ...]

    def as_record(self) -> dict[str, Any]:
        return {
            "payload": self.payload,
            "witness_hash": payload_hash(self.payload),
            "random_seed": self.random_seed,
            "history": list(self.history),
        }


@dataclass(frozen=True)
class Failure:
    """A payload the property rejected, as found by `check`."""

    assertion_id: str
    final: Call  # the shrunk payload (the same call as `original` when nothing was shrunk)
    original: Call  # the unshrunk payload: the first failing call
    evidence: dict[str, Any]
    origin: str  # "search", "example", "fixture" or "reject" (a payload it must refuse)
    seed: int | None  # the search seed, for origin "search"
    fully_shrunk: bool
    hash_secret: int  # PYTHONHASHSEED of the interpreter that ran the search
    condition: dict[str, str]  # the declared condition it ran under ({} when none is declared)
    failing_example: str | None = None  # a @given test's, as Hypothesis printed it (`given_tests`)


@dataclass(frozen=True)
class PropertySource:
    path: str  # repository-relative
    sha256: str  # of the module's source bytes
    lines: dict[str, int]  # assertion id -> line of its definition


def build(source: PropertySource, lock: dict[str, Any], failure: Failure) -> dict[str, Any]:
    shrunk = failure.final.as_record()
    return {
        "schema_version": SCHEMA_VERSION,
        "assertion_id": failure.assertion_id,
        "fixture_digest": lock["fixture"]["sha256"],
        "witness_hash": shrunk.pop("witness_hash"),
        **shrunk,
        "unshrunk": failure.original.as_record(),
        "hash_secret": failure.hash_secret,
        "origin": failure.origin,
        "expect": "reject" if failure.origin == "reject" else "accept",
        "fully_shrunk": failure.fully_shrunk,
        "seed": failure.seed,
        "evidence": failure.evidence,
        "property": {"path": source.path, "sha256": source.sha256, "line": source.lines.get(failure.assertion_id, 1)},
        "generator_version": lock["generator_version"],
        "hypothesis_version": lock["hypothesis_version"],
        **({"condition": failure.condition} if "conditions" in lock else {}),
        **({"given": {"failing_example": failure.failing_example}} if failure.failing_example is not None else {}),
    }


# A test method's instance, which Hypothesis prints first: no input of the test's.
_TEST_INSTANCE = re.compile(r"(?<=\( )self=<[^<>]*>, ")
# How much of a failing input a red line shows; the witness file holds all of it.
INPUT_SHOWN = 300


def shown_input(payload: Any) -> str:
    """A payload as one line of canonical JSON, cut at `INPUT_SHOWN` characters (pure)."""
    return _cut(canonical_bytes(payload).decode("utf-8"))


def _cut(text: str) -> str:
    if len(text) <= INPUT_SHOWN:
        return text
    return (
        f"{text[:INPUT_SHOWN]}... (cut at {INPUT_SHOWN} of {len(text)} characters: the witness file holds the "
        "whole input)"
    )


def shown_inputs(record: dict[str, Any]) -> dict[str, str | None]:
    """The shrunk input, and the unshrunk one where it differs, as red lines show them. A
    @given test's input is the failing example Hypothesis printed, on one line: its payload
    is a choice sequence only Hypothesis reads."""
    if "given" in record and record["given"]["failing_example"]:
        shown = " ".join(line.strip() for line in record["given"]["failing_example"].splitlines())
        return {"input": _cut(_TEST_INSTANCE.sub("", shown)), "unshrunk_input": None}
    differs = record["unshrunk"]["witness_hash"] != record["witness_hash"]
    return {
        "input": shown_input(record["payload"]),
        "unshrunk_input": shown_input(record["unshrunk"]["payload"]) if differs else None,
    }


def calls_before(record: dict[str, Any]) -> int:
    """How many calls preceded the witness's in check: one per history entry of properties;
    a pytest entry stands for the cases of a search (`protocol`) or a test run once."""
    if "given" not in record:
        return len(record["history"])
    return sum(entry["payload"]["calls"] if "search" in entry["payload"] else 1 for entry in record["history"])


def file_name(record: dict[str, Any]) -> str:
    return f"{file_stem(record['assertion_id'])}.{record['witness_hash'][:12]}.json"


# A pytest node id's stem: its module path and its names, each part escaped so that the
# stem says which test it is and no two node ids share one. `~` + two hex digits is a byte
# of the id's UTF-8 outside the part's own characters, `.` joins path components and
# names, `--` parts the module from the names, the parameters keep their brackets, and a
# stem too long for a file name ends in `~~` and a digest of the whole id.
_PLAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_PLAIN_PARAMETERS = _PLAIN | frozenset(".,=+@[]-")
_LONGEST_STEM = 160


def file_stem(assertion_id: str) -> str:
    """A witness file name's first part (pure): a property's name as it is; a pytest node id
    (`tests/test_cart.py::TestCart::test_total[eur]`) as `tests.test_cart--TestCart.test_total[eur]`:
    readable, deterministic and one-to-one (see above)."""
    if ASSERTION_ID.match(assertion_id):
        return assertion_id
    path, _, rest = assertion_id.partition("::")
    names, bracket, parameters = rest.partition("[")
    stem = (
        ".".join(_escaped(part, _PLAIN) for part in path.removesuffix(".py").split("/"))
        + "--"
        + ".".join(_escaped(name, _PLAIN) for name in names.split("::"))
        + _escaped(bracket + parameters, _PLAIN_PARAMETERS)
    )
    if len(stem) > _LONGEST_STEM or not path.endswith(
        ".py"
    ):  # (every node id's module ends so; anything else is kept apart)
        stem = f"{stem[:_LONGEST_STEM - 34].rstrip('~')}~~{hashlib.sha256(assertion_id.encode()).hexdigest()[:32]}"
    return stem


def _escaped(text: str, plain: frozenset[str]) -> str:
    return "".join(
        c if c in plain else "".join(f"~{byte:02X}" for byte in c.encode("utf-8", "surrogatepass")) for c in text
    )


def load(path: Path) -> dict[str, Any]:
    """A schema-valid witness whose hashes match its payloads and its file name."""
    record = store.load_artifact(path, "witness")
    if payload_hash(record["payload"]) != record["witness_hash"]:
        raise WitnessGateError(f"{path}: /witness_hash: does not match the payload (payload edited?)")
    if payload_hash(record["unshrunk"]["payload"]) != record["unshrunk"]["witness_hash"]:
        raise WitnessGateError(f"{path}: /unshrunk/witness_hash: does not match the unshrunk payload")
    if path.name != file_name(record):
        raise WitnessGateError(
            f"{path}: file name does not match its assertion id and witness hash (expected {file_name(record)})"
        )
    if "condition" in record:  # replayed under it: held to what a declaration may say
        conditions.check_condition(record["condition"], f"{path}: /condition")
    return record


def load_directory(directory: Path, lock: dict[str, Any]) -> list[tuple[Path, dict[str, Any]]]:
    """Every witness in `directory`, sorted by file name, all of the lock's fixture."""
    if directory.is_symlink() or not directory.is_dir():
        raise WitnessGateError(f"{directory}: witness directory not found (or not a plain directory)")
    witnesses = []
    for path in sorted(directory.iterdir()):
        if path.name.startswith("."):
            continue  # an interrupted atomic write's temp file, never a witness
        if not FILE_NAME.match(path.name):
            raise WitnessGateError(
                f"{path}: not a witness file name (<property name or escaped test id>.<12 hex>.json)"
            )
        record = load(path)
        if record["fixture_digest"] != lock["fixture"]["sha256"]:
            raise WitnessGateError(
                f"{path}: /fixture_digest: witness of another fixture than the lock's; re-run check under this pin"
            )
        witnesses.append((path, record))
    return witnesses


def index(directory: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """The named witnesses of `directory`, by file name (each checked as `load` does)."""
    return {name: load(directory / name) for name in names}
