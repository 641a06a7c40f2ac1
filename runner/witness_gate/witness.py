"""Witness records (spec section 2): a retained failing payload and its hash.

A witness names its property module by repository path and source digest, so the
replay can load exactly the oracle that rejected the payload, or notice it moved.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import conditions, schemas, seeds, store
from witness_gate.canonical import canonical_bytes, payload_hash
from witness_gate.errors import WitnessGateError
from witness_gate.properties import ASSERTION_ID

SCHEMA_VERSION = 3
ORDERED_SCHEMA_VERSION = 4  # adds `directory_order`
# The witness hash covers the declared condition: written exactly for a witness found under
# one other than the fixed environment. A payload that fails under two declared conditions
# is then two witnesses: kept as one, the first condition's `flake` stood in for a later
# one's `regression`, and a base's freeze of the flake covered it (an adversarial review).
CONDITION_BOUND_SCHEMA_VERSION = 5
# A property's name, or a pytest node id's escaped stem (`file_stem`), then the witness
# hash's first 12 digits: the pattern the report schema gives a witness file, read from it.
FILE_NAME = re.compile(
    json.loads(schemas.schema_text("report"))["properties"]["witnesses"]["items"]["properties"]["file"]["pattern"]
)


@dataclass(frozen=True)
class Call:
    """One property call as the runner recorded it: the payload, the global `random`
    seed it ran under, and the calls that preceded it in the same process. A witness
    holds two: its shrunk call and its unshrunk one."""

    payload: Any
    random_seed: int
    history: tuple[dict[str, Any], ...]  # entries as the worker replays them, passed on as they are
    # The declared condition the hash covers, with the payload ({}: the payload alone; see
    # `CONDITION_BOUND_SCHEMA_VERSION`).
    bound_condition: dict[str, str] = dataclasses.field(default_factory=dict)

    # Computed once, not stored: the hash names the witness and is read at every step,
    # and a payload may be large. `read` refuses a file whose recorded hash differs.
    @functools.cached_property
    def witness_hash(self) -> str:
        return identity_hash(self.payload, self.bound_condition)

    @classmethod
    def from_json(cls, record: dict[str, Any], bound_condition: dict[str, str]) -> Call:
        return cls(record["payload"], record["random_seed"], tuple(record["history"]), bound_condition)

    def to_json(self) -> dict[str, Any]:
        return {
            "payload": self.payload,
            "witness_hash": self.witness_hash,
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
    directory_order: int = seeds.AS_LISTED  # the order directories listed in (a search leg's: `seeds.search_legs`)


@dataclass(frozen=True)
class PropertySource:
    path: str  # repository-relative
    sha256: str  # of the module's source bytes
    lines: dict[str, int]  # assertion id -> line of its definition


@dataclass(frozen=True)
class PropertyModule:
    """The module that defines a witness's assertion, as it was when the assertion failed."""

    path: str  # repository-relative
    sha256: str  # of the module's source bytes
    line: int  # of the assertion's definition


@dataclass(frozen=True)
class Witness:
    """A witness file as the deciding side reads it (the schema says what each field
    means). Made once, by `read` from the checked file or by `build` from a failure;
    `to_json` gives back the file's record exactly, so its bytes and hash never change."""

    schema_version: int  # as read: a version 2 witness is written back as one
    assertion_id: str
    fixture_digest: str
    shrunk: Call  # the file's top-level payload, random_seed and history
    unshrunk: Call  # the first failing call of the search
    hash_secret: int
    origin: str
    expect: str
    fully_shrunk: bool
    seed: int | None
    # The protocol's evidence record (`protocol.failure_evidence`), the shape replays report too.
    evidence: dict[str, Any]
    property_module: PropertyModule
    generator_version: int
    hypothesis_version: str
    condition: dict[str, str] | None  # None when the lock declares no conditions (the file has no `condition`)
    failing_example: str | None  # a @given test's, as Hypothesis printed it (`given`); None for a property
    directory_order: int  # as listed (0) unless a search leg found it under another (the file's `directory_order`)

    @property
    def witness_hash(self) -> str:
        """The witness's name in file names, reports and freezes: its shrunk payload's hash."""
        return self.shrunk.witness_hash

    @property
    def file_name(self) -> str:
        return file_name(self.assertion_id, self.witness_hash)

    @classmethod
    def from_json(cls, record: dict[str, Any]) -> Witness:
        """From a schema-valid record (`read` checks it, its hashes and its file name)."""
        module = record["property"]
        bound = record["condition"] if record["schema_version"] == CONDITION_BOUND_SCHEMA_VERSION else {}
        return cls(
            schema_version=record["schema_version"],
            assertion_id=record["assertion_id"],
            fixture_digest=record["fixture_digest"],
            shrunk=Call.from_json(record, bound),
            unshrunk=Call.from_json(record["unshrunk"], bound),
            hash_secret=record["hash_secret"],
            origin=record["origin"],
            expect=record["expect"],
            fully_shrunk=record["fully_shrunk"],
            seed=record["seed"],
            evidence=record["evidence"],
            property_module=PropertyModule(module["path"], module["sha256"], module["line"]),
            generator_version=record["generator_version"],
            hypothesis_version=record["hypothesis_version"],
            condition=record.get("condition"),
            failing_example=record["given"]["failing_example"] if "given" in record else None,
            directory_order=record.get("directory_order", seeds.AS_LISTED),
        )

    def to_json(self) -> dict[str, Any]:
        """The witness file's record (`store.save_artifact` writes it canonically)."""
        return {
            "schema_version": self.schema_version,
            "assertion_id": self.assertion_id,
            "fixture_digest": self.fixture_digest,
            **self.shrunk.to_json(),
            "unshrunk": self.unshrunk.to_json(),
            "hash_secret": self.hash_secret,
            "origin": self.origin,
            "expect": self.expect,
            "fully_shrunk": self.fully_shrunk,
            "seed": self.seed,
            "evidence": self.evidence,
            "property": dataclasses.asdict(self.property_module),
            "generator_version": self.generator_version,
            "hypothesis_version": self.hypothesis_version,
            **({"condition": self.condition} if self.condition is not None else {}),
            **({"given": {"failing_example": self.failing_example}} if self.failing_example is not None else {}),
            **({"directory_order": self.directory_order} if self.directory_order != seeds.AS_LISTED else {}),
        }


def identity_hash(payload: Any, condition: dict[str, str]) -> str:
    """A witness's hash (pure): its payload's, or under a declared condition other than the
    fixed environment (`condition` not empty), the condition's and the payload's together,
    as one canonical object. The fixed environment's witness keeps its payload's hash, so a
    suite that declares conditions later keeps its freezes."""
    return payload_hash({"condition": condition, "payload": payload} if condition else payload)


def build(source: PropertySource, lock: dict[str, Any], failure: Failure) -> Witness:
    condition = failure.condition if "conditions" in lock else None
    # A version above 3 only where it says more: a witness found under the fixed environment,
    # as the file system lists, is version 3, byte for byte.
    if condition:
        version = CONDITION_BOUND_SCHEMA_VERSION
    elif failure.directory_order != seeds.AS_LISTED:
        version = ORDERED_SCHEMA_VERSION
    else:
        version = SCHEMA_VERSION
    bound = condition or {}
    return Witness(
        schema_version=version,
        assertion_id=failure.assertion_id,
        fixture_digest=lock["fixture"]["sha256"],
        shrunk=dataclasses.replace(failure.final, bound_condition=bound),
        unshrunk=dataclasses.replace(failure.original, bound_condition=bound),
        hash_secret=failure.hash_secret,
        origin=failure.origin,
        expect="reject" if failure.origin == "reject" else "accept",
        fully_shrunk=failure.fully_shrunk,
        seed=failure.seed,
        evidence=failure.evidence,
        property_module=PropertyModule(source.path, source.sha256, source.lines.get(failure.assertion_id, 1)),
        generator_version=lock["generator_version"],
        hypothesis_version=lock["hypothesis_version"],
        condition=condition,
        failing_example=failure.failing_example,
        directory_order=failure.directory_order,
    )


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


def shown_inputs(record: Witness) -> dict[str, str | None]:
    """The shrunk input, and the unshrunk one where it differs, as red lines show them. A
    @given test's input is the failing example Hypothesis printed, on one line: its payload
    is a choice sequence only Hypothesis reads."""
    if record.failing_example:
        shown = " ".join(line.strip() for line in record.failing_example.splitlines())
        return {"input": _cut(_TEST_INSTANCE.sub("", shown)), "unshrunk_input": None}
    differs = record.unshrunk.witness_hash != record.witness_hash
    return {
        "input": shown_input(record.shrunk.payload),
        "unshrunk_input": shown_input(record.unshrunk.payload) if differs else None,
    }


def calls_before(record: Witness) -> int:
    """How many calls preceded the witness's in check: one per history entry of properties;
    a pytest entry stands for the cases of a search (`protocol`) or a test run once."""
    if record.failing_example is None:  # a property's
        return len(record.shrunk.history)
    return sum(entry["payload"]["calls"] if "search" in entry["payload"] else 1 for entry in record.shrunk.history)


def file_name(assertion_id: str, witness_hash: str) -> str:
    return f"{file_stem(assertion_id)}.{witness_hash[:12]}.json"


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


def read(path: Path) -> Witness:
    """A schema-valid witness whose hashes match its payloads and its file name."""
    record = store.load_artifact(path, "witness")
    typed = Witness.from_json(record)
    if typed.witness_hash != record["witness_hash"]:
        covered = "condition and payload" if typed.shrunk.bound_condition else "payload"
        raise WitnessGateError(f"{path}: /witness_hash: does not match the {covered} (edited?)")
    if typed.unshrunk.witness_hash != record["unshrunk"]["witness_hash"]:
        raise WitnessGateError(f"{path}: /unshrunk/witness_hash: does not match the unshrunk payload")
    if path.name != typed.file_name:
        raise WitnessGateError(
            f"{path}: file name does not match its assertion id and witness hash (expected {typed.file_name})"
        )
    if typed.condition is not None:  # replayed under it: held to what a declaration may say
        conditions.check_condition(typed.condition, f"{path}: /condition")
    return typed


def load(path: Path) -> dict[str, Any]:
    """The record of a witness file, checked as `read` checks it: for whoever reads the
    file's own keys (the tests, the benchmarks)."""
    return read(path).to_json()


def load_directory(directory: Path, lock: dict[str, Any]) -> list[tuple[Path, Witness]]:
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
        record = read(path)
        if record.fixture_digest != lock["fixture"]["sha256"]:
            raise WitnessGateError(
                f"{path}: /fixture_digest: witness of another fixture than the lock's; re-run check under this pin"
            )
        witnesses.append((path, record))
    return witnesses


def index(directory: Path, names: list[str]) -> dict[str, Witness]:
    """The named witnesses of `directory`, by file name (each checked as `read` does)."""
    return {name: read(directory / name) for name in names}
