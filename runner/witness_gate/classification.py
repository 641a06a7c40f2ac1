"""`classify` as a run: replay every witness under the pin, label it, write the report.

The labels come from `labels.classify`; this module only gathers its inputs: the
replay counts (witness payloads, never fresh draws) and the changed-file flags.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from witness_gate import lock as locks
from witness_gate import conditions, evidence, store, witness
from witness_gate.canonical import sha256_hex
from witness_gate.labels import NEXT_STEPS, VERDICTS, classify, next_step, run_exit_code
from witness_gate.config import GateConfig
from witness_gate.errors import WitnessGateError
from witness_gate.ownership import split_paths
from witness_gate.paths import parse_changed_paths
from witness_gate.replay import Progress, ReplayPlan, WitnessReplays, replay_module

SCHEMA_VERSION = 3


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
    oracle = (
        *config.generated_oracle_paths,
        *([lock["fixture"]["path"]] if lock["fixture"]["path"] is not None else []),
    )
    impl_changed, oracle_changed = split_paths(paths, config.impl_prefixes, config.oracle_prefixes, oracle)
    return DiffFacts(paths, sha256_hex(data), impl_changed, oracle_changed, lock_relative in paths)


def _module_digest(root: Path, relative: str) -> str | None:
    path = root / relative
    if path.is_symlink() or not path.is_file():
        return None
    return sha256_hex(store.read_regular_file(path, "property module"))


def build(
    lock_path: Path,
    witnesses_dir: Path,
    diff_path: Path,
    root: Path,
    config: GateConfig,
    progress: Progress = no_progress,
    published_lock_path: Path | None = None,
    fixture_just_verified: bool = False,
    corpus_files: frozenset[str] = frozenset(),
    found_again: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """The report; `published_lock_path` is where the lock will live, when it is read from
    a staging copy now; `fixture_just_verified` skips the first of the two fixture hashes
    around the replays when the caller (gate, right after check) has just done it;
    `corpus_files` names the witnesses that are corpus entries (`corpus`): one that never
    fails again holds and is listed under `corpus`, not among the witnesses, unless this
    run's search found it again itself (`found_again`): then it is that run's failure."""
    lock = locks.load(lock_path)
    lock_relative = locks.relative_to_root(published_lock_path or lock_path, root, "lock")
    if not fixture_just_verified:
        locks.verify_fixture(lock, root)
    diff = read_diff(diff_path, lock, lock_relative, config)
    witnesses = witness.load_directory(witnesses_dir, lock)

    by_module: dict[str, list[tuple[str, witness.Witness]]] = defaultdict(list)
    entries: dict[str, dict[str, Any]] = {}
    digests: dict[str, str | None] = {}  # one read per property module, however many witnesses
    named: set[str] | None = None  # the changed paths as a set, built only if a module changed
    for path, record in witnesses:
        module = record.property_module.path
        if module not in digests:
            digests[module] = _module_digest(root, module)
        current = digests[module]
        changed = current != record.property_module.sha256
        if changed and named is None:
            named = set(diff.paths)
        if changed and named is not None and module not in named:  # `named` is set whenever `changed`
            entries[path.name] = _unreplayed(
                path.name,
                record,
                changed,
                "unclassified",
                "property module changed but the changed-file list does not name it: the list is incomplete",
            )
        elif current is None:
            entries[path.name] = _unreplayed(
                path.name,
                record,
                changed,
                classify(0, 0, diff.impl_changed, diff.oracle_changed),
                "property module was removed: nothing to replay",
            )
        else:
            by_module[module].append((path.name, record))

    plan = ReplayPlan(root, config.import_paths, locks.fixture_path(lock, root), lock, config.replay_timeout_seconds)
    for module, group in sorted(by_module.items()):
        results = replay_module(module, group, plan, progress)
        for name, record in group:
            changed = digests[module] != record.property_module.sha256
            entries[name] = _entry(name, record, results[name], changed, diff)
    locks.verify_fixture(lock, root, when="during replay")

    ordered, held = [], []
    for path, _ in witnesses:
        entry = entries[path.name]
        if path.name in corpus_files:
            if entry["runs"] > 0 and entry["failures"] == 0 and path.name not in found_again:
                held.append({key: entry[key] for key in ("file", "assertion_id", "witness_hash", "runs")})
                continue
            again = " and fails again" if entry["failures"] else ""
            entry = {
                **entry,
                "reason": f"this input failed before (corpus entry {path.name}){again}: {entry['reason']}",
            }
        ordered.append(entry)
    exit_code = run_exit_code(
        (e["label"] for e in ordered), diff.impl_changed and diff.oracle_changed, diff.lock_changed
    )
    return {
        "schema_version": SCHEMA_VERSION,
        "fixture_digest": lock["fixture"]["sha256"],
        "lock_path": lock_relative,
        "import_paths": list(config.import_paths),
        "replays": lock["replays"],
        "diff": {
            "paths_sha256": diff.paths_sha256,
            "path_count": len(diff.paths),
            "impl_changed": diff.impl_changed,
            "oracle_changed": diff.oracle_changed,
            "lock_changed": diff.lock_changed,
        },
        "witnesses": ordered,
        **({"corpus": held} if corpus_files else {}),
        "verdict": VERDICTS[exit_code],
        "exit_code": exit_code,
    }


def _entry(
    name: str, record: witness.Witness, result: WitnessReplays, changed: bool, diff: DiffFacts
) -> dict[str, Any]:
    if result.missing:
        return _unreplayed(
            name,
            record,
            changed,
            classify(0, 0, diff.impl_changed, diff.oracle_changed),
            "the property module no longer defines this assertion",
        )
    if result.unloadable:
        return _unreplayed(
            name,
            record,
            changed,
            classify(0, 0, diff.impl_changed, diff.oracle_changed),
            f"not replayed: {result.unloadable}",
        )
    decider = evidence.deciding_variant(result.by_variant)
    failures, runs = evidence.counts(result.by_variant[decider])
    label = classify(failures, runs, diff.impl_changed, diff.oracle_changed)
    cause, detail = evidence.cause(result.by_variant, witness.calls_before(record))
    unshown = ""
    if (
        label == "flake"
        and record.failing_example is not None
        and cause not in evidence.INPUT_HELD
        and not evidence.one_input(result.by_variant[decider])
    ):
        label, unshown = "unclassified", _NOT_ONE_INPUT
    first = result.first_evidence.get(decider)
    shown = "" if first is None else f"; first failure: {first['exception_type'] or first['kind']}: {first['message']}"
    variants = []
    for variant in evidence.VARIANTS:
        replays = result.by_variant.get(variant)
        if not replays:
            continue
        per_interpreter: dict[int, list[evidence.Replay]] = defaultdict(list)
        for replay in replays:
            per_interpreter[replay.interpreter].append(replay)
        variant_failures, variant_runs = evidence.counts(replays)
        variants.append(
            {
                "variant": variant,
                "failures": variant_failures,
                "runs": variant_runs,
                "interpreters": [
                    {
                        "hash_secret": group[0].hash_secret,
                        "pid_offset": group[0].pid_offset,
                        "failures": evidence.counts(group)[0],
                        "runs": len(group),
                    }
                    for _, group in sorted(per_interpreter.items())
                ],
            }
        )
    return {
        **_base(name, record, changed, label),
        "next_step": next_step(label, cause),
        "failures": failures,
        "runs": runs,
        "replayed": decider,
        "cause": cause,
        "variants": variants,
        "rounds": result.rounds,
        "stopped": result.stopped,
        "reason": (
            f"{_replays_of(decider)} failed {failures} of {runs} replays{_under(record)}: {detail}{unshown}{shown}"
        ),
    }


# Why a `@given` test's replays that differ in outcome are no flake (`evidence.one_input`).
_NOT_ONE_INPUT = (
    "; but its replays were not shown to draw one input from the witness's choices (shown only where every "
    "replay's arguments are plain values, the same in each, whose lists, tuples, dicts and sets the draw itself "
    "made while none of the program's code ran), and a strategy that reads hash order, the "
    "process or a directory (sampled_from over a set) draws another input under another: the outcome may follow "
    "the input drawn, not the code. Not a flake, no freeze"
)


def _replays_of(variant: str) -> str:
    if variant in evidence.PROBES:
        return f"the {variant.replace('_', '-')} probe"
    return f"{variant.replace('_', ' ')} payload"


def _under(record: witness.Witness) -> str:
    """Where a witness of a declared condition was replayed: under that condition."""
    if record.condition is None:
        return ""
    return f" under the declared condition {conditions.describe(record.condition)}"


def _base(name: str, record: witness.Witness, changed: bool, label: str) -> dict[str, Any]:
    return {
        "file": name,
        "assertion_id": record.assertion_id,
        "witness_hash": record.witness_hash,
        "label": label,
        "property_changed": changed,
        "next_step": NEXT_STEPS[label],
        **witness.shown_inputs(record),
    }


def _unreplayed(name: str, record: witness.Witness, changed: bool, label: str, reason: str) -> dict[str, Any]:
    return {
        **_base(name, record, changed, label),
        "failures": 0,
        "runs": 0,
        "replayed": "none",
        "cause": "none_found",
        "variants": [],
        "rounds": 0,
        "stopped": "nothing was replayed",
        "reason": reason,
    }


def diff_reasons(report: dict[str, Any]) -> list[str]:
    """What in the changed-file list blocks, whatever the witnesses say."""
    diff, reasons = report["diff"], []
    if diff["lock_changed"]:
        reasons.append(
            f"blocked: the changed-file list touches the lock {report['lock_path']}: one patch may not refresh the "
            "pin and the witness together"
        )
    if diff["impl_changed"] and diff["oracle_changed"]:
        reasons.append(f"mixed_edit: the diff changes implementation and oracle paths - {NEXT_STEPS['mixed_edit']}")
    return reasons


def summary_lines(report: dict[str, Any]) -> list[str]:
    lines = [
        f"{e['label']}: {e['file']} failed {e['failures']}/{e['runs']} ({e['replayed']}) - {e['next_step']}\n  "
        f"{e['reason']}\n" + "\n".join(input_lines(e))
        for e in report["witnesses"]
    ]
    lines.extend(diff_reasons(report))
    lines.append(f"verdict: {report['verdict']} (exit {report['exit_code']}, {len(report['witnesses'])} witnesses)")
    return lines


def input_lines(row: dict[str, Any]) -> list[str]:
    """The failing input under a witness's red line (and the unshrunk one where it differs)."""
    lines = [f"  failing input: {row['input']}"]
    if row["unshrunk_input"] is not None:
        lines.append(f"  unshrunk input: {row['unshrunk_input']}")
    return lines


def load_report(path: Path, lock: dict[str, Any]) -> dict[str, Any]:
    report = store.load_artifact(path, "report")
    if report["fixture_digest"] != lock["fixture"]["sha256"]:
        raise WitnessGateError(f"{path}: /fixture_digest: report of another fixture than the lock's; classify again")
    return report
