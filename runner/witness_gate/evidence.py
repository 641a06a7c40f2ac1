"""What replays show (pure): the deciding counts, whether to escalate, and the cause.

Each witness is replayed as several variants: its shrunk and unshrunk payloads in
isolation, each after the calls that preceded it in `check` (its history), and the
shrunk payload repeatedly inside one interpreter without forking. Every replay records
the interpreter's hash secret, the `random` seed column and its slot in time. These
functions read those records and nothing else: plain values in, plain values out.
"""

from __future__ import annotations

import functools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

VARIANTS = (
    "shrunk",
    "unshrunk",
    "shrunk_history",
    "unshrunk_history",
    "in_process",
    "collector",
    "directory_order",
    "clock",
)
# The probes (replay.py): the deciding replay again, forked, under the schedule's settings of
# one condition at a time in passes, the hash secret, `random` seed and everything else
# held: when the cyclic collector runs (the collector probe, seeds.collector_settings), the
# order directories list in (the directory-order probe, seeds.directory_settings) and the
# time of day the wall clock reads (the clock probe, seeds.clock_settings). A probe decides
# only when its outcomes split by setting: otherwise it is evidence of nothing the other
# variants do not show, and its replays are reported, not counted. Each names its cause.
COLLECTOR = "collector"
DIRECTORY_ORDER = "directory_order"
CLOCK = "clock"
PROBES = {COLLECTOR: "gc", DIRECTORY_ORDER: "directory_order", CLOCK: "time"}
# The probe whose passes' bursts a mixed witness's cause reads (`cause`: `time`).
BURST_PROBE = COLLECTOR
_ISOLATED = ("shrunk", "unshrunk")
# The witness is the shrunk payload: its replays (alone, after its history, in one
# process) decide the label. The unshrunk payload decides only when none of those
# reproduces the failure (shrinking can lose a race or a timing), never because it fails
# more often: more distinct values can make a flaky order fail almost always.
_FAMILIES = {"shrunk": ("shrunk", "shrunk_history", "in_process"), "unshrunk": ("unshrunk", "unshrunk_history")}
CAUSES = (
    "deterministic",
    "history",
    "hash_secret",
    "random_seed",
    "gc",
    "process",
    "time",
    "directory_order",
    "none_found",
)
# Causes the runner controls: searching and replaying under the same lock gives the same
# witness and the same counts. The directory order: the search and every ordinary replay list
# as the sandbox's tmpfs does (reverse creation order, whatever the host's file system), and
# the probe's orders are the schedule's. Not gc: the probe sets the collector in replays, but
# where the search's collections fall and objects land depends on the paths and files it was
# given.
CONTROLLED = ("deterministic", "history", "hash_secret", "random_seed", "directory_order")


@dataclass(frozen=True)
class Replay:
    interpreter: int  # counted across rounds
    hash_secret: int
    pid_offset: int  # process ids the interpreter skipped before loading the module (seeds)
    column: int  # the `random` seed column, counted across rounds
    slot: int  # position in time within the interpreter
    failed: bool
    setting: int = -1  # a probe's setting (its index in its condition's settings, `PROBES`); -1 outside it
    # The input a `@given` replay drew from the witness's choices, as a digest; None where the
    # payload is the input itself (a property's), or the input is not plain values (`worker.drawn_input`).
    drew: str | None = None


def one_input(replays: Iterable[Replay]) -> bool:
    """Whether every replay drew the same input, and said which (`Replay.drew`): a `@given`
    test's replays that differ in outcome make a flake only then. The same choices can draw
    another input under another hash secret, process or directory order (a strategy that
    reads hash order, as `sampled_from(list(a_set))`): counted as a flake, a deterministic bug
    on one currency of a set passed under the secrets that drew another, and could be frozen
    (an adversarial review)."""
    drawn = {replay.drew for replay in replays}
    return len(drawn) == 1 and None not in drawn


# The causes whose condition cannot change what a test draws: the worker seeds `random` in
# each case after Hypothesis has drawn its arguments from the choices.
INPUT_HELD = ("random_seed",)


def counts(replays: Iterable[Replay]) -> tuple[int, int]:
    replays = list(replays)
    return sum(r.failed for r in replays), len(replays)


def deciding_variant(by_variant: Mapping[str, Sequence[Replay]]) -> str:
    """The first probe (`PROBES`) whose outcomes follow its condition's setting alone
    (`follows_setting`): then the failure comes and goes with when the collector runs, with
    the order a directory lists in, or with the time of day the wall clock reads, whatever
    the other variants happened to meet. Otherwise `replayed_variant`.

    The clock probe decides only where that variant's own outcomes came and went: code can
    tell a clock the probe set from the real one (a file's time, the boot clock, a time read
    at import), so a failure that came every time under the real clock and split under the
    probe's would be a regression made freezable (an adversarial review). It names the
    cause, `time`, all the same (`cause`)."""
    replayed = replayed_variant(by_variant)
    for probe in PROBES:
        if follows_setting(by_variant.get(probe, ())) and (probe != CLOCK or _mixed(by_variant[replayed])):
            return probe
    return replayed


def replayed_variant(by_variant: Mapping[str, Sequence[Replay]]) -> str:
    """The shrunk payload's variant that fails most reliably, or the unshrunk payload's when
    no shrunk one failed (ties go to the earlier of `VARIANTS`): the label rests on it, so a
    failure that needs its history is not hidden by the isolated replays that pass, and
    counts are never mixed across payloads. A variant after history decides only where the
    same payload alone fails never or always: a payload that fails alone only sometimes is
    nondeterministic by itself, and earlier calls that make it fail more often (warm
    threads, a clock read at a luckier moment) do not make it certain. The probes replay
    this variant's payload and history."""
    shrunk = [v for v in VARIANTS if v in _FAMILIES["shrunk"] and by_variant.get(v)]
    if any(counts(by_variant[v])[0] for v in shrunk):
        present = shrunk
    else:
        present = [v for v in VARIANTS if v not in PROBES and by_variant.get(v)]
    present = [v for v in present if v in _ISOLATED or not _mixed(by_variant[_isolated_of(v, by_variant)])]
    return max(present, key=lambda v: (_ratio(by_variant[v]), -VARIANTS.index(v)))


def _isolated_of(variant: str, by_variant: Mapping[str, Sequence[Replay]]) -> str:
    """The variant replaying the same payload alone (the unshrunk one is replayed alone only
    when it differs from the shrunk one)."""
    return "unshrunk" if variant in _FAMILIES["unshrunk"] and by_variant.get("unshrunk") else "shrunk"


def _ratio(replays: Sequence[Replay]) -> float:
    failures, runs = counts(replays)
    return failures / runs


def _mixed(replays: Sequence[Replay]) -> bool:
    failures, runs = counts(replays)
    return 0 < failures < runs


def follows_setting(replays: Sequence[Replay]) -> bool:
    """Whether a probe's outcomes split by setting: each setting gave the same outcome in
    every pass, and some settings failed where others passed. Passes run one after another,
    so a clock or a race that flips outcomes in between breaks the split."""
    by_setting = _outcomes_by(replays, lambda r: r.setting)
    passes = len(replays) // max(len(by_setting), 1)
    outcomes = [seen.pop() for seen in by_setting.values() if len(seen) == 1]
    return passes > 1 and len(outcomes) == len(by_setting) and len(set(outcomes)) == 2


# A cause is named only where outcomes that follow nothing (a race) would show its pattern by
# chance at most this often. A probe runs as many passes as keep a split by setting that rare
# whatever the race's odds (`chance_of_a_false_split`, `passes_for`); the other causes are
# read from how the replays' outcomes group, and that chance is worked out for the replays
# at hand (`chance_of_the_pattern`), with more rounds while it is too high (`escalation`).
CHANCE_LIMIT = 1 / 20_000


def false_split_at(rate: float, settings: int, passes: int) -> float:
    """The chance that replays failing at `rate` whatever the setting (a race) split by
    setting anyway (`follows_setting`): each setting gives one outcome in every pass, and not
    every setting the same one."""
    repeats = rate**passes + (1 - rate) ** passes
    return float(repeats**settings - rate ** (settings * passes) - (1 - rate) ** (settings * passes))


def chance_of_a_false_split(settings: int, passes: int) -> float:
    """`false_split_at` at its worst over failure rates from 0.1% to 99.9%: about eleven
    failures in twelve, where a setting that passes is rare, but one that passes in every pass
    is not rare enough over two passes (once in 78 probes of twelve settings)."""
    return max(false_split_at(permille / 1000, settings, passes) for permille in range(1, 1000))


@functools.cache  # pure, and read for every probe a module's replays lay out
def passes_for(settings: int) -> int:
    """The fewest passes (two at least: one pass cannot show an outcome repeat) that keep a
    probe of `settings` settings within `CHANCE_LIMIT`."""
    passes = 2
    while chance_of_a_false_split(settings, passes) > CHANCE_LIMIT:
        passes += 1
    return passes


def replayed_again(by_variant: Mapping[str, Sequence[Replay]], variant: str) -> bool:
    """Whether a further round replays `variant`. Not the unshrunk payload's variants once
    the shrunk payload alone failed on every replay so far and they agreed with themselves
    (`replayed_variant` reads them only where no shrunk variant fails, and a variant that is
    not mixed cannot keep `escalation` going). Not the variants after history or in one
    process once the shrunk payload alone failed only sometimes: from then on it decides
    for good (`replayed_variant` reads a variant after history only where the same payload
    alone is not mixed, the unshrunk payload's only where no shrunk one failed, and
    `escalation` and `cause` read the deciding variant alone), so their outcomes could
    change neither the label nor the cause. The unshrunk payload alone stays: its forks
    fall between the shrunk payload's, and leaving it out would change the process ids
    those get; the others run after the payloads alone in each interpreter (the worker's
    passes), so leaving them out moves nothing those meet."""
    if variant not in _ISOLATED and _mixed(by_variant.get("shrunk", ())):
        return False
    if variant not in _FAMILIES["unshrunk"] or _mixed(by_variant.get(variant, ())):
        return True
    failures, runs = counts(by_variant.get("shrunk", ()))
    return not (runs and failures == runs)


def escalation(by_variant: Mapping[str, Sequence[Replay]], search_was_flaky: bool, rounds: int) -> tuple[bool, str]:
    """(another round, why), the why in words a report can carry. Escalate when the deciding
    counts say "always" or "never" and more replays could show otherwise: a would-be
    regression always gets a second round of fresh hash secrets and seeds before it is
    called one, and further rounds while other evidence disagrees (another variant fails
    only sometimes, or Hypothesis saw the failure come and go while shrinking and no history
    explains it). Also while a failure shows only after earlier calls, only sometimes, and
    never alone, while its outcomes differ only between replays that share no condition the
    runner sets, and while they group as a cause would have them but outcomes that follow
    nothing would group so too often (`cause`). Otherwise stop: the outcomes and their cause
    are isolated."""
    decider = deciding_variant(by_variant)
    failures, runs = counts(by_variant[decider])
    if 0 < failures < runs:
        # Seen only after earlier calls, and only sometimes (the payload alone never failed,
        # or it would decide, `replayed_variant`): more processes may show it alone (each
        # forked replay starts from its process's memory layout, the calls in one process
        # from wherever the earlier ones left it). Or its outcomes differ only between
        # replays that share no condition (each round the same throughout, say): more
        # rounds may show which condition it follows.
        if decider not in _ISOLATED:
            return True, "it fails only sometimes, and only after earlier calls: other processes may show it alone"
        if not _held_anywhere(by_variant[decider]):
            return True, "its outcomes differ only between replays that share no condition the runner sets"
        # Group as a cause would have them, but too few replays to tell that from chance:
        # more rounds tell (for `time` the probe's passes, after the rounds, add to them).
        found, _, chance = _reading(by_variant, 0)
        if chance > CHANCE_LIMIT:
            return True, (
                f"its outcomes group as {found.replace('_', ' ')} would have them, but outcomes that follow nothing "
                f"group so once in {round(1 / chance):,}: more replays tell"
            )
        return False, "isolated: its outcomes differ between replays that hold a condition, so the cause can be read"
    if failures == runs and rounds < 2:
        return (
            True,
            "it failed every replay: a second round of fresh hash secrets and seeds before it is called certain",
        )
    if any(_mixed(replays) for replays in by_variant.values() if replays):
        return True, "another variant fails only sometimes"
    if search_was_flaky and decider in _ISOLATED:
        return True, "Hypothesis saw the failure come and go while shrinking"
    if failures:
        return False, f"settled: every replay failed, over {rounds} rounds"
    return False, "settled: no replay failed"


def _outcomes_by(replays: Sequence[Replay], condition: Callable[[Replay], Hashable]) -> dict[Hashable, set[bool]]:
    """The outcomes seen under each value of `condition`."""
    outcomes: dict[Hashable, set[bool]] = defaultdict(set)
    for replay in replays:
        outcomes[condition(replay)].add(replay.failed)
    return outcomes


def _one_outcome_each(replays: Sequence[Replay], condition: Callable[[Replay], Hashable]) -> bool:
    return all(len(seen) == 1 for seen in _outcomes_by(replays, condition).values())


def _consistent(replays: Sequence[Replay]) -> bool:
    """Whether the same hash secret and the same seed always gave the same outcome."""
    return _one_outcome_each(replays, lambda r: (r.hash_secret, r.column))


def _varies_with(
    replays: Sequence[Replay], held: Callable[[Replay], Hashable], varied: Callable[[Replay], Hashable]
) -> bool:
    """Whether two replays that share `held` but differ in `varied` had different outcomes."""
    groups: dict[object, dict[object, bool]] = defaultdict(dict)
    for replay in replays:
        groups[held(replay)][varied(replay)] = replay.failed
    return any(len(set(outcomes.values())) > 1 for outcomes in groups.values())


def _held_anywhere(replays: Sequence[Replay]) -> bool:
    """Whether some two replays with different outcomes share a hash secret, a seed column
    or a process id: only then can a cause be read with something held."""
    return not all(
        _one_outcome_each(replays, condition)
        for condition in (lambda r: r.hash_secret, lambda r: r.column, lambda r: r.pid_offset)
    )


def _follows_pid(replays: Sequence[Replay]) -> bool:
    """Whether each process id (and so each memory layout, `layout`) gave one outcome,
    across every hash secret and seed."""
    return _one_outcome_each(replays, lambda r: r.pid_offset)


def _switches(replays: Sequence[Replay]) -> list[int]:
    """How often each interpreter's outcome changed from one of its spaced slots to the next."""
    rows: dict[int, list[Replay]] = defaultdict(list)
    for replay in replays:
        rows[replay.interpreter].append(replay)
    switches = []
    for row in rows.values():
        ordered = [r.failed for r in sorted(row, key=lambda r: r.slot)]
        switches.append(sum(a != b for a, b in zip(ordered, ordered[1:])))
    return switches


def _steady_in_a_burst(probe: Sequence[Replay]) -> bool:
    """Whether each pass of the collector probe, replays that follow one another without
    pause, changed outcome at most once: a clock moves too slowly to flip a pass back and
    forth, a race between threads does not. Five spaced slots per interpreter cannot tell a
    race that fails most of the time from a clock; passes of back-to-back replays can. Per
    pass, not over the whole burst: a slow machine can stretch the burst over two of a
    clock's changes, never one pass."""
    return all(sum(a.failed != b.failed for a, b in zip(row, row[1:])) <= 1 for row in _passes(probe))


def _passes(probe: Sequence[Replay]) -> list[list[Replay]]:
    """A probe's replays in its passes, each in the order it ran."""
    ordered = sorted(probe, key=lambda r: r.slot)
    settings = len({r.setting for r in probe}) or 1
    return [ordered[start : start + settings] for start in range(0, len(ordered), settings)]


def chance_of_the_pattern(groups: Sequence[int], failures: int, ways: Callable[[int, int], int]) -> float:
    """The share of all placements of `failures` failures among the replays that fall into
    the pattern, where the replays form groups of these sizes and `ways(size, failed)` says
    in how many orders a group of `size` can hold `failed` failures and keep to it: how often
    outcomes that follow nothing, the same number of failures placed at random (a race),
    would show the pattern by chance. Exact: counted, not estimated."""
    placements = [1] + [0] * failures  # by failures placed so far
    for size in groups:
        after = [0] * (failures + 1)
        for placed, count in enumerate(placements):
            if count:
                for failed in range(min(size, failures - placed) + 1):
                    after[placed + failed] += count * ways(size, failed)
        placements = after
    return placements[failures] / math.comb(sum(groups), failures)


def _one_outcome(size: int, failed: int) -> int:
    """A group with one outcome: all failed, or none."""
    return int(failed in (0, size))


def _switching_at_most_once(size: int, failed: int) -> int:
    """A row, in order, whose outcome changes at most once: its failures first or last."""
    return 1 if failed in (0, size) else 2


def _linked(replays: Sequence[Replay], *conditions: Callable[[Replay], Hashable]) -> list[int]:
    """The sizes of the groups replays form when two that share the value of any of
    `conditions` belong together (and so do theirs, transitively)."""
    parent = list(range(len(replays)))

    def root(index: int) -> int:
        while parent[index] != index:
            parent[index] = parent[parent[index]]
            index = parent[index]
        return index

    for condition in conditions:
        first: dict[Hashable, int] = {}
        for index, replay in enumerate(replays):
            parent[root(index)] = root(first.setdefault(condition(replay), index))
    return list(Counter(root(index) for index in range(len(replays))).values())


def cause(by_variant: Mapping[str, Sequence[Replay]], history_length: int) -> tuple[str, str]:
    """(cause, one line a reviewer reads) for the deciding variant's counts: the cause the
    replays' outcomes group by, where outcomes that follow nothing would group so by chance
    at most `CHANCE_LIMIT` of the time; else none found, saying what it looked like."""
    found, line, chance = _reading(by_variant, history_length)
    if chance <= CHANCE_LIMIT:
        return found, line
    failures, runs = counts(by_variant[deciding_variant(by_variant)])
    return "none_found", (
        f"fails {failures} of {runs} replays, not shown to follow any of the conditions varied: they group as "
        f"{found.replace('_', ' ')} would have them, but failures placed at random group so once in "
        f"{round(1 / chance):,}, and a cause is named where that is once in {round(1 / CHANCE_LIMIT):,} or rarer; "
        "so far, nondeterminism the runner does not control (threads, the OS, entropy) explains them as well"
    )


def _under_the_real_clock(failures: int, runs: int, failing: int, settings: int) -> str:
    """The reason where the clock probe's times of day split a witness whose replays under the
    real clock all agreed (`deciding_variant`)."""
    seen = f"fails every one of {runs} replays" if failures else f"passes every one of {runs} replays"
    return (
        f"{seen} under the real clock, and fails at {failing} of the {settings} times of day the clock probe "
        f"started the wall clock at, in every pass: it follows the time of day, and the real clock stayed where it "
        f"{'fails' if failures else 'passes'} while the replays ran. A flake only where it comes and goes under the "
        "real clock: code can tell a clock the probe set from the real one"
    )


def _none_found(failures: int, runs: int) -> str:
    return (
        f"fails {failures} of {runs} replays, following none of the conditions varied (hash secret, random seed, "
        "history, process, time, directory order): "
        "nondeterminism the runner does not control, such as threads, the OS or entropy"
    )


def _reading(by_variant: Mapping[str, Sequence[Replay]], history_length: int) -> tuple[str, str, float]:
    """(cause, line, chance): the cause the deciding variant's outcomes group by, and the
    chance that outcomes following nothing would group so (`chance_of_the_pattern`; 0 where
    the probe decided, which its passes bound a priori, and where nothing is read from groups)."""
    decider = deciding_variant(by_variant)
    replays = by_variant[decider]
    failures, runs = counts(replays)
    clock = by_variant.get(CLOCK, ())
    if decider not in PROBES and follows_setting(clock):  # every replay the same, under the real clock
        failed_at = len({r.setting for r in clock if r.failed})
        return "time", _under_the_real_clock(failures, runs, failed_at, len({r.setting for r in clock})), 0.0
    secrets = {r.hash_secret for r in replays}
    columns = {r.column for r in replays}
    interpreters = {r.interpreter for r in replays}
    if decider in PROBES:
        failing = sorted({r.setting for r in replays if r.failed})
        settings = len({r.setting for r in replays})
        base = (
            "shrunk" if (replayed := replayed_variant(by_variant)) == "in_process" else replayed.replace("_", " ")
        )  # forked, as probed
        if decider == CLOCK:
            return (
                "time",
                f"the {base} payload, replayed with the wall clock started at {settings} times of day with its hash "
                f"secret, seed, history, collector and directory order held, fails at {len(failing)} of them in every "
                "pass and passes at the others: it follows the time the wall clock reads (time.time, datetime.now)",
                0.0,
            )
        if decider == DIRECTORY_ORDER:
            return (
                "directory_order",
                f"the {base} payload, replayed under {settings} directory orders with its hash secret, seed, history "
                f"and collector held, fails under {len(failing)} of them in every pass and passes under the others: "
                "it follows the order a directory lists in (os.listdir, os.scandir), which file systems do not "
                "promise",
                0.0,
            )
        return (
            "gc",
            f"the {base} payload, replayed under {settings} collector settings with its hash secret, seed and history "
            "held, "
            f"fails under {len(failing)} of them in every pass and passes under the others: it follows when the "
            "cyclic collector "
            "runs (the allocations before the call move it within the collector's cycle): a finalizer, a weak "
            "reference, "
            "a cycle's resources freed late",
            0.0,
        )
    if failures == 0:
        return (
            "none_found",
            f"never failed: 0 of {runs} replays of each variant (isolated, after its history, in one process)",
            0.0,
        )
    if decider not in _ISOLATED:  # so the same payload alone never failed (see deciding_variant)
        isolated_failures, isolated_runs = counts(by_variant[_isolated_of(decider, by_variant)])
        where = (
            f"after the {history_length} calls that preceded it in check"
            if decider != "in_process"
            else "when called again in the same process"
        )
        # Every failure fell after the history, none in isolation: as often as that happens
        # to failures placed among both variants' replays at random, for any of the variants
        # after history that could have been the one (the one that failed most decides).
        candidates = sum(1 for v in VARIANTS if v not in _ISOLATED and v not in PROBES and by_variant.get(v))
        return (
            "history",
            f"fails {failures} of {runs} replays {where} but {isolated_failures} of {isolated_runs} in isolation: "
            "it depends on state that earlier calls leave behind",
            candidates * math.comb(runs, failures) / math.comb(runs + isolated_runs, failures),
        )
    if failures == runs:
        return (
            "deterministic",
            f"fails on every replay: {runs} of {runs} across {len(interpreters)} interpreters "
            f"({len(secrets)} hash secrets) and {len(columns)} random seeds",
            0.0,
        )
    # Each condition is read with every other one the runner sets held: the same secret and
    # process id under another seed, the same seed and process id under another secret.
    by_column = _varies_with(replays, lambda r: (r.hash_secret, r.pid_offset), lambda r: r.column)
    by_secret = _varies_with(replays, lambda r: (r.column, r.pid_offset), lambda r: r.hash_secret)
    # Consistent and not varying with the secret: one outcome in each group of replays that
    # share a secret and seed, or a seed and process id, linked (`_linked`).
    if _consistent(replays) and by_column and not by_secret:
        failing_seeds = len({r.column for r in replays if r.failed})
        return (
            "random_seed",
            f"fails under {failing_seeds} of {len(columns)} random seeds, and a seed gives the same outcome under "
            "every hash secret: "
            "it follows the global random state",
            chance_of_the_pattern(
                _linked(replays, lambda r: (r.hash_secret, r.column), lambda r: (r.column, r.pid_offset)),
                failures,
                _one_outcome,
            ),
        )
    if _consistent(replays) and by_secret and not by_column:
        failing_secrets = len({r.hash_secret for r in replays if r.failed})
        return (
            "hash_secret",
            f"fails under {failing_secrets} of {len(secrets)} hash secrets, and a secret gives the same outcome for "
            "every seed: "
            "it follows hash order (PYTHONHASHSEED)",
            chance_of_the_pattern(
                _linked(replays, lambda r: (r.hash_secret, r.column), lambda r: (r.hash_secret, r.pid_offset)),
                failures,
                _one_outcome,
            ),
        )
    switches = _switches(replays)
    if not any(switches) and _varies_with(replays, lambda r: (r.hash_secret, r.column), lambda r: r.interpreter):
        if _follows_pid(replays):
            what = (
                "the process: its process id, or the memory layout that goes with it (id() order, objects hashed by "
                "identity); "
                "the interpreters at each process id agreed, under their different hash secrets and seeds"
            )
        else:
            what = (
                "the process, and not what the runner sets for it (interpreters at the same process id disagree): "
                "memory it "
                "does not arrange (objects over 512 bytes, or past a pool's worth of one size), or a clock slower "
                "than one "
                "interpreter's replays"
            )
        return (
            "process",
            f"fails {failures} of {runs} replays: steady within each interpreter, but fresh interpreters under the "
            "same hash "
            f"secret and seed disagree: it follows {what}",
            chance_of_the_pattern(_linked(replays, lambda r: r.interpreter), failures, _one_outcome),
        )
    burst = by_variant.get(BURST_PROBE, ())
    if max(switches) == 1 and _steady_in_a_burst(burst):
        # The spaced slots and the probe's passes are placed independently: the chances multiply.
        burst_failures, _ = counts(burst)
        return (
            "time",
            f"fails {failures} of {runs} replays in runs that follow the clock (each interpreter switched at most once "
            "across its spaced slots), not the hash secret or the seed alone: it depends on time",
            chance_of_the_pattern(_linked(replays, lambda r: r.interpreter), failures, _switching_at_most_once)
            * chance_of_the_pattern([len(row) for row in _passes(burst)], burst_failures, _switching_at_most_once),
        )
    return "none_found", _none_found(failures, runs), 0.0
