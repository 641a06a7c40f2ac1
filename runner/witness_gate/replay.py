"""Replays (spec section 3): the same payloads, under conditions drawn from the schedule.

A round replays every variant of a module's witnesses (`evidence.VARIANTS`) in
`replay_interpreters` fresh interpreters, one after another, six at a time, under hash
secrets and process ids from the schedule that change in turn from one interpreter to
the next (`plan_round`; the first of round one runs under the search's); in each,
`replays` slots spaced `replay_spacing_ms` apart run every variant in a forked child
(the payloads alone, then after their history, each in a pass of its own), the global
`random` seeded per column (column 0 of round one is the seed the failing call ran
under), and then the shrunk payload is called in the interpreter itself, without forking.
Counts are combined across interpreters, never replaced. More rounds follow while the
evidence is mixed (`evidence.escalation`), up to `replay_cap` replays per variant; each
witness keeps why its replays stopped.
Last, the probe replays each witness's replayed variant once more, under every setting
of the schedule of one condition at a time (when the collector runs and the order
directories list in, in one interpreter, then the wall clock, in another) with nothing
else varied (`_probe`).

A replay that fails, hangs (killed at the time limit), crashes or never runs because
its interpreter died counts as a failure; one whose interpreter could not load the
module never ran and counts as nothing (the witness is then unclassified, with the
load error). A witness that hung once is not replayed
again: its remaining replays count as failures, so a hang costs one time limit.
"""

from __future__ import annotations

import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, cast

from witness_gate import conditions, protocol, seeds
from witness_gate.canonical import canonical_bytes
from witness_gate.evidence import (
    BURST_PROBE,
    CLOCK,
    COLLECTOR,
    DIRECTORY_ORDER,
    Replay,
    counts,
    escalation,
    passes_for,
    replayed_again,
    replayed_variant,
)
from witness_gate.protocol import ENDED_CALL_KINDS, Event, EvidenceKind, failure_evidence
from witness_gate.sandbox import WORKER_SLACK_SECONDS, Ended, Worker
from witness_gate.witness import Call, Witness

# A default round at once, more than the two cores of the machines this was measured on:
# an interpreter spends much of its time starting or asleep between spaced slots. A
# regression's classify took 4.6 s with three against 5.8 s with two; a red review of one
# failing test 8.3 s with six against 10.4 s with three, of twelve in one module 28.7 s
# against 38.8 s (two runs each, a 2-core machine other jobs kept at a load of 4 to 9).
_PARALLEL_INTERPRETERS = 6

# Called after each interpreter with (interpreters done, interpreters planned so far, module).
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Job:
    witness: str  # the witness file name
    variant: str
    assertion_id: str
    expect: str
    payload: Any
    recorded_seed: int
    history: list[dict[str, Any]]
    fork: bool
    settled: bool = False  # the probe's: its replays so far agreed (`protocol.left_out`)


def jobs_for(name: str, record: Witness) -> list[Job]:
    """The variants of one witness worth replaying (duplicates of the shrunk one dropped)."""
    shrunk, unshrunk = record.shrunk, record.unshrunk

    def job(variant: str, source: Call, history: list[dict[str, Any]], fork: bool = True) -> Job:
        return Job(
            name,
            variant,
            record.assertion_id,
            record.expect,
            source.payload,
            source.random_seed,
            history,
            fork,
        )

    jobs = [job("shrunk", shrunk, [])]
    differs = unshrunk.witness_hash != shrunk.witness_hash
    if differs:
        jobs.append(job("unshrunk", unshrunk, []))
    if shrunk.history:
        jobs.append(job("shrunk_history", shrunk, list(shrunk.history)))
    if unshrunk.history and (differs or unshrunk.history != shrunk.history):
        jobs.append(job("unshrunk_history", unshrunk, list(unshrunk.history)))
    jobs.append(job("in_process", shrunk, [], fork=False))
    return jobs


@dataclass
class WitnessReplays:
    """Everything the replays of one witness showed."""

    by_variant: dict[str, list[Replay]] = field(default_factory=lambda: defaultdict(list))
    first_evidence: dict[str, dict[str, Any]] = field(default_factory=dict)  # by variant
    missing: bool = False  # the module no longer defines the assertion
    unloadable: str = ""  # why a replay interpreter could not load the module: nothing was replayed there
    rounds: int = 0
    stopped: str = ""  # why no further round ran


@dataclass(frozen=True)
class ReplayPlan:
    root: Path
    import_paths: tuple[str, ...]
    fixture_path: Path | None  # None: a suite without fixture data
    lock: dict[str, Any]
    timeout: float


def replay_module(
    module: str, witnesses: list[tuple[str, Witness]], plan: ReplayPlan, progress: Progress | None = None
) -> dict[str, WitnessReplays]:
    """Replays every witness of one property module, each under the declared condition and
    directory order it was found under and from its hash secret (`conditions`, the search's
    legs): the witnesses of one condition, order and search secret share interpreters; keyed
    by witness file name."""
    by_search: dict[tuple[bytes, int, int], list[tuple[str, Witness]]] = defaultdict(list)
    for name, record in witnesses:
        key = (canonical_bytes(record.condition or {}), record.directory_order, record.hash_secret)
        by_search[key].append((name, record))
    results: dict[str, WitnessReplays] = {}
    for _, group in sorted(by_search.items()):
        results.update(_replay_under(module, group, group[0][1].condition or {}, plan, progress))
    return results


def _replay_under(
    module: str,
    witnesses: list[tuple[str, Witness]],
    condition: dict[str, str],
    plan: ReplayPlan,
    progress: Progress | None,
) -> dict[str, WitnessReplays]:
    lock = plan.lock
    results = {name: WitnessReplays() for name, _ in witnesses}
    records = dict(witnesses)
    order = witnesses[0][1].directory_order
    flaky_search = {name: search_came_and_went(record) for name, record in witnesses}
    active = [name for name, _ in witnesses]
    hung: set[str] = set()
    per_round = lock["replays"] * lock["replay_interpreters"]
    round_number = 0
    with tempfile.TemporaryDirectory(prefix="witness-gate-replay-") as scratch:
        while active:
            jobs = [
                job
                for name in active
                for job in jobs_for(name, records[name])
                if replayed_again(results[name].by_variant, job.variant)
            ]
            secret = records[active[0]].hash_secret
            outcomes = _round(
                module, jobs, round_number, (secret, order), condition, plan, Path(scratch), hung, progress
            )
            for job, replay, evidence in outcomes:
                result = results[job.witness]
                if evidence is _MISSING:
                    result.missing = True
                    continue
                if evidence is not None and evidence["kind"] == EvidenceKind.UNLOADABLE:
                    result.unloadable = result.unloadable or evidence["message"]
                    continue
                result.by_variant[job.variant].append(replay)
                if replay.failed and evidence is not None:
                    result.first_evidence.setdefault(job.variant, evidence)
                    if evidence["kind"] == EvidenceKind.TIMEOUT:
                        hung.add(job.witness)
            for name in active:
                results[name].rounds += 1
            round_number += 1
            room = per_round * (round_number + 1) <= lock["replay_cap"]
            still = []
            for name in active:
                result = results[name]
                if result.missing or result.unloadable:
                    continue
                more, why = escalation(result.by_variant, flaky_search[name], result.rounds)
                if name in hung:
                    result.stopped = "a replay hung: it is not replayed again"
                elif more and not room:
                    result.stopped = f"the replay cap ({lock['replay_cap']} replays per variant), though {why}"
                elif more:
                    still.append(name)
                else:
                    result.stopped = why
            active = still
        probed = [name for name, result in results.items() if result.by_variant and name not in hung]
        if probed:
            first = (
                round_number * lock["replay_interpreters"]
            )  # the index the next round's first interpreter would have had
            secret = conditions.hash_secret(condition, records[probed[0]].hash_secret)
            for job, replay, evidence in _probe(
                module,
                [(n, records[n], results[n]) for n in probed],
                first,
                (secret, order),
                condition,
                plan,
                Path(scratch),
            ):
                results[job.witness].by_variant[job.variant].append(replay)
                if replay.failed and evidence is not None:
                    results[job.witness].first_evidence.setdefault(job.variant, evidence)
    return results


def passing(witnesses: list[tuple[str, Witness]], plan: ReplayPlan) -> set[str]:
    """The witnesses whose shrunk payload passes one forked replay, in one interpreter per
    module, declared condition, directory order and search secret, under the search's hash
    secret and directory order, process id and `random`
    seed (the first replay of round one). A witness seen to pass even once cannot fail on
    every replay there; one that failed, or could not be replayed, is not in the set."""
    lock = plan.lock
    by_group: dict[tuple[str, bytes, int, int], list[tuple[str, Witness]]] = defaultdict(list)
    for name, record in witnesses:
        group_key = (
            record.property_module.path,
            canonical_bytes(record.condition or {}),
            record.directory_order,
            record.hash_secret,
        )
        by_group[group_key].append((name, record))
    passed = set()
    with tempfile.TemporaryDirectory(prefix="witness-gate-replay-") as scratch:
        for (module, _, order, secret), group in sorted(by_group.items()):
            jobs = [jobs_for(name, record)[0] for name, record in group]  # the shrunk payload, forked, alone
            condition = group[0][1].condition or {}
            found = _interpreter(
                module,
                jobs,
                [[job.recorded_seed for job in jobs]],
                (secret, order),
                seeds.check_pid_offset(lock, module),
                condition,
                plan,
                Path(scratch),
                set(),
            )
            passed |= {
                jobs[index].witness
                for (index, _), (failed, evidence, _) in found.items()
                if not failed and evidence is None
            }
    return passed


# The probe's interpreters, each the conditions it probes in order. The clock's runs alone,
# with libfaketime preloaded (`sandbox.clock_environment`): the collector's and the
# directory order's children run as the ordinary replays do (a program such a child ran
# under a preloaded libfaketime failed to sleep, under every setting, and a directory-order
# flake read as a regression: an adversarial review).
PROBE_INTERPRETERS = ((COLLECTOR, DIRECTORY_ORDER), (CLOCK,))


def _probe_schedule(lock: dict[str, Any], conditions: tuple[str, ...]) -> dict[str, list[dict[str, int]]]:
    """Each of `conditions`' settings, in the order the probe runs the conditions."""
    every = {
        COLLECTOR: list(seeds.collector_settings(lock)),
        DIRECTORY_ORDER: [{"directory_order": order} for order in seeds.directory_settings(lock)],
        CLOCK: [{"clock": instant} for instant in seeds.clock_settings(lock)],
    }
    return {condition: every[condition] for condition in conditions}


# Each probe setting is replayed in passes, one after another: an outcome that follows the
# setting repeats in every pass; a clock or a race breaks the pattern. As many passes as keep
# a race from splitting them by setting by chance more than once in 20,000 probes, whatever
# its odds (`evidence.passes_for`): four for the collector's twelve settings, five for the
# directory's six, four for the clock's eight (two passes of twelve let a race that fails eleven times in twelve split
# them once in 78 probes: a thread race was once labelled `gc` so). A later pass costs
# little where the split is already broken: it is left out (`protocol.left_out`).
def probe_passes(lock: dict[str, Any], conditions: tuple[str, ...]) -> list[list[int]]:
    """Where each condition's passes lie among the slots of a probe interpreter of
    `conditions` (pure): its first slot, its number of settings and of passes, and 1 where a
    mixed witness's cause reads its passes' bursts (`evidence.BURST_PROBE`), as
    `protocol.left_out` reads them."""
    blocks, first = [], 0
    for probe, settings in _probe_schedule(lock, conditions).items():
        passes = passes_for(len(settings))
        blocks.append([first, len(settings), passes, int(probe == BURST_PROBE)])
        first += len(settings) * passes
    return blocks


def probe_settings(lock: dict[str, Any], conditions: tuple[str, ...]) -> list[tuple[str, int, dict[str, int]]]:
    """The slots of a probe interpreter of `conditions` in order (pure): (its variant, the
    setting's index among its condition's, the setting the worker applies), each
    condition's settings in its passes (`evidence.passes_for`), in the order of
    `conditions` (`probe_passes` says where each lies)."""
    return [
        (probe, index, setting)
        for probe, settings in _probe_schedule(lock, conditions).items()
        for _ in range(passes_for(len(settings)))
        for index, setting in enumerate(settings)
    ]


def _probe(
    module: str,
    witnesses: list[tuple[str, Witness, WitnessReplays]],
    index: int,
    search: tuple[int, int],
    condition: dict[str, str],
    plan: ReplayPlan,
    scratch: Path,
) -> list[tuple[Job, Replay, dict[str, Any] | None]]:
    """The probe: each witness's replayed variant (its payload, after its history where that
    is what decided) in forked children under every setting of the schedule of one condition
    at a time (`probe_settings`: when the collector runs, the order directories list in, the
    wall clock), in passes, in the interpreters of `PROBE_INTERPRETERS`, each under the
    search's hash secret and directory order (`search`) and the variant's recorded `random`
    seed (column 0). Only the setting varies."""
    secret = search[0]
    jobs = []
    for name, record, result in witnesses:
        variant = replayed_variant(result.by_variant)
        [job] = [
            job for job in jobs_for(name, record) if job.variant == ("shrunk" if variant == "in_process" else variant)
        ]
        failures, runs = counts(result.by_variant[variant])
        jobs.append(
            Job(
                job.witness,
                COLLECTOR,
                job.assertion_id,
                job.expect,
                job.payload,
                job.recorded_seed,
                job.history,
                fork=True,
                settled=failures in (0, runs),
            )
        )
    pid_offset = seeds.check_pid_offset(plan.lock, module)
    replays = []
    for probed in PROBE_INTERPRETERS:
        slots = probe_settings(plan.lock, probed)
        found = _interpreter(
            module,
            jobs,
            [[job.recorded_seed for job in jobs] for _ in slots],
            search,
            pid_offset,
            condition,
            plan,
            scratch,
            set(),
            probe=([setting for _, _, setting in slots], probe_passes(plan.lock, probed)),
        )
        replays += [
            (
                replace(jobs[job_index], variant=slots[slot][0]),
                Replay(index, secret, pid_offset, 0, slot, failed, setting=slots[slot][1], drew=drew),
                evidence,
            )
            for (job_index, slot), (failed, evidence, drew) in sorted(found.items())
            if evidence is not _MISSING and not (evidence is not None and evidence["kind"] == EvidenceKind.UNLOADABLE)
        ]
    return replays


_MISSING: dict[str, Any] = {"kind": "missing"}


def search_came_and_went(record: Witness) -> bool:
    """Whether Hypothesis saw the witness's failure come and go while shrinking. A search
    the failing call ended (a crash, a hang, a broken channel) is unshrunk too, but it saw
    one failure and nothing else: escalating it would only replay a certainty. So did a
    @given test's failure Hypothesis saved no choices for (its witness is the search up to
    it, `protocol`)."""
    stopped_at_it = (
        record.failing_example is not None and "search" in record.shrunk.payload
    )  # a @given test's search, run to the case that failed
    return (
        record.origin == "search"
        and not record.fully_shrunk
        and not stopped_at_it
        and record.evidence["kind"] not in ENDED_CALL_KINDS
    )


@dataclass(frozen=True)
class Interpreter:
    index: int  # counted across rounds
    hash_secret: int
    columns: tuple[int, ...]  # `random` seed columns of its slots, counted across rounds
    pid_offset: int  # process ids skipped before the module loads (seeds)


def plan_round(
    lock: dict[str, Any],
    round_number: int,
    search_secret: int,
    search_pid_offset: int,
    condition: dict[str, str] | None = None,
) -> list[Interpreter]:
    """The interpreters of one round, laid out so causes can be told apart.

    Interpreter k runs under the round's hash secret (k + 1) // 2 (counted round a ring of
    `count // 2` secrets for an even count) and process id k // 2 (round one's first secret
    and process id are the search's): from one interpreter to the next the secret and the
    process id change in turn, (S0, P0), (S1, P0), (S1, P1), (S2, P1), (S2, P2), (S0, P2)
    for six. So every secret meets two process ids and every process id two secrets: a
    failure that follows the hash secret flips between two interpreters at one process id
    and agrees between the two under each secret, one that follows the process the other
    way round, and, the ring linking them all, a failure that varies cannot follow both.
    Interpreters that share a secret share its `random` seed columns; the window of
    columns slides by two from one secret to the next, so neighbouring secrets share seeds
    and each secret meets several. A condition that declares PYTHONHASHSEED fixes every
    secret to it."""
    count, slots = lock["replay_interpreters"], lock["replays"]
    # An even count closes the ring (the last interpreter under the first secret); an odd
    # one leaves the first secret with one interpreter.
    secrets_per_round, pids_per_round = (count + 1) // 2, (count + 1) // 2
    base = round_number * (slots + 2 * (secrets_per_round - 1))  # distinct columns in earlier rounds

    def secret(number: int) -> int:
        if round_number == 0 and number == 0:
            return search_secret
        drawn = seeds.replay_hash_secret(lock, round_number * secrets_per_round + number)
        if round_number == 0 and drawn == search_secret:
            # A leg searched with randomization off: the round's own first draw, which the
            # search's secret stands in for, takes its place, so the round meets three secrets.
            drawn = seeds.replay_hash_secret(lock, 0)
        return conditions.hash_secret(condition or {}, drawn)

    fresh = seeds.replay_pid_offsets(lock, round_number, pids_per_round, avoid=search_pid_offset)
    pids = (search_pid_offset, *fresh[1:]) if round_number == 0 else fresh

    def window(number: int) -> tuple[int, ...]:
        return tuple(range(base + 2 * number, base + 2 * number + slots))

    return [
        Interpreter(
            round_number * count + k,
            secret((k + 1) // 2 % secrets_per_round),
            window((k + 1) // 2 % secrets_per_round),
            pids[k // 2],
        )
        for k in range(count)
    ]


def _round(
    module: str,
    jobs: list[Job],
    round_number: int,
    search: tuple[int, int],
    condition: dict[str, str],
    plan: ReplayPlan,
    scratch: Path,
    hung: set[str],
    progress: Progress | None,
) -> list[tuple[Job, Replay, dict[str, Any] | None]]:
    """One round's interpreters (`plan_round`) from the search's hash secret, each listing
    directories in the search's order (`search`: secret, order), at most six at a time."""
    lock = plan.lock
    search_secret, order = search
    interpreters = plan_round(lock, round_number, search_secret, seeds.check_pid_offset(lock, module), condition)
    done, counting = 0, threading.Lock()

    def run(interpreter: Interpreter) -> list[tuple[Job, Replay, dict[str, Any] | None]]:
        nonlocal done
        # Column 0 is the seed the failing call ran under in check, for each job.
        seed_rows = [
            [job.recorded_seed if column == 0 else seeds.replay_random_seed(lock, column) for job in jobs]
            for column in interpreter.columns
        ]
        found = _interpreter(
            module,
            jobs,
            seed_rows,
            (interpreter.hash_secret, order),
            interpreter.pid_offset,
            condition,
            plan,
            scratch,
            set(hung),
        )
        rows = []
        for (job_index, slot), (failed, evidence, drew) in sorted(found.items()):
            replay = Replay(
                interpreter.index,
                interpreter.hash_secret,
                interpreter.pid_offset,
                interpreter.columns[slot],
                slot,
                failed,
                drew=drew,
            )
            rows.append((jobs[job_index], replay, evidence))
        with counting:  # one count and its line at a time: the lines say 1, 2, 3 whatever order interpreters end in
            done += 1
            if progress is not None:
                progress(done, len(interpreters), module)
        return rows

    with ThreadPoolExecutor(max_workers=_PARALLEL_INTERPRETERS) as pool:
        return [row for rows in pool.map(run, interpreters) for row in rows]


def _interpreter(
    module: str,
    jobs: list[Job],
    seed_rows: list[list[int]],
    conditions_held: tuple[int, int],
    pid_offset: int,
    condition: dict[str, str],
    plan: ReplayPlan,
    scratch: Path,
    hung: set[str],
    probe: tuple[list[dict[str, int]], list[list[int]]] | None = None,
) -> dict[tuple[int, int], tuple[bool, dict[str, Any] | None, str | None]]:
    """Outcomes by (job index, slot) of one replay interpreter under a hash secret and a
    directory order (`conditions_held`): failed, its evidence, and the input a `@given`
    replay drew (`Replay.drew`); every replay it did not
    report is a failure with the reason, and a job it reports missing maps to `_MISSING`.
    `probe`, a setting per slot (`probe_settings`) and where each condition's passes lie
    among them (`probe_passes`), makes it a probe interpreter: its slots follow one another
    without pause."""
    lock = plan.lock
    secret, order = conditions_held
    request = {
        "mode": "replay",
        "root": str(plan.root.absolute()),
        "import_paths": list(plan.import_paths),
        "module": module,
        "fixture_path": None if plan.fixture_path is None else str(plan.fixture_path.absolute()),
        "fixture_sha256": lock["fixture"]["sha256"],
        "timeout": plan.timeout,
        "spacing_seconds": 0 if probe else lock["replay_spacing_ms"] / 1000,
        "max_examples": lock["max_examples"],
        "jobs": [
            {
                "witness": job.witness,
                "assertion_id": job.assertion_id,
                "expect": job.expect,
                "payload": job.payload,
                "history": job.history,
                "fork": job.fork,
                "settled": job.settled,
            }
            for job in jobs
        ],
        "hung": sorted(hung),
        "seeds": seed_rows,
        "probe": None if probe is None else probe[0],
        "probe_passes": None if probe is None else probe[1],
        "condition": condition,
        "pid_offset": pid_offset,
        "layout_seed": seeds.process_layout(lock, pid_offset),
    }
    if order != seeds.AS_LISTED:
        request["directory_order"] = order
    outcomes: dict[tuple[int, int], tuple[bool, dict[str, Any] | None, str | None]] = {}
    missing: set[int] = set()
    wanted = {(j, s) for j in range(len(jobs)) for s in range(len(seed_rows))}
    ended: Ended | None = None
    with Worker(request, secret, plan.root, scratch) as worker:
        wait = plan.timeout + WORKER_SLACK_SECONDS
        while True:
            message = worker.receive(wait)
            if isinstance(message, Ended):
                ended = message
                break
            event = message["event"]
            if event == Event.DONE:
                break
            if event == Event.PROBLEM:
                ended = Ended("problem", str(message.get("message"))[:2000])
                break
            key = (message.get("job"), message.get("slot"))
            if event == Event.MISSING and isinstance(message.get("job"), int):
                missing.add(message["job"])
            elif (
                event == Event.OUTCOME
                and key in wanted
                and isinstance(message.get("failed"), bool)
                and (message.get("drew") is None or protocol.is_input_digest(message["drew"]))
            ):
                evidence = message.get("evidence")
                if message["failed"] and not (
                    isinstance(evidence, dict) and set(evidence) == {"kind", "exception_type", "message"}
                ):
                    evidence = failure_evidence(
                        EvidenceKind.PROTOCOL, None, "the replay reported a failure without evidence"
                    )
                outcomes[cast(tuple[int, int], key)] = (
                    message["failed"],
                    evidence if message["failed"] else None,
                    message.get("drew"),
                )  # in `wanted`
            elif event not in (Event.MODULE, Event.CALL):
                worker.close()
                ended = Ended("protocol", f"broke the message protocol ({event!r} message)")
                break
            wait = plan.timeout + request["spacing_seconds"] + WORKER_SLACK_SECONDS
    results: dict[tuple[int, int], tuple[bool, dict[str, Any] | None, str | None]] = {}
    # Each job's outcomes by slot, as the worker knew them: up to its first slot that was
    # neither reported nor left out.
    failed: dict[int, dict[int, bool]] = defaultdict(dict)
    left: set[tuple[int, int]] = set()
    for job_index in range(len(jobs)):
        for slot in range(len(seed_rows)):
            if (job_index, slot) in outcomes:
                failed[job_index][slot] = outcomes[job_index, slot][0]
            elif protocol.left_out(request["jobs"], job_index, slot, failed, len(seed_rows), request["probe_passes"]):
                left.add((job_index, slot))
            else:
                break
    for key in sorted(wanted):
        if key not in outcomes and (
            key in left or protocol.left_out(request["jobs"], *key, failed, len(seed_rows), request["probe_passes"])
        ):
            continue  # a replay that decides nothing, which the worker leaves out too
        if key[0] in missing:
            results[key] = (False, _MISSING, None)
        elif key in outcomes:
            results[key] = outcomes[key]
        else:
            evidence = _unreported(ended, plan.timeout)
            results[key] = (evidence["kind"] != EvidenceKind.UNLOADABLE, evidence, None)
    return results


def _unreported(ended: Ended | None, timeout: float) -> dict[str, Any]:
    """The evidence for a replay the interpreter never reported: a failure with why, or why
    it never ran (the module did not load)."""
    if ended is None:
        return failure_evidence(
            EvidenceKind.PROTOCOL, None, "the replay interpreter finished without reporting this replay"
        )
    if ended.kind == "timeout":
        return failure_evidence(
            EvidenceKind.TIMEOUT,
            None,
            f"a call in the replay interpreter did not return within {timeout:g} s; the runner killed it",
        )
    if ended.kind == "problem":
        return failure_evidence(
            EvidenceKind.UNLOADABLE, None, f"the replay interpreter could not load the module: {ended.detail}"
        )
    return failure_evidence(
        EvidenceKind.CRASHED if ended.kind == "exited" else EvidenceKind.PROTOCOL,
        None,
        f"the replay interpreter {ended.detail} before this replay ran",
    )
