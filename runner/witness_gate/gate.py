"""`gate`: pin, check and classify in one run, then honour freezes; the verdict CI acts on.

A run passes only when no property failed, or when every failure is a `flake` covered
by a valid, unexpired freeze bound to its assertion, fixture digest and witness hash.
Everything else stays red with its label and next step. A diff that changes both the
implementation and the oracle blocks even when every property passes, and so does a
diff that changes the fixture and a freeze together (one patch may not refresh the pin
and the silence at once).

With `check_only` the run classifies nothing and honours no freeze: any witness fails
it. That mode exists for `pants test` with the gate disabled; it is never more lenient.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from witness_gate import check as checks
from witness_gate import corpus as corpora
from witness_gate import freeze as freezes
from witness_gate import lock as locks
from witness_gate import classification, ownership, store, witness
from witness_gate.canonical import sha256_hex
from witness_gate.labels import EXIT_INCOMPLETE, VERDICTS, freeze_caveat, gate_exit_code, most_severe
from witness_gate.config import GateConfig
from witness_gate.errors import FixtureChanged, WitnessGateError
from witness_gate.paths import parse_changed_paths
from witness_gate.replay import Progress

SCHEMA_VERSION = 3
LOCK_NAME, WITNESS_DIR, REPORT_NAME, GATE_NAME = "fixture.lock", "witnesses", "classification.json", "gate.json"
# What an earlier run's verdict says once a new run starts: a refused run (or a
# --check-only one, for the report) leaves it so.
_STALE = "left by an earlier gate run into this directory: a later run did not rewrite it, so it vouches for nothing"


@dataclass(frozen=True)
class GateRequest:
    root: Path
    fixture: Path | None  # None: a suite declared without fixture data
    generator_version: int
    replays: int
    max_examples: int
    property_files: tuple[Path, ...]
    out_dir: Path
    check_only: bool
    diff_path: Path | None
    freezes_dir: Path
    config: GateConfig
    # (implementation list, oracle list): exact paths, e.g. derived from a build graph;
    # when given they replace the configured prefixes.
    ownership_lists: tuple[Path, Path] | None = None
    progress: Progress = classification.no_progress
    replay_interpreters: int = locks.DEFAULT_REPLAY_INTERPRETERS
    conditions: tuple[dict[str, str], ...] = ()  # declared production conditions (`conditions`)
    # Where the caller keeps `out_dir` once the run is over (`pants test` copies it to
    # dist/test/<target>/): the freeze command a flake's line prints names files there.
    artifacts_at: Path | None = None
    corpus_dir: Path | None = None  # the retained witnesses (`corpus`); None: no corpus
    search_salt: str | None = None  # drawn into the seed schedule (`lock.seed_schedule`)


@dataclass(frozen=True)
class GateResult:
    record: dict[str, Any]
    lines: list[str]


def with_ownership(config: GateConfig, impl_list: Path, oracle_list: Path) -> GateConfig:
    """`config` owning exactly the listed paths (one per line); a path on both sides is refused."""
    impl = parse_changed_paths(store.read_regular_file(impl_list, "implementation path list"), str(impl_list))
    oracle = parse_changed_paths(store.read_regular_file(oracle_list, "oracle path list"), str(oracle_list))
    return ownership.exactly_listed(config, impl, oracle, str(impl_list), str(oracle_list))


def run(request: GateRequest, now: datetime) -> GateResult:
    """Runs the gate in a staging directory and publishes into `out_dir` only when it
    completes: a refusal leaves no new file behind, and no old verdict either (an earlier
    run's is marked stale first)."""
    out = request.out_dir
    stage = out.parent / f".{out.name}.staging"
    # A symlink here would have the run write, and publish, whatever directory it names.
    store.check_output_dir(stage, "the gate's staging directory")
    if not request.check_only:  # the report names the lock by its path in the repository: refused before any search
        locks.relative_to_root(out / LOCK_NAME, request.root, "lock")
    for name in (GATE_NAME, REPORT_NAME):
        store.mark_stale(out / name, _STALE)
    shutil.rmtree(stage, ignore_errors=True)
    created = [parent for parent in (out.parent, *out.parent.parents) if not parent.exists()]
    try:
        if (out / WITNESS_DIR).is_dir():  # earlier witnesses are replayed, not forgotten
            shutil.copytree(out / WITNESS_DIR, stage / WITNESS_DIR, ignore=shutil.ignore_patterns(".*"))
        result = _run(request, stage, now)
        _publish(stage, out)
        return result
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)  # before the parents, which must be empty to go
        for parent in created:  # innermost first: only the directories this run made, if empty
            with contextlib.suppress(OSError):
                parent.rmdir()
        raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _publish(stage: Path, out: Path) -> None:
    # The verdict goes last, so a reader that sees gate.json sees everything it names.
    names = [p.relative_to(stage) for p in sorted(stage.rglob("*")) if p.is_file()]
    for name in sorted(names, key=lambda n: str(n) == GATE_NAME):
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        store.move_into_place(stage / name, target)


def _run(request: GateRequest, stage: Path, now: datetime) -> GateResult:
    root = request.root
    if not request.check_only and request.diff_path is None:
        raise WitnessGateError("gate needs --diff-paths (the changed-file list) unless --check-only")
    config = (
        request.config if request.ownership_lists is None else with_ownership(request.config, *request.ownership_lists)
    )
    lock_path, witness_dir = stage / LOCK_NAME, stage / WITNESS_DIR
    lock = locks.pin(
        request.fixture,
        root,
        request.generator_version,
        request.replays,
        request.max_examples,
        replay_interpreters=request.replay_interpreters,
        declared_conditions=request.conditions,
        search_salt=request.search_salt,
    )
    if not request.check_only:  # bad freezes or a bad diff are refused before any search or replay
        assert request.diff_path is not None
        freeze_dir = locks.relative_to_root(request.freezes_dir, root, "freeze directory")
        loaded = _load_freezes(request.freezes_dir, root)
        changed = parse_changed_paths(
            store.read_regular_file(request.diff_path, "changed-file list"), str(request.diff_path)
        )
    store.save_artifact(lock_path, "lock", lock)
    checked = checks.run(
        lock_path,
        list(request.property_files),
        witness_dir,
        root,
        config.import_paths,
        config.replay_timeout_seconds,
        fixture_just_pinned=True,
    )
    retained, copied = (
        _add_corpus(request, lock, witness_dir) if not request.check_only else (corpora.Corpus([], []), frozenset())
    )
    blocking = [*checked.problems, *plain_test_failures(checked)]
    if request.check_only:
        record = _check_only_record(lock, witness.load_directory(witness_dir, lock), blocking, checked.unsearched)
    else:
        assert request.diff_path is not None  # refused at the start unless check_only
        try:
            report = classification.build(
                lock_path,
                witness_dir,
                request.diff_path,
                root,
                config,
                request.progress,
                published_lock_path=request.out_dir / LOCK_NAME,
                fixture_just_verified=True,
                corpus_files=retained.names,
                found_again=retained.names - copied,
            )
        except FixtureChanged as error:
            # Checked after the replays: the fixture moved while code under test ran, its doing.
            reasons = [f"blocked: {problem}" for problem in blocking]
            reasons.append(
                f"blocked: {error}; the code under test may have written it, so nothing replayed can be trusted"
            )
            record = _record("gate", lock, [], [], reasons, 1)
        else:
            for row in report.get("corpus", []):  # it held: the run's witnesses are the failures it found
                (witness_dir / row["file"]).unlink()
            store.save_artifact(stage / REPORT_NAME, "report", report)
            record = decide(
                report,
                lock,
                loaded,
                changed,
                freeze_dir,
                now,
                config.max_freeze_hours,
                [*blocking, *retained.stale],
                checked.unsearched,
            )
            commands = freeze_commands(
                record, request.artifacts_at or request.out_dir, freeze_dir, config.max_freeze_hours
            )
            record = _with_pytest(record, checked)
            store.save_artifact(stage / GATE_NAME, "gate", record)
            return GateResult(record, summary_lines(record, commands))
    record = _with_pytest(record, checked)
    store.save_artifact(stage / GATE_NAME, "gate", record)
    return GateResult(record, summary_lines(record))


# Why a failing plain test blocks with a reason and no label: a label is what replays tell of a
# witness, and a plain test has none (no input to replay, one run that cannot tell a flake from
# a regression). Failing closed, it blocks; the way out is the oracle's to take.
PLAIN_TEST_FAILED = (
    "a plain test (no @given, no state machine) failed: {failure}. It is no witness (it ran once, with no input "
    "to replay, so nothing tells a flake from a regression) and so has no label: fix the code, or have the test's "
    "owners change it (mark it skip or xfail in the test module: an oracle change)"
)


def plain_test_failures(checked: checks.CheckResult) -> list[str]:
    """A blocking line for each plain test of a gated pytest module that failed (pure)."""
    return [
        f"{node_id}: {PLAIN_TEST_FAILED.format(failure=failure)}" for node_id, failure in checked.plain_failures.items()
    ]


def _with_pytest(record: dict[str, Any], checked: checks.CheckResult) -> dict[str, Any]:
    """The record with what ran under pytest (`given_tests`): the Hypothesis tests searched
    (which of them are state machines), and the plain tests, which ran once (one that failed
    blocked, `plain_test_failures`), and the modules with nothing to search. Unchanged when
    no module was pytest's."""
    if not checked.given and not checked.skipped and not checked.plain:
        return record
    plain = [
        {
            "node_id": node_id,
            "passed": passed,
            **({"failure": checked.plain_failures[node_id]} if node_id in checked.plain_failures else {}),
        }
        for node_id, passed in sorted(checked.plain.items())
    ]
    cases = {node_id: checked.cases.get(node_id, 0) for node_id in checked.given}
    return {
        **record,
        "pytest": {
            "given_tests": list(checked.given),
            "stateful_tests": list(checked.stateful),
            "cases_run": cases,
            "skipped_tests": list(checked.skipped),
            "plain_tests": plain,
            "nothing_to_search": list(checked.nothing_to_search),
        },
    }


def _add_corpus(request: GateRequest, lock: dict[str, Any], witness_dir: Path) -> tuple[corpora.Corpus, frozenset[str]]:
    """Puts the corpus entries of this run's property modules beside the witnesses `check`
    wrote, to be replayed with them; returns the corpus and the names it put there. An entry
    `check` found again is there already, as this run's own failure: it is labelled as one,
    never held."""
    if request.corpus_dir is None:
        return corpora.Corpus([], []), frozenset()
    modules = {
        locks.relative_to_root(path, request.root, "property module"): sha256_hex(
            store.read_regular_file(path, "property module")
        )
        for path in request.property_files
    }
    found = corpora.load(request.corpus_dir, lock, modules)
    witness_dir.mkdir(parents=True, exist_ok=True)
    copied = set()
    for path, _ in found.entries:
        if not (witness_dir / path.name).exists():
            store.write_atomic(witness_dir / path.name, store.read_regular_file(path, "corpus entry"))
            copied.add(path.name)
    return found, frozenset(copied)


def _load_freezes(directory: Path, root: Path) -> list[tuple[str, dict[str, Any]]]:
    if not directory.exists():
        return []
    if directory.is_symlink() or not directory.is_dir():
        raise WitnessGateError(f"{directory}: freeze directory is not a plain directory")
    return [
        (locks.relative_to_root(path, root, "freeze"), freezes.load(path)) for path in sorted(directory.glob("*.json"))
    ]


def decide(
    report: dict[str, Any],
    lock: dict[str, Any],
    loaded_freezes: list[tuple[str, dict[str, Any]]],
    changed: list[str],
    freeze_dir: str,
    now: datetime,
    max_freeze_hours: int,
    problems: Sequence[str] = (),
    unsearched: Sequence[str] = (),
) -> dict[str, Any]:
    """The gate record: which witnesses block, which freezes hold, and the verdict.
    `problems` are property modules that could not be loaded or run: each blocks.
    `unsearched` are gated tests that were not searched: never a pass (incomplete)."""
    freeze_rows: list[dict[str, Any]] = []
    valid: dict[tuple[str, str], tuple[str, str]] = {}
    for name, record in loaded_freezes:
        found = freezes.problems(record, lock, report, now, max_freeze_hours)
        applies = any(
            e["assertion_id"] == record["assertion_id"] and e["witness_hash"] == record["witness_hash"]
            for e in report["witnesses"]
        )
        if applies:
            freeze_rows.append(
                {
                    "file": name,
                    "witness_hash": record["witness_hash"],
                    "expires_at": record["expires_at"],
                    "problems": found,
                }
            )
            if not found:
                valid.setdefault((record["assertion_id"], record["witness_hash"]), (name, record["expires_at"]))
    rows = []
    for entry in report["witnesses"]:
        cover = valid.get((entry["assertion_id"], entry["witness_hash"])) if entry["label"] == "flake" else None
        rows.append(_row(entry, cover))
    reasons = [*(f"blocked: {problem}" for problem in problems), *classification.diff_reasons(report)]
    prefix = freeze_dir.rstrip("/") + "/"
    if (
        lock["fixture"]["path"] is not None
        and lock["fixture"]["path"] in changed
        and any(path.startswith(prefix) for path in changed)
    ):
        reasons.append(
            f"the diff changes the fixture {lock['fixture']['path']} and a freeze under {freeze_dir}: one patch may "
            "not refresh the pin and the silence together"
        )
    exit_code = gate_exit_code(((row["label"], row["frozen_by"] is not None) for row in rows), bool(reasons))
    exit_code, reasons = _with_unsearched(exit_code, reasons, unsearched)
    record = _record("gate", lock, rows, freeze_rows, reasons, exit_code)
    return {**record, "corpus": report["corpus"]} if "corpus" in report else record


def _row(entry: dict[str, Any], cover: tuple[str, str] | None) -> dict[str, Any]:
    label = entry["label"]
    if cover is not None:
        next_step = f"Frozen until {cover[1]}; reopen it before then."
    elif label == "flake":
        next_step = (
            "No valid freeze covers this witness: fix the flake, or write a freeze with `witness-gate freeze` bound "
            "to this witness." + freeze_caveat(entry["cause"])
        )
    else:
        next_step = entry["next_step"]
    return {
        "file": f"{WITNESS_DIR}/{entry['file']}",
        "assertion_id": entry["assertion_id"],
        "witness_hash": entry["witness_hash"],
        "label": label,
        "failures": entry["failures"],
        "runs": entry["runs"],
        "frozen_by": None if cover is None else cover[0],
        "blocks": cover is None,
        "next_step": next_step,
        "cause": entry["cause"],
        "reason": entry["reason"],
        "input": entry["input"],
        "unshrunk_input": entry["unshrunk_input"],
    }


def _with_unsearched(exit_code: int, reasons: list[str], unsearched: Sequence[str]) -> tuple[int, list[str]]:
    """A verdict with the gated tests that were not searched: incomplete at least (pure)."""
    if not unsearched:
        return exit_code, reasons
    return most_severe([exit_code, EXIT_INCOMPLETE]), [*reasons, *(f"incomplete: {why}" for why in unsearched)]


def _check_only_record(
    lock: dict[str, Any], found: list[tuple[Path, witness.Witness]], problems: list[str], unsearched: Sequence[str]
) -> dict[str, Any]:
    rows = [
        {
            "file": f"{WITNESS_DIR}/{path.name}",
            "assertion_id": record.assertion_id,
            "witness_hash": record.witness_hash,
            "label": "unclassified",
            "failures": 0,
            "runs": 0,
            "frozen_by": None,
            "blocks": True,
            "next_step": "The property failed; the gate is disabled, so nothing is classified and no freeze applies.",
            "cause": "none_found",
            "reason": f"{record.evidence['exception_type'] or record.evidence['kind']}: {record.evidence['message']}",
            **witness.shown_inputs(record),
        }
        for path, record in found
    ]
    reasons = [f"blocked: {problem}" for problem in problems]
    exit_code, reasons = _with_unsearched(1 if rows or reasons else 0, reasons, unsearched)
    return _record("check_only", lock, rows, [], reasons, exit_code)


def _record(
    mode: str,
    lock: dict[str, Any],
    rows: list[dict[str, Any]],
    freeze_rows: list[dict[str, Any]],
    reasons: list[str],
    exit_code: int,
) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "mode": mode,
        "fixture_digest": lock["fixture"]["sha256"],
        "witnesses": rows,
        "freezes": freeze_rows,
        "reasons": reasons,
        "verdict": VERDICTS[exit_code],
        "exit_code": exit_code,
    }


def freeze_commands(record: dict[str, Any], gate_dir: Path, freezes_dir: str, max_freeze_hours: int) -> dict[str, str]:
    """The freeze command of each unfrozen flake of a gate record, by witness file (pure):
    the payload hash alone is shared by every property the same payload fails."""
    hours = min(freezes.SUGGESTED_HOURS, max_freeze_hours)
    return {row["file"]: freezes.command(gate_dir, row, freezes_dir, hours) for row in unfrozen_flakes(record)}


def unfrozen_flakes(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a gate record that a freeze could silence and none does (pure)."""
    return [row for row in record["witnesses"] if row["label"] == "flake" and row["blocks"]]


def _pytest_lines(run: dict[str, Any]) -> list[str]:
    """What ran under pytest, said in a line, and a line for each module with nothing to search."""
    plain, stateful = run["plain_tests"], run.get("stateful_tests", [])
    failed = [row["node_id"] for row in plain if not row["passed"]]
    skipped = run["skipped_tests"]
    ran = run.get("cases_run", {}).values()
    given = len(run["given_tests"]) - len(stateful)
    lines = [
        f"pytest: {given} @given test(s)"
        + (f" and {len(stateful)} state machine(s)" if stateful else "")
        + " searched"
        + (f" ({min(ran)}-{max(ran)} cases each)" if ran else "")
        + (f", {len(skipped)} skipped by pytest, so not searched: {', '.join(skipped)}" if skipped else "")
        + f"; plain tests (run once; a failure blocks): {len(plain) - len(failed)} passed, {len(failed)} failed"
        + (f": {', '.join(failed)}" if failed else "")
    ]
    lines += [
        f"pytest: {module}: nothing to search (no @given test, no state machine): only its plain tests ran, once each; "
        "no input of it was searched"
        for module in run.get("nothing_to_search", [])
    ]
    return lines


def summary_lines(record: dict[str, Any], commands: dict[str, str] | None = None) -> list[str]:
    """The text output; `commands` (`freeze_commands`) are printed under their flakes."""
    lines = []
    for row in record["witnesses"]:
        counts = f"failed {row['failures']}/{row['runs']} replays" if row["runs"] else "failed the property run"
        status = f"frozen by {row['frozen_by']}" if row["frozen_by"] else row["next_step"]
        lines.append(f"{row['label']}: {row['assertion_id']} {counts}; witness {row['file']} - {status}")
        lines.append(f"  {row['reason']}")
        lines.extend(classification.input_lines(row))
        if commands is not None and row["file"] in commands:
            lines.append(
                f"  to freeze it, in a pull request of its own that the oracle's owners review: {commands[row['file']]}"
            )
    for row in record["freezes"]:
        if row["problems"]:
            lines.append(f"freeze {row['file']} does not hold: {'; '.join(row['problems'])}")
    if record.get("corpus"):
        held = ", ".join(row["file"] for row in record["corpus"])
        lines.append(f"corpus: {len(record['corpus'])} retained witness(es) replayed and held: {held}")
    if "pytest" in record:
        lines.extend(_pytest_lines(record["pytest"]))
    lines.extend(record["reasons"])
    lines.append(
        f"gate: {record['verdict']} (exit {record['exit_code']}, {len(record['witnesses'])} witnesses, mode "
        f"{record['mode']})"
    )
    return lines
