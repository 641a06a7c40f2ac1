"""Reliability and security figures for witness-gate, from real runs of its CLI.

    python bench/reliability.py [--seed N] [--kill-trials 200] [--fuzz-cases 1000]

(`./pants run bench/reliability.py -- --seed 7` under Pants.) Prints the seed and one
line per figure; exits 1 when a figure is not clean. tests/reliability/ runs the same
functions at a smaller scale on every CI run.
"""

from __future__ import annotations

import argparse
import ast
import concurrent.futures
import contextlib
import copy
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.sample_repo import Run, SampleRepo, add_flaky_property, copy_example  # noqa: E402

IMPL = "src/orders_app/pricing.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
LOCK = ".artifacts/fixture.lock"
WITNESSES = ".artifacts/witnesses"
REPORT = ".artifacts/classification.json"
FREEZE = ".artifacts/freeze.json"
CHANGED = "changed.txt"
VERDICT_FILES = {REPORT, ".artifacts/gate/gate.json", ".artifacts/gate/classification.json"}
IGNORED_IN_SNAPSHOT = (".hypothesis", "__pycache__")
# A small replay plan: these figures are about inputs and processes, not about the replay
# statistics (tests/runner/ covers those), and each red run pays for its replays.
PLAN = ("--replays", "2", "--replay-interpreters", "3")


@dataclass
class Figure:
    line: str
    problems: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.problems


# --- a repository in a known state -----------------------------------------------------


def base_state(directory: Path) -> SampleRepo:
    """The orders example with a regression and a flake, pinned, checked, classified, and
    the flake frozen: every artifact kind exists and is valid."""
    repo = copy_example(directory)
    repo.edit(IMPL, *BUG)
    add_flaky_property(repo)
    repo.configure("replay-timeout-seconds = 3")
    assert repo.pin(*PLAN).code == 0
    repo.check()
    classified = repo.classify(IMPL)
    assert classified.code == 1, classified.stdout + classified.stderr
    flake = next(p for p in repo.witness_files() if p.name.startswith("prop_sometimes."))
    _recorded_flake_counts.append(_read_flake_counts(repo))
    frozen = freeze_cli(repo, flake, *flake_counts(repo))
    assert frozen.code == 0, frozen.stderr
    return repo


_recorded_flake_counts: list[tuple[str, str]] = []  # set by base_state: bad-input cases break the report itself


def flake_counts(repo: SampleRepo) -> tuple[str, str]:
    """The failures and runs classify recorded for the flake in the base state: the only
    counts a freeze takes (every copy of the base state replays the same seeds)."""
    return _recorded_flake_counts[-1]


def _read_flake_counts(repo: SampleRepo) -> tuple[str, str]:
    [entry] = [
        e for e in json.loads((repo.root / REPORT).read_text())["witnesses"] if e["assertion_id"] == "prop_sometimes"
    ]
    return str(entry["failures"]), str(entry["runs"])


def freeze_cli(repo: SampleRepo, witness: Path, failures: str, runs: str) -> Run:
    return repo.cli(
        "freeze",
        "--assertion",
        witness.name.split(".")[0],
        "--lock",
        LOCK,
        "--witness",
        str(witness.relative_to(repo.root)),
        "--failures",
        failures,
        "--runs",
        runs,
        "--expires-in-hours",
        "24",
        "--out",
        FREEZE,
    )


def snapshot(root: Path) -> dict[str, str]:
    files = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if (
            any(part in IGNORED_IN_SNAPSHOT for part in path.relative_to(root).parts)
            or not path.is_file()
            or path.is_symlink()
        ):
            continue
        files[relative] = hashlib.sha256(path.read_bytes()).hexdigest()
    return files


# --- 1. the bad-input catalogue -----------------------------------------------------------

COMMANDS = {
    "pin": lambda r: r.pin(*PLAN),
    "check": lambda r: r.check(),
    "classify": lambda r: r.cli("classify", "--lock", LOCK, "--witnesses", WITNESSES, "--diff-paths", CHANGED),
    "freeze": lambda r: freeze_cli(
        r, regression_witness(r) if not (r.root / "use-flake").exists() else flake_witness(r), *flake_counts(r)
    ),
    "verify": lambda r: r.cli(
        "verify", "--lock", LOCK, "--witnesses", WITNESSES, "--diff-paths", CHANGED, "--freeze", FREEZE
    ),
    "gate": lambda r: r.cli(
        "gate",
        "--fixture",
        "tests/fixtures/orders.json",
        "--generator-version",
        "3",
        "--properties",
        "tests/properties",
        "--diff-paths",
        CHANGED,
        "--freezes",
        ".artifacts/freezes",
        "--out",
        ".artifacts/gate",
        *PLAN,
    ),
}


def regression_witness(repo: SampleRepo) -> Path:
    return next(p for p in sorted((repo.root / WITNESSES).glob("prop_order_total_non_negative.*.json")))


def flake_witness(repo: SampleRepo) -> Path:
    return next(p for p in sorted((repo.root / WITNESSES).glob("prop_sometimes.*.json")))


def edit_json(
    relative: str | Callable[[SampleRepo], Path], change: Callable[[dict], Any]
) -> Callable[[SampleRepo], None]:
    def apply(repo: SampleRepo) -> None:
        path = relative(repo) if callable(relative) else repo.root / relative
        record = json.loads(path.read_text())
        result = change(record)
        path.write_text(json.dumps(record if result is None else result))

    return apply


def write_bytes(
    relative: str | Callable[[SampleRepo], Path], data: bytes | Callable[[bytes], bytes]
) -> Callable[[SampleRepo], None]:
    def apply(repo: SampleRepo) -> None:
        path = relative(repo) if callable(relative) else repo.root / relative
        path.write_bytes(data(path.read_bytes()) if callable(data) else data)

    return apply


def replace_with(relative: str, kind: str) -> Callable[[SampleRepo], None]:
    def apply(repo: SampleRepo) -> None:
        path = repo.root / relative
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        if kind == "symlink":
            (repo.root / "elsewhere").write_text("[]")
            path.symlink_to(repo.root / "elsewhere")
        elif kind == "directory":
            path.mkdir()
        elif kind == "missing":
            pass
        elif kind == "huge":
            with open(path, "wb") as handle:
                handle.truncate(1 << 30)  # 1 GiB, sparse

    return apply


def witness_renamed(repo: SampleRepo) -> None:
    path = regression_witness(repo)
    path.rename(path.with_name("prop_order_total_non_negative.000000000000.json"))


def freeze_time(created: timedelta, expires: timedelta) -> Callable[[dict], None]:
    def change(record: dict) -> None:
        now = datetime.now(timezone.utc)
        record["created_at"] = (now + created).strftime("%Y-%m-%dT%H:%M:%SZ")
        record["expires_at"] = (now + expires).strftime("%Y-%m-%dT%H:%M:%SZ")

    return change


def use_flake_and_gate_freezes(repo: SampleRepo) -> None:
    """Point the freeze command at the flake witness, and let gate read the freeze."""
    (repo.root / "use-flake").write_text("")
    (repo.root / ".artifacts/freezes").mkdir(exist_ok=True)
    shutil.copy(repo.root / FREEZE, repo.root / ".artifacts/freezes/flake.json")


def then(*steps: Callable[[SampleRepo], None]) -> Callable[[SampleRepo], None]:
    def apply(repo: SampleRepo) -> None:
        for step in steps:
            step(repo)

    return apply


def property_module(source: str) -> Callable[[SampleRepo], None]:
    return lambda repo: repo.write("tests/properties/zz_bad_props.py", source)


HEADER = "from hypothesis import strategies as st\nimport witness_gate\n"
HANG = (
    HEADER
    + "import time\n@witness_gate.property(payloads=st.integers(0, 9))\ndef prop_hangs(n):\n    while True:\n        "
    "time.sleep(0.05)\n"
)
LOUD_FAIL = (
    HEADER + "@witness_gate.property(payloads=st.integers(0, 9))\ndef prop_loud(n):\n    print('x' * (100 << 20))\n    "
    "return False\n"
)


@dataclass(frozen=True)
class Case:
    name: str
    setup: Callable[[SampleRepo], None]
    commands: tuple[str, ...]
    expect: str  # "refused": exit 2 in one line naming `mentions`; "red": exit 1 saying `mentions`
    mentions: str


def catalogue() -> list[Case]:
    lock, report, freeze = LOCK, REPORT, FREEZE
    lock_readers = ("check", "classify", "freeze", "verify")
    witness_readers = ("classify", "freeze", "verify")
    changed_readers = ("classify", "verify", "gate")
    cases = [
        Case(
            "lock: truncated JSON",
            write_bytes(lock, lambda b: b[: len(b) // 2]),
            lock_readers,
            "refused",
            "fixture.lock",
        ),
        Case("lock: not UTF-8", write_bytes(lock, b"\xff\xfe{}"), lock_readers, "refused", "fixture.lock"),
        Case("lock: wrong type", edit_json(lock, lambda r: r.update(replays="5")), lock_readers, "refused", "/replays"),
        Case(
            "lock: missing field",
            edit_json(lock, lambda r: r.pop("seed_schedule")),
            lock_readers,
            "refused",
            "fixture.lock",
        ),
        Case(
            "lock: extra field",
            edit_json(lock, lambda r: r.update(force=True)),
            lock_readers,
            "refused",
            "fixture.lock",
        ),
        Case(
            "lock: digest too short",
            edit_json(lock, lambda r: r["fixture"].update(sha256="ab" * 31)),
            lock_readers,
            "refused",
            "/fixture/sha256",
        ),
        Case(
            "lock: digest in upper case",
            edit_json(lock, lambda r: r["fixture"].update(sha256=r["fixture"]["sha256"].upper())),
            lock_readers,
            "refused",
            "/fixture/sha256",
        ),
        Case(
            "lock: NaN",
            write_bytes(lock, lambda b: b.replace(b'"generator_version": 3', b'"generator_version": NaN')),
            lock_readers,
            "refused",
            "fixture.lock",
        ),
        Case(
            "lock: duplicate key",
            write_bytes(lock, lambda b: b.replace(b'"replays": 2', b'"replays": 2, "replays": 1')),
            lock_readers,
            "refused",
            "duplicate key",
        ),
        Case(
            "lock: absolute fixture path",
            edit_json(lock, lambda r: r["fixture"].update(path="/etc/hostname")),
            lock_readers,
            "refused",
            "fixture.lock",
        ),
        Case(
            "lock: fixture path with ..",
            edit_json(lock, lambda r: r["fixture"].update(path="../orders.json")),
            lock_readers,
            "refused",
            "fixture.lock",
        ),
        Case(
            "lock: another fixture's digest",
            edit_json(lock, lambda r: r["fixture"].update(sha256="0" * 64)),
            ("check", "classify", "freeze"),
            "refused",
            "re-pin",
        ),
        Case(
            "lock: another fixture's digest, reviewed",
            edit_json(lock, lambda r: r["fixture"].update(sha256="5" * 64)),
            ("verify",),
            "red",
            "FAIL: lock matches fixture",
        ),
        Case(
            "lock: other Hypothesis version",
            edit_json(lock, lambda r: r.update(hypothesis_version="6.0.0")),
            ("check",),
            "refused",
            "re-pin",
        ),
        Case("lock: a symlink", replace_with(lock, "symlink"), lock_readers, "refused", "symlink"),
        Case("lock: a directory", replace_with(lock, "directory"), lock_readers, "refused", "not a regular file"),
        Case("lock: empty file", write_bytes(lock, b""), lock_readers, "refused", "fixture.lock"),
        Case(
            "witness: payload edited, hash kept",
            edit_json(regression_witness, lambda r: r.update(payload={"lines": [], "claimed_total": 0})),
            witness_readers,
            "refused",
            "does not match the payload",
        ),
        Case(
            "witness: of another fixture",
            edit_json(regression_witness, lambda r: r.update(fixture_digest="1" * 64)),
            witness_readers,
            "refused",
            "another fixture",
        ),
        Case(
            "witness: hash in upper case",
            edit_json(regression_witness, lambda r: r.update(witness_hash=r["witness_hash"].upper())),
            witness_readers,
            "refused",
            "/witness_hash",
        ),
        Case("witness: renamed file", witness_renamed, ("classify", "verify"), "refused", "file name does not match"),
        Case(
            "witness: truncated",
            write_bytes(regression_witness, lambda b: b[:40]),
            witness_readers,
            "refused",
            "invalid JSON",
        ),
        Case(
            "witness: extra field",
            edit_json(regression_witness, lambda r: r.update(trusted=True)),
            witness_readers,
            "refused",
            "prop_order_total_non_negative",
        ),
        Case(
            "witness: assertion id with /",
            edit_json(regression_witness, lambda r: r.update(assertion_id="a/b")),
            witness_readers,
            "refused",
            "/assertion_id",
        ),
        Case(
            "witness: assertion id with ..",
            edit_json(regression_witness, lambda r: r.update(assertion_id="..")),
            witness_readers,
            "refused",
            "/assertion_id",
        ),
        Case(
            "witness: assertion id with NUL",
            edit_json(regression_witness, lambda r: r.update(assertion_id="a\x00b")),
            witness_readers,
            "refused",
            "/assertion_id",
        ),
        Case(
            "witness: unshrunk hash mismatch",
            edit_json(regression_witness, lambda r: r["unshrunk"].update(witness_hash="2" * 64)),
            witness_readers,
            "refused",
            "/unshrunk/witness_hash",
        ),
        Case(
            "witness dir: a stray file",
            lambda r: r.write(f"{WITNESSES}/notes.txt", "hello"),
            ("classify", "verify"),
            "refused",
            "notes.txt",
        ),
        Case(
            "report: another fixture",
            edit_json(report, lambda r: r.update(fixture_digest="3" * 64)),
            ("freeze", "verify"),
            "refused",
            "another fixture",
        ),
        Case(
            "report: truncated",
            write_bytes(report, lambda b: b[:100]),
            ("freeze", "verify"),
            "refused",
            "classification.json",
        ),
        Case(
            "report: exit code 2",
            edit_json(report, lambda r: r.update(exit_code=2)),
            ("freeze", "verify"),
            "refused",
            "/exit_code",
        ),
        Case(
            "report: unknown label",
            edit_json(report, lambda r: r["witnesses"][0].update(label="fine")),
            ("freeze", "verify"),
            "refused",
            "/witnesses/0/label",
        ),
        Case(
            "freeze: expired",
            then(use_flake_and_gate_freezes, edit_json(freeze, freeze_time(timedelta(hours=-3), timedelta(hours=-1)))),
            ("verify",),
            "red",
            "expired at",
        ),
        Case(
            "freeze: failures == runs",
            edit_json(freeze, lambda r: r.update(failures=5, runs=5)),
            ("verify",),
            "red",
            "failures == runs",
        ),
        Case(
            "freeze: another witness",
            edit_json(freeze, lambda r: r.update(witness_hash="4" * 64)),
            ("verify",),
            "red",
            "points at no classified witness",
        ),
        Case(
            "freeze: created in the future",
            edit_json(freeze, freeze_time(timedelta(hours=2), timedelta(hours=3))),
            ("verify",),
            "red",
            "created in the future",
        ),
        Case(
            "freeze: longer than the maximum",
            edit_json(freeze, freeze_time(timedelta(hours=-1), timedelta(days=30))),
            ("verify",),
            "red",
            "maximum",
        ),
        Case(
            "freeze: not a date",
            edit_json(freeze, lambda r: r.update(expires_at="tomorrow")),
            ("verify",),
            "refused",
            "/expires_at",
        ),
        Case("freeze: truncated", write_bytes(freeze, lambda b: b[:30]), ("verify",), "refused", "freeze.json"),
        Case(
            "freeze: assertion id with /",
            edit_json(freeze, lambda r: r.update(assertion_id="x/y")),
            ("verify",),
            "refused",
            "/assertion_id",
        ),
        Case(
            "freeze: bad file in the gate's freeze dir",
            then(use_flake_and_gate_freezes, lambda r: r.write(".artifacts/freezes/bad.json", "{")),
            ("gate",),
            "refused",
            "bad.json",
        ),
        Case(
            "freeze: for a regression witness",
            edit_json(freeze, lambda r: None),
            ("freeze",),
            "refused",
            "disagree with classify",
        ),
        Case(
            "changed.txt: CRLF",
            lambda r: r.write(CHANGED, f"{IMPL}\r\n"),
            changed_readers,
            "refused",
            "carriage return",
        ),
        Case(
            "changed.txt: blank line",
            lambda r: r.write(CHANGED, f"{IMPL}\n\nREADME.md\n"),
            changed_readers,
            "refused",
            "line 2",
        ),
        Case(
            "changed.txt: ./ prefix",
            lambda r: r.write(CHANGED, f"./{IMPL}\n"),
            changed_readers,
            "refused",
            "not normalized",
        ),
        Case(
            "changed.txt: absolute path",
            lambda r: r.write(CHANGED, f"/{IMPL}\n"),
            changed_readers,
            "refused",
            "absolute path",
        ),
        Case(
            "changed.txt: .. segment",
            lambda r: r.write(CHANGED, "src/../src/x.py\n"),
            changed_readers,
            "refused",
            "not normalized",
        ),
        Case("changed.txt: not UTF-8", write_bytes(CHANGED, b"src/\xff.py\n"), changed_readers, "refused", "not UTF-8"),
        Case("changed.txt: NUL byte", write_bytes(CHANGED, b"src/a\x00.py\n"), changed_readers, "refused", "NUL"),
        Case(
            "changed.txt: trailing space",
            lambda r: r.write(CHANGED, f"{IMPL} \n"),
            changed_readers,
            "refused",
            "whitespace",
        ),
        Case(
            "fixture: a symlink",
            replace_with("tests/fixtures/orders.json", "symlink"),
            ("pin", "gate"),
            "refused",
            "symlink",
        ),
        Case(
            "fixture: a directory",
            replace_with("tests/fixtures/orders.json", "directory"),
            ("pin", "gate"),
            "refused",
            "not a regular file",
        ),
        Case("fixture: empty", write_bytes("tests/fixtures/orders.json", b""), ("pin", "gate"), "refused", "empty"),
        Case(
            "fixture: missing",
            replace_with("tests/fixtures/orders.json", "missing"),
            ("pin", "gate"),
            "refused",
            "not found",
        ),
        Case(
            "fixture: 1 GiB",
            replace_with("tests/fixtures/orders.json", "huge"),
            ("gate",),
            "red",
            "over the 67108864-byte limit",
        ),
        Case("properties: syntax error", property_module("def broken(:\n"), ("check", "gate"), "red", "SyntaxError"),
        Case(
            "properties: import error",
            property_module("import no_such_module_here\n"),
            ("check", "gate"),
            "red",
            "ModuleNotFoundError",
        ),
        Case("properties: hangs in a call", property_module(HANG), ("check", "gate"), "red", "prop_hangs"),
        Case(
            "properties: hangs at import",
            property_module("import time\nwhile True:\n    time.sleep(0.05)\n"),
            ("check", "gate"),
            "red",
            "loading the property module failed: the worker sent nothing for",
        ),
        Case(
            "properties: duplicate assertion id",
            property_module(
                HEADER + "@witness_gate.property(payloads=st.just({}))\ndef prop_sometimes(p):\n    return True\n"
            ),
            ("check", "gate"),
            "refused",
            "already defined",
        ),
        Case(
            "properties: payloads not a strategy",
            property_module(HEADER + "@witness_gate.property(payloads=[1, 2])\ndef prop_list(p):\n    return True\n"),
            ("check", "gate"),
            "red",
            "must be a Hypothesis strategy",
        ),
        Case(
            "properties: module is a symlink",
            lambda r: (r.root / "tests/properties/zz_link.py").symlink_to(r.root / IMPL),
            ("check",),
            "refused",
            "plain files",
        ),
        Case(
            "properties: calls sys.exit",
            property_module(
                HEADER + "import sys\n@witness_gate.property(payloads=st.integers(0, 9))\ndef prop_exits(n):\n    "
                "sys.exit(0)\n"
            ),
            ("check",),
            "red",
            "witness:",
        ),
        Case("properties: prints 100 MB and fails", property_module(LOUD_FAIL), ("check",), "red", "witness:"),
        Case(
            "config: unknown key", lambda r: r.configure("force = true"), ("classify", "gate"), "refused", "unknown key"
        ),
    ]
    return cases


def judge(
    case: Case, command: str, result: Run, before: dict[str, str], after: dict[str, str], root: Path | None = None
) -> list[str]:
    where = f"{case.name} / {command}"
    problems = []
    output = result.stdout + result.stderr
    if "Traceback" in output:
        problems.append(f"{where}: traceback")
    if len(result.stdout) > 100_000:
        problems.append(f"{where}: {len(result.stdout)} bytes on stdout")
    if case.expect == "refused":
        lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("witness-gate: replayed ")]
        if result.code != 2:
            problems.append(f"{where}: exit {result.code}, wanted 2 ({output.strip()[:200]})")
        elif len(lines) != 1 or case.mentions not in lines[0]:
            problems.append(f"{where}: error is not one line naming {case.mentions!r}: {result.stderr.strip()[:300]}")
        # A stale verdict may go, or be marked stale (store.mark_stale) in its place.
        written = {
            path
            for path, digest in after.items()
            if before.get(path) != digest
            and not (path in VERDICT_FILES and root is not None and _stale_marker((root / path).read_bytes()))
        }
        removed = set(before) - set(after) - VERDICT_FILES
        if written or removed:
            problems.append(f"{where}: files written or removed: {sorted(written | removed)[:5]}")
    else:
        if result.code != 1 or case.mentions not in output:
            problems.append(
                f"{where}: wanted exit 1 saying {case.mentions!r}, got {result.code}: {output.strip()[:300]}"
            )
    return problems


def bad_inputs(work: Path, every_command: bool = True) -> Figure:
    """Each input through every command that reads it; with `every_command` off (CI scale),
    through one of them, rotating, so every command still meets inputs."""
    base = base_state(work / "base")
    tried = refused = red = 0
    problems = []
    for index, case in enumerate(catalogue()):
        commands = case.commands if every_command else [case.commands[index % len(case.commands)]]
        for command in commands:
            repo = SampleRepo(work / f"case-{index}-{command}")
            shutil.copytree(base.root, repo.root, symlinks=True)
            case.setup(repo)
            before = snapshot(repo.root)
            result = COMMANDS[command](repo)
            found = judge(case, command, result, before, snapshot(repo.root), repo.root)
            problems.extend(found)
            tried += 1
            if not found:
                refused += case.expect == "refused"
                red += case.expect == "red"
            shutil.rmtree(repo.root)
    tracebacks = sum("traceback" in p for p in problems)
    writes = sum("files written" in p for p in problems)
    line = (
        f"bad inputs: {len(catalogue())} inputs, {tried} runs through the commands that read them, "
        f"{refused + red} handled ({refused} refused in one line with exit 2, {red} kept red with exit 1), "
        f"{tracebacks} tracebacks, {writes} files written"
    )
    return Figure(line, problems)


# --- 2. fuzzing the readers ---------------------------------------------------------------


def fuzz(work: Path, cases: int, seed: int) -> Figure:
    """Mutates valid artifacts with Hypothesis and feeds them to the readers in-process."""
    import jsonschema
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as seeded
    from hypothesis import strategies as st

    from witness_gate import freeze as freezes
    from witness_gate import lock as locks
    from witness_gate import schemas, store, witness
    from witness_gate.errors import WitnessGateError

    base = base_state(work / "fuzz-base")
    originals = {
        "lock": base.root / LOCK,
        "witness": regression_witness(base),
        "freeze": base.root / FREEZE,
        "report": base.root / REPORT,
    }
    readers = {
        "lock": locks.load,
        "witness": witness.load,
        "freeze": freezes.load,
        "report": lambda p: store.load_artifact(p, "report"),
    }
    oracles = {
        name: jsonschema.Draft202012Validator(
            json.loads(schemas.schema_text(name)), format_checker=jsonschema.FormatChecker()
        )
        for name in originals
    }
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=20) | st.floats(allow_nan=False),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=6,
    )
    counts = {"cases": 0, "crashes": 0, "accepted_invalid": 0}
    problems: list[str] = []

    def mutate(data: st.DataObject, record: Any) -> Any:
        record = copy.deepcopy(record)
        for _ in range(data.draw(st.integers(1, 3))):
            containers = [record]
            node = record
            while isinstance(node, (dict, list)) and node and data.draw(st.booleans()):
                key = data.draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
                containers.append(node[key])
                node = node[key]
            target = containers[-1] if isinstance(containers[-1], (dict, list)) else containers[-2]
            if isinstance(target, dict) and target:
                key = data.draw(st.sampled_from(sorted(target)))
                action = data.draw(st.sampled_from(["delete", "replace", "add"]))
                if action == "delete":
                    del target[key]
                elif action == "replace":
                    target[key] = data.draw(json_values)
                else:
                    target[data.draw(st.text(max_size=8))] = data.draw(json_values)
            elif isinstance(target, list):
                target.append(data.draw(json_values))
        return record

    @seeded(seed)
    @settings(
        max_examples=cases, database=None, deadline=None, suppress_health_check=list(HealthCheck), derandomize=False
    )
    @given(st.data(), st.sampled_from(sorted(originals)), st.sampled_from(["json", "bytes"]))
    def one(data: st.DataObject, kind: str, level: str) -> None:
        original = originals[kind]
        target = work / "fuzz" / original.name
        target.parent.mkdir(parents=True, exist_ok=True)
        if level == "json":
            mutated = mutate(data, json.loads(original.read_text()))
            raw = json.dumps(mutated, allow_nan=True).encode()
        else:
            raw = bytearray(original.read_bytes())
            for _ in range(data.draw(st.integers(1, 4))):
                position = data.draw(st.integers(0, max(0, len(raw) - 1)))
                raw[position : position + 1] = data.draw(st.binary(max_size=3))
            raw = bytes(raw)
        target.write_bytes(raw)
        counts["cases"] += 1
        try:
            record = readers[kind](target)
        except WitnessGateError:
            return
        except Exception as error:  # a reader that crashes instead of refusing
            counts["crashes"] += 1
            problems.append(f"{kind}: {type(error).__name__}: {error}"[:300])
            return
        try:
            parsed = json.loads(raw)
        except ValueError:
            parsed = None
        if parsed is None or not oracles[kind].is_valid(parsed) or record != parsed:
            counts["accepted_invalid"] += 1
            problems.append(f"{kind}: accepted {raw[:120]!r}")

    one()
    line = f"fuzz: {counts['cases']} cases, {counts['crashes']} crashes, {counts['accepted_invalid']} accepted invalid"
    return Figure(line, problems)


# --- 3. kill -9 while writing ---------------------------------------------------------------


_WRITER = """
import json, sys
from pathlib import Path
from witness_gate import store
records = json.loads(Path(sys.argv[1]).read_text())
out = Path(sys.argv[2])
while True:
    for schema, name, record in records:
        store.save_artifact(out / name, schema, record)
"""


def _big_witness(record: dict) -> dict:
    """The witness with a payload of about a megabyte (hashes kept right), to widen the
    window in which a kill lands mid-write."""
    from witness_gate import witness
    from witness_gate.canonical import payload_hash

    big = {"lines": [{"qty": i % 50, "price": i} for i in range(40_000)], "claimed_total": 0}
    record = {**record, "payload": big, "witness_hash": payload_hash(big)}
    record["unshrunk"] = {"payload": big, "witness_hash": payload_hash(big)}
    return {**record, "_name": witness.file_name(record["assertion_id"], record["witness_hash"])}


def kill_nine(work: Path, trials: int, seed: int) -> Figure:
    """Half the trials kill a real command (check, classify, freeze) at a random moment;
    half kill a process that does nothing but write artifacts, so kills land mid-write."""
    from witness_gate import freeze as freezes
    from witness_gate import store, witness
    from witness_gate.errors import WitnessGateError

    rng = random.Random(seed)
    base = base_state(work / "kill-base")
    flake = flake_witness(base).relative_to(base.root)
    commands = {
        "check": ["check", "--lock", LOCK, "--properties", "tests/properties", "--out", "kill/witnesses"],
        "classify": [
            "classify",
            "--lock",
            LOCK,
            "--witnesses",
            WITNESSES,
            "--diff-paths",
            CHANGED,
            "--out",
            "kill/classification.json",
        ],
        "freeze": [
            "freeze",
            "--assertion",
            "prop_sometimes",
            "--lock",
            LOCK,
            "--witness",
            str(flake),
            "--failures",
            flake_counts(base)[0],
            "--runs",
            flake_counts(base)[1],
            "--expires-in-hours",
            "24",
            "--out",
            "kill/freeze.json",
        ],
    }
    big = _big_witness(json.loads(regression_witness(base).read_text()))
    name = big.pop("_name")
    records = [
        ["witness", f"witnesses/{name}", big],
        ["report", "classification.json", json.loads((base.root / REPORT).read_text())],
        ["freeze", "freeze.json", json.loads((base.root / FREEZE).read_text())],
        ["lock", "fixture.lock", json.loads((base.root / LOCK).read_text())],
    ]
    (work / "records.json").write_text(json.dumps(records))
    writer = [sys.executable, "-c", _WRITER, str(work / "records.json"), "kill"]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(base.root / ".hypothesis"),
    }
    durations = {name: _duration(base.root, env, argv) for name, argv in commands.items()}
    torn, leftovers = [], 0
    readers = {
        "witnesses": witness.load,
        "freeze.json": freezes.load,
        "classification.json": lambda p: store.load_artifact(p, "report"),
        "fixture.lock": lambda p: store.load_artifact(p, "lock"),
    }
    for trial in range(trials):
        shutil.rmtree(base.root / "kill", ignore_errors=True)
        if trial % 2:
            label, argv, delay = "writer", writer, rng.uniform(0.3, 1.0)
        else:
            label = rng.choice(sorted(commands))
            argv, delay = (
                [sys.executable, "-m", "witness_gate", *commands[label]],
                rng.uniform(0, durations[label] * 1.1),
            )
        process = subprocess.Popen(
            argv, cwd=base.root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        time.sleep(delay)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        for path in sorted((base.root / "kill").rglob("*")) if (base.root / "kill").exists() else []:
            if not path.is_file():
                continue
            if path.name.startswith("."):
                leftovers += 1  # an interrupted write's temp file: hidden, never read as an artifact
                continue
            try:
                readers["witnesses" if path.parent.name == "witnesses" else path.name](path)
            except WitnessGateError as error:
                torn.append(f"trial {trial} ({label}): {error}"[:300])
    line = (
        f"kill -9: {trials} trials, {len(torn)} torn or partial files ({leftovers} interrupted write(s) left a "
        "hidden temp file, never read)"
    )
    return Figure(line, torn)


def _duration(root: Path, env: dict[str, str], argv: list[str]) -> float:
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "witness_gate", *argv], cwd=root, env=env, capture_output=True)
    shutil.rmtree(root / "kill", ignore_errors=True)
    return time.monotonic() - started


# --- 3b. a kill inside every write window, made certain ------------------------------------

SHIM_SOURCE = ROOT / "bench" / "crash_shim.c"
CRASH = "crash"  # every command of the crash figure writes under this directory of the sample repository


class NoCompiler(RuntimeError):
    """No C compiler to build the shim with (tests/reliability: a failure in CI, else a skip)."""


def build_shim(work: Path) -> Path:
    """Compiles bench/crash_shim.c with the host's cc."""
    search = os.environ.get("PATH") or os.defpath
    compiler = shutil.which("cc", path=search) or shutil.which("gcc", path=search)
    if compiler is None:
        raise NoCompiler(
            f"no C compiler (cc) on {search}: the crash figure compiles {SHIM_SOURCE.name} at run time; install one "
            "(apt-get install gcc)"
        )
    shim = work / "crash_shim.so"
    built = subprocess.run(
        [compiler, "-shared", "-fPIC", "-O2", "-o", str(shim), str(SHIM_SOURCE), "-ldl"],
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": search},
    )
    if built.returncode != 0:
        raise RuntimeError(f"{compiler} could not build {SHIM_SOURCE.name}: {built.stderr.strip()[:500]}")
    return shim


def visible_files(area: Path) -> dict[str, bytes]:
    """What a reader of `area` sees: every regular file whose path below `area` has no
    hidden component (a temp file or a staging directory is hidden, and never read)."""
    found = {}
    for path in sorted(area.rglob("*")) if area.is_dir() else []:
        relative = path.relative_to(area)
        if any(part.startswith(".") for part in relative.parts) or path.is_symlink() or not path.is_file():
            continue
        with contextlib.suppress(FileNotFoundError):
            found[relative.as_posix()] = path.read_bytes()
    return found


def complete_artifact(relative: str, data: bytes, scratch: Path) -> str | None:
    """None when `data` is a whole artifact of the kind its name says (it parses and its
    schema accepts it), else the problem."""
    import xml.etree.ElementTree as ElementTree

    from witness_gate import freeze as freezes
    from witness_gate import store, witness
    from witness_gate.errors import WitnessGateError

    path = scratch / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    name, parent = path.name, path.parent.name
    try:
        if name.endswith(".xml"):
            ElementTree.fromstring(data)
        elif name.endswith(".sarif"):
            if json.loads(data).get("version") != "2.1.0":
                return "not a SARIF 2.1.0 log"
        elif name.endswith(".md"):
            if not data.decode().endswith("\n"):
                return "a Markdown summary that does not end its last line"
        elif parent == "witnesses":
            witness.load(path)
        elif name == "freeze.json":
            freezes.load(path)
        elif name.endswith(".lock") or name in ("classification.json", "gate.json", "review.json"):
            kind = {"classification.json": "report", "gate.json": "gate", "review.json": "review"}.get(name, "lock")
            store.load_artifact(path, kind)
        else:
            return "a file no command of the figure writes"
    except (WitnessGateError, ElementTree.ParseError, ValueError) as error:
        return str(error)[:300]
    finally:
        path.unlink()
    return None


@dataclass
class Stop:
    kind: str  # "write" (half the bytes in), "rename" (just before) or "renamed" (just after)
    path: str  # the file written, or the rename's destination
    source: str  # the rename's source ("" for a write)
    seen: dict[str, bytes]  # what a reader of the area saw while the process was stopped


@dataclass
class StoppedRun:
    code: int
    stops: list[Stop]
    killed: Stop | None
    after_kill: dict[str, bytes]
    stderr: str


def run_stopped(
    argv: list[str], cwd: Path, env: dict[str, str], shim: Path, area: Path, kill: Callable[[Stop], bool]
) -> StoppedRun:
    """Runs `argv` with the shim, stopping it in every write window under `area` (staging
    directories and temp files inside it included); at each stop a reader's view of `area`
    is recorded, then the run goes on, or is killed with SIGKILL there when
    `kill(stop)` says so."""
    import socket

    area.mkdir(parents=True, exist_ok=True)
    watched = area.resolve()
    ours, theirs = socket.socketpair()
    environment = {
        **env,
        "LD_PRELOAD": str(shim),
        "WG_CRASH_FD": str(theirs.fileno()),
        "WG_CRASH_ROOT": str(watched),
        "WG_CRASH_PARENT": str(os.getpid()),
    }
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(
            argv, cwd=cwd, env=environment, pass_fds=[theirs.fileno()], stdout=subprocess.DEVNULL, stderr=errors
        )
        theirs.close()
        stops, killed, after_kill = [], None, {}
        with ours, ours.makefile("rb") as lines:
            for line in lines:
                kind, first, second = line.decode().rstrip("\n").split("\t")
                path, source = (first, "") if kind == "write" else (second, first)
                stop = Stop(kind, path, source, visible_files(area))
                stops.append(stop)
                if kill(stop):
                    process.kill()
                    process.wait()
                    killed, after_kill = stop, visible_files(area)
                    break
                ours.sendall(b"c")
        code = process.wait(timeout=600)
        errors.seek(0)
        return StoppedRun(code, stops, killed, after_kill, errors.read().decode(errors="replace")[-2000:])


def judge_stopped(
    name: str, run: StoppedRun, area: Path, before: dict[str, bytes], scratch: Path, verdict_names: tuple[str, ...]
) -> list[str]:
    """The store's promise at every stop: each file a reader sees is the complete previous
    version or the complete new one (absent, or a whole stale marker, is allowed); a verdict (gate.json, review.json)
    in its new version comes with every file of its run; the new files were put in place by
    a rename; a killed run died of the signal, there."""
    problems = []
    final = None if run.killed else visible_files(area)
    complete: dict[tuple[str, bytes], str | None] = {}

    def whole(relative: str, data: bytes) -> str | None:
        if (relative, data) not in complete:
            complete[(relative, data)] = complete_artifact(relative, data, scratch)
        return complete[(relative, data)]

    if final is not None:
        if run.code not in (0, 1):
            problems.append(f"{name}: exit {run.code}: {run.stderr.strip()[-300:]}")
        for relative, data in final.items():
            if whole(relative, data) is not None:
                problems.append(f"{name}: the finished run left {relative} invalid: {whole(relative, data)}")
    elif run.killed is not None and run.code != -signal.SIGKILL:  # no final files: the run was killed
        problems.append(
            f"{name}: the kill at {run.killed.kind} of {run.killed.path} did not kill the run (exit {run.code})"
        )
    views = [(f"stopped at {stop.kind} of {stop.path}", stop.seen) for stop in run.stops]
    if run.killed:
        views.append((f"after the kill at {run.killed.kind} of {run.killed.path}", run.after_kill))
    for where, seen in views:
        for relative, data in seen.items():
            if data == before.get(relative) or _stale_marker(data):
                continue
            # A finished run's new version is known byte for byte; a killed run's new version
            # must at least be whole.
            if (data != final.get(relative)) if final is not None else (whole(relative, data) is not None):
                problems.append(
                    f"{name}: {where}: {relative} is neither the previous nor a complete new version ({len(data)} "
                    "bytes)"
                )
        for verdict in verdict_names if final is not None else ():
            assert final is not None
            prefix = verdict.rpartition("/")[0] + "/"
            if verdict in seen and seen[verdict] == final.get(verdict) and seen[verdict] != before.get(verdict):
                behind = [r for r, d in final.items() if r.startswith(prefix) and seen.get(r) != d]
                if behind:
                    problems.append(
                        f"{name}: {where}: the new {verdict} is visible before {', '.join(behind[:3])} of its run"
                    )
    if final is not None:
        renamed = [Path(stop.path) for stop in run.stops if stop.kind == "renamed"]
        for relative, data in final.items():
            target = area.resolve() / relative
            if data != before.get(relative) and not any(
                target == moved or moved in target.parents for moved in renamed
            ):
                problems.append(f"{name}: {relative} was written in place, not renamed into place")
    return problems


def _stale_marker(data: bytes) -> bool:
    """A whole record that stands in for an artifact an earlier run left (`store.mark_stale`,
    where the store has it): every reader refuses it in one line, as it would a missing file."""
    from witness_gate import store

    key = getattr(store, "STALE_KEY", None)
    try:
        record = json.loads(data)
    except ValueError:
        return False
    return key is not None and isinstance(record, dict) and list(record) == [key] and isinstance(record[key], str)


def crash_windows(work: Path, shim: Path | None = None) -> Figure:
    """Every command that writes an artifact, run with bench/crash_shim.c: the process is
    stopped in every write window (half of a write's bytes in the file; just before and
    just after each rename into the output area) while a reader looks at the outputs. Each
    command runs twice: fresh, then (after every command's first run) over its previous
    outputs, killed with SIGKILL in a chosen window (mid-write, or just before a rename)."""
    shim = shim or build_shim(work)
    repo = copy_example(work / "crash-repo")
    repo.edit(IMPL, *BUG)
    add_flaky_property(repo)
    repo.configure("replay-timeout-seconds = 3")
    (repo.root / CHANGED).write_text(f"{IMPL}\n")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path),
        "HYPOTHESIS_STORAGE_DIRECTORY": str(repo.root / ".hypothesis"),
    }
    area, lock = repo.root / CRASH, f"{CRASH}/fixture.lock"
    # (command, its arguments, where its second run is killed: the stop's kind and a pattern
    # of its path relative to the area, and the verdict files that must come last)
    commands: list[tuple[str, Callable[[], list[str]], tuple[str, str], tuple[str, ...]]] = [
        (
            "pin",
            lambda: [
                "pin",
                "--fixture",
                "tests/fixtures/orders.json",
                "--generator-version",
                "3",
                *PLAN,
                "--out",
                lock,
            ],
            ("write", "*fixture.lock*"),
            (),
        ),
        (
            "check",
            lambda: ["check", "--lock", lock, "--properties", "tests/properties", "--out", f"{CRASH}/witnesses"],
            ("write", "witnesses/*prop_sometimes.*"),
            (),
        ),
        (
            "classify",
            lambda: [
                "classify",
                "--lock",
                lock,
                "--witnesses",
                f"{CRASH}/witnesses",
                "--diff-paths",
                CHANGED,
                "--out",
                f"{CRASH}/classification.json",
                "--junit-xml",
                f"{CRASH}/classify.junit.xml",
            ],
            ("write", "*classify.junit.xml*"),
            (),
        ),
        (
            "freeze",
            lambda: [
                "freeze",
                "--assertion",
                "prop_sometimes",
                "--lock",
                lock,
                "--witness",
                _flake_in(area),
                "--report",
                f"{CRASH}/classification.json",
                *_counts_in(area),
                "--expires-in-hours",
                "24",
                "--out",
                f"{CRASH}/freeze.json",
            ],
            ("rename", "freeze.json"),
            (),
        ),
        (
            "gate",
            lambda: [
                "gate",
                "--fixture",
                "tests/fixtures/orders.json",
                "--generator-version",
                "3",
                "--properties",
                "tests/properties/orders_props.py",
                "--diff-paths",
                CHANGED,
                "--freezes",
                f"{CRASH}/no-freezes",
                "--out",
                f"{CRASH}/gate",
                "--junit-xml",
                f"{CRASH}/gate.junit.xml",
                *PLAN,
            ],
            ("rename", "gate/gate.json"),
            ("gate/gate.json",),
        ),
    ]
    jobs = [(name, argv, repo.root, env, area, kill_at, verdicts) for name, argv, kill_at, verdicts in commands]
    review_area, review_argv, review_root = _review_setup(work / "crash-review")
    jobs.append(
        (
            "review",
            lambda: review_argv,
            review_root,
            {**env, "HYPOTHESIS_STORAGE_DIRECTORY": str(review_root / ".hypothesis")},
            review_area,
            ("rename", "review"),
            ("review/review.json",),
        )
    )
    problems, stops, kills, written = _control(work, shim, env), 0, [], set()
    for second in (False, True):  # every command fresh first (each reads the one before's outputs), then each again
        for name, argv, cwd, environment, watched, kill_at, verdicts in jobs:
            found, counted, killed, files = _stopped_run(
                name, argv, cwd, environment, shim, watched, work / "crash-scratch", kill_at, verdicts, second
            )
            problems += found
            stops += counted
            kills += killed
            written |= files
    torn = sum("neither the previous" in p or "in place" in p or "before" in p for p in problems)
    line = (
        f"crash windows: {len(written)} artifact files written by pin, check, classify, freeze, gate and review "
        "(JUnit, SARIF and summary included), "
        f"stopped {stops} times inside their write windows; {len(kills)} kill -9 inside a window ({', '.join(kills)}); "
        f"{torn} torn, partial, out-of-order or in-place files seen"
    )
    return Figure(line, problems)


def _control(work: Path, shim: Path, env: dict[str, str]) -> list[str]:
    """The figure's own check: a process that writes a lock in place must be caught torn."""
    area = work / "crash-control"
    writer = f"open('x.lock', 'wb').write({json.dumps({'control': list(range(100))}).encode()!r})"
    run = run_stopped([sys.executable, "-c", writer], area, env, shim, area, lambda stop: False)
    caught = [
        p for p in judge_stopped("control", run, area, {}, work / "crash-scratch", ()) if "neither the previous" in p
    ]
    return (
        []
        if caught
        else ["control: a lock written in place was not seen torn: the shim stopped nothing (is LD_PRELOAD honoured?)"]
    )


def _flake_in(area: Path) -> str:
    return str(next((area / "witnesses").glob("prop_sometimes.*.json")).relative_to(area.parent))


def _counts_in(area: Path) -> list[str]:
    [entry] = [
        e
        for e in json.loads((area / "classification.json").read_text())["witnesses"]
        if e["assertion_id"] == "prop_sometimes"
    ]
    return ["--failures", str(entry["failures"]), "--runs", str(entry["runs"])]


def _review_setup(directory: Path) -> tuple[Path, list[str], Path]:
    """A review of a regression; it writes DIRECTORY/out/review (the watched area is DIRECTORY/out)."""
    from support.review_repo import buggy, review_repo

    repo = review_repo(directory)
    buggy(repo)
    repo.commit("patch: a regression")
    area = directory / "out"
    return (
        area,
        [
            "review",
            "--base",
            "main",
            "--head",
            "patch",
            "--out",
            str(area / "review"),
            "--junit-xml",
            str(area / "review.junit.xml"),
            "--sarif",
            str(area / "review.sarif"),
            "--summary",
            str(area / "review.md"),
        ],
        repo.root,
    )


def _stopped_run(
    name: str,
    argv: Callable[[], list[str]],
    cwd: Path,
    env: dict[str, str],
    shim: Path,
    area: Path,
    scratch: Path,
    kill_at: tuple[str, str],
    verdicts: tuple[str, ...],
    second: bool,
) -> tuple[list[str], int, list[str], set[str]]:
    """The first run is stopped in every window; the second, over the first's outputs, is
    stopped in every window and killed in the one `kill_at` names."""
    import fnmatch

    label = "over its previous outputs" if second else "fresh"
    before = visible_files(area)
    try:
        arguments = argv()
    except (OSError, ValueError, KeyError, StopIteration) as error:
        return [f"{name} ({label}): its inputs are missing or broken: {type(error).__name__}: {error}"], 0, [], set()

    def kill(stop: Stop) -> bool:
        return (
            second
            and stop.kind == kill_at[0]
            and fnmatch.fnmatch(os.path.relpath(stop.path, area.resolve()), kill_at[1])
        )

    run = run_stopped([sys.executable, "-m", "witness_gate", *arguments], cwd, env, shim, area, kill)
    problems = judge_stopped(f"{name} ({label})", run, area, before, scratch, verdicts)
    written, kills = set(), []
    if not second:
        written = {f"{area.name}/{r}" for r, d in visible_files(area).items() if d != before.get(r)}
        for wanted in ("write", "rename"):
            if not any(stop.kind == wanted for stop in run.stops):
                problems.append(f"{name}: no {wanted} window under {area}: the figure cannot stop the run inside one")
    elif run.killed is None:
        problems.append(
            f"{name} ({label}): the run never reached the window it was to be killed in, {kill_at[0]} of {kill_at[1]} "
            f"(exit {run.code})"
        )
    else:
        where = "mid-write" if run.killed.kind == "write" else "before the rename"
        kills.append(f"{name}: {where} of {os.path.relpath(run.killed.path, area.resolve())}")
    return problems, len(run.stops), kills, written


# --- 4. concurrency --------------------------------------------------------------------------


def concurrency(work: Path, rounds: int) -> Figure:
    from witness_gate import witness
    from witness_gate.errors import WitnessGateError

    serial = copy_example(work / "serial")
    serial.edit(IMPL, *BUG)
    assert serial.pin(*PLAN).code == 0
    serial.check()
    expected = {p.name: p.read_bytes() for p in serial.witness_files()}
    problems, runs = [], 0
    for round_index in range(rounds):
        repo = copy_example(work / f"concurrent-{round_index}")
        repo.edit(IMPL, *BUG)
        assert repo.pin(*PLAN).code == 0
        (repo.root / CHANGED).write_text(f"{IMPL}\n")
        jobs = [
            repo.check,
            repo.check,
            repo.check,
            lambda: repo.cli("classify", "--lock", LOCK, "--witnesses", WITNESSES, "--diff-paths", CHANGED),
            lambda: repo.cli("classify", "--lock", LOCK, "--witnesses", WITNESSES, "--diff-paths", CHANGED),
        ]
        (repo.root / WITNESSES).mkdir(parents=True, exist_ok=True)
        with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
            results = list(pool.map(lambda job: job(), jobs))
        runs += len(jobs)
        for result in results:
            if result.code not in (0, 1) or "Traceback" in result.stderr:
                problems.append(f"round {round_index}: exit {result.code}: {result.stderr.strip()[:200]}")
        for path in repo.witness_files():
            try:
                witness.load(path)
            except WitnessGateError as error:
                problems.append(f"round {round_index}: corrupt {path.name}: {error}")
        got = {p.name: p.read_bytes() for p in repo.witness_files()}
        if got != expected:
            problems.append(
                f"round {round_index}: witness set {sorted(got)} differs from the serial run's {sorted(expected)}"
            )
        if (repo.root / REPORT).exists():
            try:
                json.loads((repo.root / REPORT).read_text())
            except ValueError:
                problems.append(f"round {round_index}: corrupt report")
    corrupt = sum("corrupt" in p for p in problems)
    same = "same witness set as a serial run" if not any("differs" in p for p in problems) else "WITNESS SETS DIFFER"
    return Figure(f"concurrent: {runs} runs, {corrupt} corrupt files, {same}", problems)


# --- 5. ways to silence a regression ---------------------------------------------------------


def bypass_attempts(work: Path) -> Figure:
    """Each attempt starts from a regression and tries to turn the gate green."""

    def fresh(name: str) -> SampleRepo:
        repo = copy_example(work / f"bypass-{name}")
        repo.edit(IMPL, *BUG)
        return repo

    def gate(repo: SampleRepo, *changed: str, extra: tuple[str, ...] = ()) -> Run:
        return repo.gate(*changed, extra=("--freezes", ".witness-gate/freezes", *PLAN, *extra))

    def forged_freeze(repo: SampleRepo, **fields: Any) -> None:
        row = repo.gate_json()["witnesses"][0]
        now = datetime.now(timezone.utc)
        record = {
            "schema_version": 1,
            "assertion_id": row["assertion_id"],
            "witness_hash": row["witness_hash"],
            "fixture_digest": repo.gate_json()["fixture_digest"],
            "failures": 2,
            "runs": 5,
            "created_at": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "expires_at": (now + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        repo.write(".witness-gate/freezes/forged.json", json.dumps({**record, **fields}))

    def edit_report_label(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        report_path = repo.root / ".artifacts/gate/classification.json"
        report = json.loads(report_path.read_text())
        report["witnesses"][0].update(label="flake", failures=2, runs=5)
        report.update(verdict="pass", exit_code=0)
        report_path.write_text(json.dumps(report))
        row = repo.gate_json()["witnesses"][0]
        repo.cli(
            "freeze",
            "--assertion",
            row["assertion_id"],
            "--lock",
            ".artifacts/gate/fixture.lock",
            "--witness",
            f".artifacts/gate/{row['file']}",
            "--report",
            ".artifacts/gate/classification.json",
            "--failures",
            "2",
            "--runs",
            "5",
            "--expires-in-hours",
            "24",
            "--out",
            ".witness-gate/freezes/from-forged-report.json",
        )
        return gate(repo, IMPL)

    def hand_written_freeze(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        forged_freeze(repo)
        return gate(repo, IMPL)

    def freeze_after_fixture_change(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        forged_freeze(repo)
        repo.edit(
            "tests/fixtures/orders.json",
            '{"lines": [], "claimed_total": 0}',
            '{"lines": [], "claimed_total": 0},\n  {"lines": [], "claimed_total": 0}',
        )
        return gate(repo, IMPL, "tests/fixtures/orders.json")

    def fewer_replays_in_the_patch(repo: SampleRepo) -> Run:
        assert repo.pin("--replays", "1").code == 0
        repo.check()
        return repo.classify(IMPL, LOCK)

    def delete_the_witness(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        for path in (repo.root / ".artifacts/gate/witnesses").glob("*.json"):
            path.unlink()
        return gate(repo, IMPL)

    def weaken_the_property(repo: SampleRepo) -> Run:
        repo.edit("tests/properties/orders_props.py", '    return total == order["claimed_total"]', "    return True")
        return gate(repo, IMPL, "tests/properties/orders_props.py")

    def swap_the_generator(repo: SampleRepo) -> Run:
        repo.edit(
            "tests/properties/orders_props.py",
            "st.integers(min_value=0, max_value=50)",
            "st.integers(min_value=0, max_value=3)",
        )
        return gate(repo, IMPL, "tests/properties/orders_props.py")

    def hide_the_oracle_edit(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        repo.edit("tests/properties/orders_props.py", '    return total == order["claimed_total"]', "    return True")
        return repo.classify(IMPL)  # a changed-file list that leaves the property out

    def check_only_mode(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        forged_freeze(repo)
        return gate(repo, IMPL, extra=("--check-only",))

    def freeze_a_regression(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        row = repo.gate_json()["witnesses"][0]
        return repo.cli(
            "freeze",
            "--assertion",
            row["assertion_id"],
            "--lock",
            ".artifacts/gate/fixture.lock",
            "--witness",
            f".artifacts/gate/{row['file']}",
            "--report",
            ".artifacts/gate/classification.json",
            "--failures",
            "60",
            "--runs",
            "60",
            "--expires-in-hours",
            "24",
            "--out",
            ".witness-gate/freezes/f.json",
        )

    def long_lived_freeze(repo: SampleRepo) -> Run:
        gate(repo, IMPL)
        now = datetime.now(timezone.utc)
        forged_freeze(repo, expires_at=(now + timedelta(days=3650)).strftime("%Y-%m-%dT%H:%M:%SZ"))
        return gate(repo, IMPL)

    attempts = {
        "edit the report's label, then freeze from it": edit_report_label,
        "hand-write a freeze": hand_written_freeze,
        "reuse a freeze after the fixture changed": freeze_after_fixture_change,
        "change the replay count in the lock within the patch": fewer_replays_in_the_patch,
        "delete the witness": delete_the_witness,
        "weaken the property in the same patch": weaken_the_property,
        "swap the generator in the same patch": swap_the_generator,
        "weaken the property and leave it out of the diff": hide_the_oracle_edit,
        "run the gate in check-only mode with a freeze": check_only_mode,
        "freeze with failures == runs": freeze_a_regression,
        "a ten-year freeze": long_lived_freeze,
    }
    problems = []
    for name, attempt in attempts.items():
        result = attempt(fresh(name.replace(" ", "-").replace("'", "")))
        if result.code == 0:
            problems.append(f"{name}: got through: {result.stdout.strip()[-300:]}")
        elif "Traceback" in result.stderr:
            problems.append(f"{name}: traceback")
    return Figure(
        f"bypass attempts: {len(attempts)} tried, {sum('got through' in p for p in problems)} got through", problems
    )


# --- 6. code from data -------------------------------------------------------------------------


def code_from_data(work: Path) -> Figure:
    """No artifact is ever executed: the runner has no eval/exec/pickle/marshal/yaml sites,
    and only modules inside the declared properties folder are imported."""
    banned_calls = {"eval", "exec", "compile", "__import__"}
    banned_modules = {"pickle", "marshal", "shelve", "yaml", "dill", "cloudpickle"}
    sites = []
    for path in sorted((ROOT / "runner" / "witness_gate").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in banned_calls:
                sites.append(f"{path.name}:{node.lineno}: {node.func.id}()")
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
                sites += [
                    f"{path.name}:{node.lineno}: import {name}"
                    for name in names
                    if name.split(".")[0] in banned_modules
                ]
    repo = copy_example(work / "outside")
    repo.write("elsewhere/outside_props.py", "raise SystemExit('imported from outside the properties folder')\n")
    (repo.root / "tests/properties/escape.py").symlink_to(repo.root / "elsewhere/outside_props.py")
    assert repo.pin(*PLAN).code == 0
    escaped = repo.check()
    problems = list(sites)
    if escaped.code != 2 or "plain files inside" not in escaped.stderr:
        problems.append(f"a symlink out of the properties folder was not refused: {escaped.stderr.strip()[:200]}")
    outcome = "refused" if escaped.code == 2 else "NOT REFUSED"
    line = (
        f"code from data: {len(sites)} eval/exec/pickle sites in the runner; a property module outside the "
        f"declared folder: {outcome}"
    )
    return Figure(line, problems)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=20261203)
    parser.add_argument("--kill-trials", type=int, default=200)
    parser.add_argument("--fuzz-cases", type=int, default=1000)
    parser.add_argument("--concurrent-rounds", type=int, default=4)
    parser.add_argument("--verbose", action="store_true", help="print every problem found")
    args = parser.parse_args(argv)
    print(f"seed: {args.seed}", flush=True)
    clean = True
    with tempfile.TemporaryDirectory(prefix="witness-gate-reliability.") as scratch:
        work = Path(scratch)
        for figure in (
            lambda: bad_inputs(work / "bad"),
            lambda: fuzz(work / "fuzz", args.fuzz_cases, args.seed),
            lambda: kill_nine(work / "kill", args.kill_trials, args.seed),
            lambda: crash_windows(work / "crash"),
            lambda: concurrency(work / "concurrency", args.concurrent_rounds),
            lambda: bypass_attempts(work / "bypass"),
            lambda: code_from_data(work / "data"),
        ):
            result = figure()
            print(result.line, flush=True)
            if args.verbose or not result.clean:
                for problem in result.problems[:20]:
                    print(f"  - {problem}")
            clean = clean and result.clean
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
