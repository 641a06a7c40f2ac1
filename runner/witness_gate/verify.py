"""`verify`: the reviewer checks of spec section 7, as code. One result per check."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from witness_gate import freeze as freezes
from witness_gate import lock as locks
from witness_gate import classification, evidence, witness
from witness_gate.labels import classify
from witness_gate.config import GateConfig
from witness_gate.errors import FixtureChanged
from witness_gate.replay import ReplayPlan, WitnessReplays, replay_module


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


def run(
    lock_path: Path,
    witnesses_dir: Path,
    report_path: Path,
    diff_path: Path,
    freeze_paths: list[Path],
    root: Path,
    config: GateConfig,
    now: datetime,
    as_of: datetime | None = None,
) -> list[Check]:
    lock = locks.load(lock_path)
    checks = []
    try:
        locks.verify_fixture(lock, root)
        checks.append(
            Check(
                "lock matches fixture",
                True,
                f"{lock['fixture']['path'] or 'no fixture data (declared so)'} sha256 "
                f"{lock['fixture']['sha256'][:12]}...",
            )
        )
    except FixtureChanged as error:
        return [Check("lock matches fixture", False, str(error))]
    report = classification.load_report(report_path, lock)
    diff = classification.read_diff(diff_path, lock, locks.relative_to_root(lock_path, root, "lock"), config)
    mixed = diff.impl_changed and diff.oracle_changed
    checks.append(
        Check(
            "diff is not mixed",
            not mixed,
            "implementation and oracle paths both change" if mixed else "one side at most",
        )
    )
    checks.append(Check("lock not in diff", not diff.lock_changed, report["lock_path"]))
    if diff.paths_sha256 != report["diff"]["paths_sha256"]:
        checks.append(Check("report matches diff", False, "the report was made from another changed-file list"))
    entries = {e["file"]: e for e in report["witnesses"]}
    replayable: dict[str, list[tuple[str, witness.Witness]]] = {}
    for path, record in witness.load_directory(witnesses_dir, lock):
        entry = entries.get(path.name)
        if entry is None:
            checks.append(Check(f"witness {path.name}", False, "not in the classification report"))
            continue
        expected = classify(
            entry["failures"], entry["runs"], report["diff"]["impl_changed"], report["diff"]["oracle_changed"]
        )
        label_ok = expected == entry["label"] or (entry["label"] == "unclassified" and entry["runs"] == 0)
        checks.append(
            Check(
                f"label {path.name}",
                label_ok,
                f"recorded {entry['label']}, table gives {expected} for {entry['failures']}/{entry['runs']}",
            )
        )
        if entry["replayed"] != "none":
            replayable.setdefault(record.property_module.path, []).append((path.name, record))
    # The import paths the report was replayed with: what classify used, not what this checkout guesses.
    plan = ReplayPlan(
        root, tuple(report["import_paths"]), locks.fixture_path(lock, root), lock, config.replay_timeout_seconds
    )
    for module, group in sorted(replayable.items()):
        results = replay_module(module, group, plan)
        for name, _ in group:
            checks.append(replay_check(name, entries[name], results[name], report["diff"]))
    for freeze_path in freeze_paths:
        freeze = freezes.load(freeze_path)
        found = freezes.problems(freeze, lock, report, now, config.max_freeze_hours, as_of)
        checks.append(
            Check(f"freeze {freeze_path.name}", not found, "; ".join(found) or f"flake, expires {freeze['expires_at']}")
        )
    return checks


def replay_check(name: str, entry: dict[str, Any], result: WitnessReplays, diff: dict[str, Any]) -> Check:
    """Replays again and compares: the same counts wherever the runner controls the cause,
    the same label where it cannot (time, threads, entropy)."""
    if result.missing:
        return Check(f"replay {name}", False, "the property module no longer defines this assertion")
    if result.unloadable:  # nothing was replayed: no counts to compare, and no count to invent
        return Check(
            f"replay {name}",
            False,
            f"the replay interpreters could not load the property module ({result.unloadable}); "
            "were the import paths the same as when it was classified?",
        )
    decider = evidence.deciding_variant(result.by_variant)
    failures, runs = evidence.counts(result.by_variant[decider])
    label = classify(failures, runs, diff["impl_changed"], diff["oracle_changed"])
    cause, _ = evidence.cause(result.by_variant, 0)
    got = f"replay gave {label} {failures}/{runs} ({decider}, {cause})"
    recorded = f"recorded {entry['label']} {entry['failures']}/{entry['runs']} ({entry['replayed']}, {entry['cause']})"
    if entry["cause"] in evidence.CONTROLLED:
        same = (label, failures, runs, decider, cause) == (
            entry["label"],
            entry["failures"],
            entry["runs"],
            entry["replayed"],
            entry["cause"],
        )
    else:
        same = label == entry["label"]
    return Check(f"replay {name}", same, f"{recorded}, {got}")


def replay_witness(
    record: witness.Witness, name: str, lock: dict[str, Any], root: Path, config: GateConfig
) -> WitnessReplays:
    """Replays one witness as `classify` does, under the lock's plan."""
    plan = ReplayPlan(root, config.import_paths, locks.fixture_path(lock, root), lock, config.replay_timeout_seconds)
    return replay_module(record.property_module.path, [(name, record)], plan)[name]
