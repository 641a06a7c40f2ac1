"""`classify` as a run: replay every witness under the pin, label it, write the report.

The labels come from `classify.classify`; this module only gathers its inputs: the
replay counts (witness payloads, never fresh draws) and the changed-file flags.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import lock as locks
from witness_gate import store, witness
from witness_gate.canonical import sha256_hex
from witness_gate.classify import NEXT_STEPS, VERDICTS, classify, run_exit_code
from witness_gate.config import GateConfig
from witness_gate.errors import WitnessGateError
from witness_gate.paths import parse_changed_paths, split_paths
from witness_gate.replay import ReplayJob, ReplayResult, replay_module

SCHEMA_VERSION = 1

# Called after each property module's replays with (witnesses replayed, witnesses in all, module).
Progress = Callable[[int, int, str], None]


def no_progress(done: int, total: int, module: str) -> None:
    pass


@dataclass(frozen=True)
class DiffFacts:
    paths: list[str]
    paths_sha256: str
    impl_changed: bool
    oracle_changed: bool
    lock_changed: bool


def read_diff(diff_path: Path, lock: dict[str, Any], lock_relative: str, config: GateConfig) -> DiffFacts:
    data = store.read_regular_file(diff_path, "changed-file list")
    paths = parse_changed_paths(data, str(diff_path))
    # The fixture is oracle by construction: it is what the properties are checked against.
    oracle = (*config.generated_oracle_paths, lock["fixture"]["path"])
    impl_changed, oracle_changed = split_paths(paths, config.impl_prefixes, config.oracle_prefixes, oracle)
    return DiffFacts(paths, sha256_hex(data), impl_changed, oracle_changed, lock_relative in paths)


def _module_digest(root: Path, relative: str) -> str | None:
    path = root / relative
    if path.is_symlink() or not path.is_file():
        return None
    return sha256_hex(store.read_regular_file(path, "property module"))


def _replay_all(
    witnesses: list[tuple[Path, dict[str, Any]]], which: str, runs: int, root: Path, config: GateConfig, fixture: Path,
    progress: Progress = no_progress,
) -> dict[str, ReplayResult]:
    """Replays `payload` or `unshrunk.payload` of each witness; keyed by file name."""
    by_module: dict[str, list[tuple[Path, dict[str, Any]]]] = defaultdict(list)
    for path, record in witnesses:
        by_module[record["property"]["path"]].append((path, record))
    results: dict[str, ReplayResult] = {}
    for module_path, group in sorted(by_module.items()):
        jobs = [
            ReplayJob(
                record["assertion_id"],
                record["payload"] if which == "shrunk" else record["unshrunk"]["payload"],
                runs,
                record["expect"],
            )
            for _, record in group
        ]
        outcomes = replay_module(module_path, jobs, root, config.import_paths, fixture, config.replay_timeout_seconds)
        for (path, _), outcome in zip(group, outcomes):
            results[path.name] = outcome
        progress(len(results), len(witnesses), module_path)
    return results


def build(
    lock_path: Path,
    witnesses_dir: Path,
    diff_path: Path,
    root: Path,
    config: GateConfig,
    progress: Progress = no_progress,
    published_lock_path: Path | None = None,
    fixture_just_verified: bool = False,
) -> dict[str, Any]:
    """The report; `published_lock_path` is where the lock will live, when it is read from
    a staging copy now; `fixture_just_verified` skips the first of the two fixture hashes
    around the replays when the caller (gate, right after check) has just done it."""
    lock = locks.load(lock_path)
    lock_relative = locks.relative_to_root(published_lock_path or lock_path, root, "lock")
    if not fixture_just_verified:
        locks.verify_fixture(lock, root)
    diff = read_diff(diff_path, lock, lock_relative, config)
    witnesses = witness.load_directory(witnesses_dir, lock)
    runs = lock["replays"]
    fixture = locks.fixture_path(lock, root)

    replayable, entries, module_changed = [], {}, {}
    digests: dict[str, str | None] = {}  # one read per property module, however many witnesses
    named: set[str] | None = None  # the changed paths as a set, built only if a module changed
    for path, record in witnesses:
        module = record["property"]["path"]
        if module not in digests:
            digests[module] = _module_digest(root, module)
        current = digests[module]
        changed = module_changed[path.name] = current != record["property"]["sha256"]
        if changed and named is None:
            named = set(diff.paths)
        if changed and module not in named:
            entries[path.name] = _entry(path, record, 0, 0, "none", changed, "unclassified",
                                        "property module changed but the changed-file list does not name it: the list is incomplete")
        elif current is None:
            entries[path.name] = _entry(path, record, 0, 0, "none", changed, classify(0, 0, diff.impl_changed, diff.oracle_changed),
                                        "property module was removed: nothing to replay")
        else:
            replayable.append((path, record))

    shrunk = _replay_all(replayable, "shrunk", runs, root, config, fixture, progress)
    silent = [(p, r) for p, r in replayable if shrunk[p.name].failures == 0 and not shrunk[p.name].missing
              and r["unshrunk"]["witness_hash"] != r["witness_hash"]]
    unshrunk = _replay_all(silent, "unshrunk", runs, root, config, fixture)
    locks.verify_fixture(lock, root, when="during replay")

    for path, record in replayable:
        result, which = shrunk[path.name], "shrunk"
        if path.name in unshrunk and unshrunk[path.name].failures > 0:
            result, which = unshrunk[path.name], "unshrunk"  # shrinking distorted the failure
        changed = module_changed[path.name]
        if result.missing:
            entries[path.name] = _entry(path, record, 0, 0, "none", changed, classify(0, 0, diff.impl_changed, diff.oracle_changed),
                                        "the property module no longer defines this assertion")
            continue
        label = classify(result.failures, result.runs, diff.impl_changed, diff.oracle_changed)
        entries[path.name] = _entry(path, record, result.failures, result.runs, which, changed, label, _reason(result, which))

    ordered = [entries[path.name] for path, _ in witnesses]
    exit_code = run_exit_code((e["label"] for e in ordered), diff.impl_changed and diff.oracle_changed, diff.lock_changed)
    return {
        "schema_version": SCHEMA_VERSION,
        "fixture_digest": lock["fixture"]["sha256"],
        "lock_path": lock_relative,
        "replays": runs,
        "diff": {
            "paths_sha256": diff.paths_sha256,
            "path_count": len(diff.paths),
            "impl_changed": diff.impl_changed,
            "oracle_changed": diff.oracle_changed,
            "lock_changed": diff.lock_changed,
        },
        "witnesses": ordered,
        "verdict": VERDICTS[exit_code],
        "exit_code": exit_code,
    }


def _reason(result: ReplayResult, which: str) -> str:
    evidence = result.evidence
    detail = "" if evidence is None else f"; first failure: {evidence['exception_type'] or evidence['kind']}: {evidence['message']}"
    source = "unshrunk payload (the shrunk one never failed)" if which == "unshrunk" else "shrunk payload"
    return f"{source} failed {result.failures} of {result.runs} replays{detail}"


def _entry(path: Path, record: dict[str, Any], failures: int, runs: int, replayed: str, changed: bool, label: str, reason: str) -> dict[str, Any]:
    return {
        "file": path.name,
        "assertion_id": record["assertion_id"],
        "witness_hash": record["witness_hash"],
        "label": label,
        "failures": failures,
        "runs": runs,
        "replayed": replayed,
        "property_changed": changed,
        "next_step": NEXT_STEPS[label],
        "reason": reason,
    }


def diff_reasons(report: dict[str, Any]) -> list[str]:
    """What in the changed-file list blocks, whatever the witnesses say."""
    diff, reasons = report["diff"], []
    if diff["lock_changed"]:
        reasons.append(f"blocked: the changed-file list touches the lock {report['lock_path']}: one patch may not refresh the pin and the witness together")
    if diff["impl_changed"] and diff["oracle_changed"]:
        reasons.append(f"mixed_edit: the diff changes implementation and oracle paths - {NEXT_STEPS['mixed_edit']}")
    return reasons


def summary_lines(report: dict[str, Any]) -> list[str]:
    lines = [
        f"{e['label']}: {e['file']} failed {e['failures']}/{e['runs']} ({e['replayed']}) - {e['next_step']}"
        for e in report["witnesses"]
    ]
    lines.extend(diff_reasons(report))
    lines.append(f"verdict: {report['verdict']} (exit {report['exit_code']}, {len(report['witnesses'])} witnesses)")
    return lines


def load_report(path: Path, lock: dict[str, Any]) -> dict[str, Any]:
    report = store.load_artifact(path, "report")
    if report["fixture_digest"] != lock["fixture"]["sha256"]:
        raise WitnessGateError(f"{path}: /fixture_digest: report of another fixture than the lock's; classify again")
    return report
