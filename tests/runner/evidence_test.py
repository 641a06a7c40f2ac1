"""The pure reading of replays: the deciding variant, escalation and the cause, table-tested
on replay grids laid out the way `replay.plan_round` lays them out."""

from __future__ import annotations

import itertools

import pytest

from witness_gate.evidence import (
    Replay,
    _one_outcome,
    _switching_at_most_once,
    cause,
    chance_of_the_pattern,
    counts,
    deciding_variant,
    escalation,
    false_split_at,
    follows_setting,
    one_input,
    replayed_again,
)
from witness_gate.replay import plan_round

LOCK = {"seed_schedule": [12345], "replays": 5, "replay_interpreters": 6}
PLAN = plan_round(LOCK, 0, search_secret=7, search_pid_offset=3)


def _more(by_variant, search_was_flaky: bool, rounds: int) -> bool:
    return escalation(by_variant, search_was_flaky, rounds)[0]


def grid(fails) -> list[Replay]:
    """One replay per (interpreter, slot) of round one; `fails(interpreter, column, slot)`."""
    return [
        Replay(i.index, i.hash_secret, i.pid_offset, column, slot, bool(fails(i, column, slot)))
        for i in PLAN
        for slot, column in enumerate(i.columns)
    ]


def test_the_plan_changes_the_secret_and_the_process_id_in_turn():
    first = PLAN[0]
    assert (first.hash_secret, first.pid_offset, first.columns) == (7, 3, (0, 1, 2, 3, 4))  # the search's
    for left, right in zip(PLAN, PLAN[1:]):
        assert (left.hash_secret != right.hash_secret) + (left.pid_offset != right.pid_offset) == 1
    secrets, pids = [i.hash_secret for i in PLAN], [i.pid_offset for i in PLAN]
    assert len(set(secrets)) == 3 and len(set(pids)) == 3
    assert 0 in secrets  # hash randomization off, as PYTHONHASHSEED=0 services run
    for one in PLAN:  # each secret meets two process ids, each process id two secrets, under the same seeds
        assert len({other.pid_offset for other in PLAN if other.hash_secret == one.hash_secret}) == 2
        assert len({other.hash_secret for other in PLAN if other.pid_offset == one.pid_offset}) == 2
        assert all(other.columns == one.columns for other in PLAN if other.hash_secret == one.hash_secret)
    for left, right in zip(PLAN[0::2], PLAN[1::2]):  # the two secrets at one process id share seeds
        assert set(left.columns) & set(right.columns)
    later = plan_round(LOCK, 1, search_secret=7, search_pid_offset=3)
    assert not {c for i in later for c in i.columns} & {c for i in PLAN for c in i.columns}
    assert 7 not in {i.hash_secret for i in later}
    assert not {i.pid_offset for i in later} & {i.pid_offset for i in PLAN} and len({i.pid_offset for i in later}) == 3


def test_a_witness_a_leg_found_with_randomization_off_meets_three_secrets_in_its_first_round():
    # The search's leg under PYTHONHASHSEED=0 (`seeds.search_legs`) found it: the round's
    # first fresh secret would be 0 again, so the round's own first draw takes its place.
    secrets = [i.hash_secret for i in plan_round(LOCK, 0, search_secret=0, search_pid_offset=3)]
    assert secrets[0] == 0 and secrets.count(0) == 2 and len(set(secrets)) == 3, secrets
    assert {i.hash_secret for i in PLAN} - {7, 0} < set(secrets)  # the round's other secret is kept


@pytest.mark.parametrize("count", [3, 4, 5, 6, 7, 12])
def test_every_secret_and_process_id_of_a_round_is_linked(count):
    # Secrets and process ids are the nodes, interpreters the edges: one chain through all of
    # them, so a failure that follows one of them cannot also follow the other.
    plan = plan_round({**LOCK, "replay_interpreters": count}, 0, search_secret=7, search_pid_offset=3)
    linked, edges = (
        {("secret", plan[0].hash_secret)},
        [(("secret", i.hash_secret), ("pid", i.pid_offset)) for i in plan],
    )
    for _ in edges:
        linked |= {node for edge in edges if set(edge) & linked for node in edge}
    assert linked == {node for edge in edges for node in edge}
    assert len({i.pid_offset for i in plan}) == (count + 1) // 2


SECRETS = sorted({i.hash_secret for i in PLAN})
PIDS = sorted({i.pid_offset for i in PLAN})


@pytest.mark.parametrize(
    "failing", [set(c) for n in range(1, len(PIDS)) for c in itertools.combinations(PIDS, n)], ids=str
)
def test_any_split_of_the_process_ids_is_the_process_id(failing):
    # A sampler seeded from os.getpid(), sorted(key=id): whichever process ids (and so memory
    # layouts) it fails under, never the hash secret.
    found, line = cause({"shrunk": grid(lambda i, c, s: i.pid_offset in failing)}, 0)
    assert found == "process" and "it follows the process: its process id, or the memory layout" in line


@pytest.mark.parametrize(
    "failing", [set(c) for n in range(1, len(SECRETS)) for c in itertools.combinations(SECRETS, n)], ids=str
)
def test_any_split_of_the_hash_secrets_is_the_hash_secret(failing):
    assert cause({"shrunk": grid(lambda i, c, s: i.hash_secret in failing)}, 0)[0] == "hash_secret"


def test_a_failure_in_one_interpreter_alone_is_not_a_hash_secret():
    # Seen by a review of an open chain of secrets: the first secret met one process id, so
    # nothing checked that it gives one outcome, and a lone failure looked like hash order.
    for lone in PLAN:
        assert cause({"shrunk": grid(lambda i, c, s: i is lone)}, 0)[0] == "process"


CASES = [
    ("every replay fails", lambda i, c, s: True, "deterministic"),
    ("a seed decides", lambda i, c, s: c % 3 == 0, "random_seed"),
    (
        "a hash secret decides",
        lambda i, c, s: i.hash_secret in (PLAN[1].hash_secret, PLAN[3].hash_secret),
        "hash_secret",
    ),
    # Memory the runner does not arrange (objects over 512 bytes, ordered by id()):
    # each interpreter steady, interpreters under one secret and seeds disagree, and so do two
    # at one process id. Not time: nothing switched.
    (
        "the process decides: steady in each interpreter, not by process id",
        lambda i, c, s: i.index in (0, 2, 3),
        "process",
    ),
    ("nothing varied decides", lambda i, c, s: (i.index * 7 + s * 3) % 4 == 0, "none_found"),
    ("never fails", lambda i, c, s: False, "none_found"),
]


@pytest.mark.parametrize("name, fails, expected", CASES, ids=[case[0] for case in CASES])
def test_the_cause_follows_the_pattern(name, fails, expected):
    assert cause({"shrunk": grid(fails)}, 0)[0] == expected


def test_a_failure_only_after_its_history_is_a_history_regression():
    replays = {"shrunk": grid(lambda i, c, s: False), "shrunk_history": grid(lambda i, c, s: True)}
    assert deciding_variant(replays) == "shrunk_history"
    assert counts(replays["shrunk_history"]) == (30, 30)
    found, line = cause(replays, 12)
    assert found == "history" and "after the 12 calls that preceded it" in line


def test_a_history_variant_that_varies_while_isolation_varies_too_is_not_blamed_on_history():
    replays = {"shrunk": grid(lambda i, c, s: c % 3 == 0), "shrunk_history": grid(lambda i, c, s: c % 2 == 0)}
    assert deciding_variant(replays) == "shrunk"
    assert cause(replays, 3)[0] != "history"


@pytest.mark.parametrize("after_history", ["shrunk_history", "in_process"])
def test_a_payload_that_fails_alone_only_sometimes_is_a_flake_however_reliably_its_history_fails(after_history):
    # Seen on one CPU: a thread race lost on 112 of 150 isolated replays and on every replay
    # after earlier calls in one process (warm threads). Fails alone, so history is not its
    # cause; fails sometimes, so it is not certain: the isolated counts decide.
    replays = {"shrunk": grid(lambda i, c, s: (i.index + s) % 4 != 0), after_history: grid(lambda *_: True)}
    assert deciding_variant(replays) == "shrunk"
    assert 0 < counts(replays["shrunk"])[0] < counts(replays["shrunk"])[1]
    assert cause(replays, 3)[0] != "history"


def test_escalation():
    always, sometimes, never = grid(lambda *_: True), grid(lambda i, c, s: c % 2 == 0), grid(lambda *_: False)
    assert _more({"shrunk": always}, search_was_flaky=False, rounds=1)  # a would-be regression is confirmed
    assert not _more({"shrunk": always}, search_was_flaky=False, rounds=2)
    assert not _more({"shrunk": sometimes}, search_was_flaky=True, rounds=1)  # already a flake
    assert _more({"shrunk": always, "unshrunk": sometimes}, search_was_flaky=False, rounds=2)  # evidence disagrees
    assert not _more(
        {"shrunk": never, "unshrunk": sometimes}, search_was_flaky=False, rounds=1
    )  # unshrunk decides: a flake
    assert _more({"shrunk": never}, search_was_flaky=True, rounds=1)
    assert not _more({"shrunk": never}, search_was_flaky=False, rounds=1)
    # A history that explains the search's flakiness needs no more rounds once confirmed.
    assert not _more({"shrunk": never, "shrunk_history": always}, search_was_flaky=True, rounds=2)
    # Seen only in one process, only sometimes, never alone: an identity order the forked
    # replays' layouts have not met yet looks like this; more processes may show it alone.
    assert _more({"shrunk": never, "in_process": sometimes}, search_was_flaky=False, rounds=1)
    assert _more({"shrunk": never, "shrunk_history": sometimes}, search_was_flaky=False, rounds=3)
    # A hash-order flake whose first round failed under every secret and whose second passed
    # under every one: the rounds share no secret, seed or process id, so nothing isolates it yet.
    first, second = grid(lambda *_: True), grid(lambda *_: False)
    later = [
        Replay(r.interpreter + 6, r.hash_secret + 1, r.pid_offset + 64, r.column + 100, r.slot, r.failed)
        for r in second
    ]
    assert _more({"shrunk": first + later}, search_was_flaky=False, rounds=2)
    assert not _more({"shrunk": sometimes, "in_process": always}, search_was_flaky=False, rounds=1)


def test_the_witness_decides_even_when_the_unshrunk_payload_fails_more():
    # The set-order bug: the shrunk witness fails under some hash secrets only, the
    # unshrunk payload (more distinct values) under almost all of them.
    replays = {
        "shrunk": grid(lambda i, c, s: i.hash_secret in (PLAN[1].hash_secret, PLAN[3].hash_secret)),
        "unshrunk": grid(lambda i, c, s: True),
        "in_process": grid(lambda i, c, s: i.hash_secret == PLAN[1].hash_secret),
    }
    assert deciding_variant(replays) == "shrunk"
    assert cause(replays, 0)[0] == "hash_secret"


def test_the_unshrunk_payload_decides_only_when_no_shrunk_variant_reproduces():
    replays = {
        "shrunk": grid(lambda *_: False),
        "in_process": grid(lambda *_: False),
        "unshrunk": grid(lambda i, c, s: c % 3 == 0),
    }
    assert deciding_variant(replays) == "unshrunk"
    assert cause(replays, 0)[0] == "random_seed"


def test_an_unshrunk_history_without_its_own_isolated_replays_is_compared_with_the_shrunk_payload():
    # The unshrunk payload equals the shrunk one (so it is not replayed alone), but its
    # history differs: the same payload alone is the shrunk replays.
    replays = {
        "shrunk": grid(lambda *_: False),
        "in_process": grid(lambda *_: False),
        "unshrunk_history": grid(lambda *_: True),
    }
    assert deciding_variant(replays) == "unshrunk_history"
    assert cause(replays, 4)[0] == "history"


SETTINGS = 12


def probe(fails, passes: int = 2, settings: int = SETTINGS) -> list[Replay]:
    """A probe's replays (the collector's by default): `passes` passes over the settings, one
    interpreter, the search's secret and seed column 0; `fails(setting, slot)`."""
    slots = [setting for _ in range(passes) for setting in range(settings)]
    return [Replay(6, 7, 3, 0, slot, bool(fails(setting, slot)), setting=setting) for slot, setting in enumerate(slots)]


# The weakref.finalize bug of #26: after the same history every forked replay reaches the
# collector at the same allocation count, so the ordinary variants fail every time (or
# never), and only the probe shows the failure come and go with the collector.
COLLECTOR_CASES = [
    ("fails only where the collector runs during the call", lambda setting, slot: setting in (1, 3), True),
    ("fails only where the ordinary replays meet the collector", lambda setting, slot: setting == 0, True),
    ("fails under every setting: nothing follows the collector", lambda setting, slot: True, False),
    ("passes under every setting", lambda setting, slot: False, False),
    # A clock that flips once mid-probe: the passes disagree, so it is not the collector.
    ("a clock flips between passes", lambda setting, slot: slot >= 16, False),
    (
        "a race: the same setting fails in one pass and passes in another",
        lambda setting, slot: (slot * 7) % 5 == 0,
        False,
    ),
]


@pytest.mark.parametrize("name, fails, follows", COLLECTOR_CASES, ids=[case[0] for case in COLLECTOR_CASES])
def test_the_collector_probe_decides_only_when_its_outcomes_split_by_setting(name, fails, follows):
    replays = {"shrunk": grid(lambda i, c, s: True), "collector": probe(fails)}
    assert (deciding_variant(replays) == "collector") is follows
    assert (cause(replays, 0)[0] == "gc") is follows
    if follows:
        failures, runs = counts(replays["collector"])
        assert 0 < failures < runs == 2 * SETTINGS  # so the label is a flake, from the probe's own counts
        assert "under 12 collector settings" in cause(replays, 0)[1]
    else:  # the ordinary variants decide, as without the probe
        assert cause(replays, 0)[0] == cause({"shrunk": replays["shrunk"]}, 0)[0]


@pytest.mark.parametrize("rate", [0.2, 0.5, 11 / 12])
@pytest.mark.parametrize("settings, passes", [(3, 2), (2, 3), (4, 2)])
def test_the_chance_of_a_false_split_is_what_follows_setting_decides_over_every_outcome(rate, settings, passes):
    # Every outcome a race failing at `rate` whatever the setting can give, weighed by its
    # chance: those follows_setting calls a split add up to false_split_at.
    chance = 0.0
    for outcomes in itertools.product((False, True), repeat=settings * passes):
        if follows_setting(probe(lambda setting, slot: outcomes[slot], passes, settings)):
            failures = sum(outcomes)
            chance += rate**failures * (1 - rate) ** (len(outcomes) - failures)
    assert chance > 0
    assert chance == pytest.approx(false_split_at(rate, settings, passes))


@pytest.mark.parametrize("groups", [(3, 2), (2, 2, 2), (4, 1, 2)])
@pytest.mark.parametrize("pattern", ["one outcome a group", "at most one change a row"])
def test_the_chance_of_a_pattern_is_its_share_of_every_placement_of_the_failures(groups, pattern):
    # Every placement of each number of failures among the replays, counted: the share that
    # keeps to the pattern is what chance_of_the_pattern says.
    keeps = {
        "one outcome a group": lambda row: len(set(row)) <= 1,
        "at most one change a row": lambda row: sum(a != b for a, b in zip(row, row[1:])) <= 1,
    }[pattern]
    ways = {"one outcome a group": _one_outcome, "at most one change a row": _switching_at_most_once}[pattern]
    total = sum(groups)
    for failures in range(total + 1):
        kept = placed = 0
        for failing in itertools.combinations(range(total), failures):
            outcomes = [index in failing for index in range(total)]
            rows, start = [], 0
            for size in groups:
                rows.append(outcomes[start : start + size])
                start += size
            placed += 1
            kept += all(keeps(row) for row in rows)
        assert chance_of_the_pattern(groups, failures, ways) == pytest.approx(kept / placed)


def test_a_race_whose_one_round_groups_by_seed_by_chance_gets_more_rounds_and_no_cause():
    # Seen simulating races that fail nine times in ten (bench/false_causes.py): 28 failures of
    # 30, the two passes under one secret and one seed, in the two interpreters that share
    # them, so the seed seems to decide: 28 failures placed at random group so once in 109.
    race = grid(lambda i, c, s: not (i.index in (3, 4) and s == 3))
    found, line = cause({"shrunk": race}, 0)
    assert found == "none_found", line
    assert "they group as random seed would have them, but failures placed at random group so once in 109," in line
    more, why = escalation({"shrunk": race}, False, 1)
    assert more and why.startswith("its outcomes group as random seed would have them"), why
    # Two seeds that pass wherever they are met, under every secret: the seed is shown.
    assert cause({"shrunk": grid(lambda i, c, s: c not in (5, 6))}, 0)[0] == "random_seed"


def test_one_pass_of_the_probe_proves_nothing():
    assert (
        deciding_variant(
            {"shrunk": grid(lambda i, c, s: True), "collector": probe(lambda setting, slot: setting == 0, passes=1)}
        )
        == "shrunk"
    )


def test_the_probe_names_the_variant_it_replayed():
    replays = {
        "shrunk": grid(lambda i, c, s: False),
        "shrunk_history": grid(lambda i, c, s: True),
        "collector": probe(lambda setting, slot: setting > 2),
    }
    assert deciding_variant(replays) == "collector"
    assert "the shrunk history payload, replayed under 12 collector settings" in cause(replays, 3)[1]


def test_a_clock_needs_a_burst_of_replays_that_changes_at_most_once():
    # A race that fails most of the time can look like a clock in five spaced slots (each
    # interpreter switched once at most): 28 failures of 30 placed at random look so once in
    # 6. The probe's burst, back to back, shows a clock changing at most once a pass, where a
    # race flips back and forth.
    spaced = grid(lambda i, c, s: not (i.index in (2, 4) and s == 0))
    found, line = cause({"shrunk": spaced}, 0)
    assert found == "none_found" and "they group as time would have them" in line and "once in 6," in line
    clock = grid(lambda i, c, s: i.index * 5 + s >= 12)  # later interpreters, later slots
    assert cause({"shrunk": clock, "collector": probe(lambda setting, slot: slot >= 10)}, 0)[0] == "time"
    assert (
        cause({"shrunk": spaced, "collector": probe(lambda setting, slot: slot not in (3, 9, 14))}, 0)[0]
        == "none_found"
    )
    assert cause({"shrunk": spaced, "collector": probe(lambda setting, slot: slot >= 10)}, 0)[0] == "time"
    # A slow burst may span two of a clock's changes, one in each of two passes: still a clock.
    assert cause({"shrunk": spaced, "collector": probe(lambda setting, slot: 4 <= slot < 15)}, 0)[0] == "time"


DIRECTORY_SETTINGS = 6  # as listed, reversed, four orders the schedule draws


def directory_probe(fails, passes: int = 4) -> list[Replay]:
    return probe(fails, passes, DIRECTORY_SETTINGS)


# The spool bug of listdir_order: the search and every ordinary replay list as the sandbox's
# tmpfs does, so they fail every time; only the directory-order probe shows the outcome follow
# the order.
DIRECTORY_CASES = [
    ("fails as listed, passes reversed", lambda setting, slot: setting != 1, True),
    ("fails only under some drawn orders", lambda setting, slot: setting in (2, 5), True),
    ("fails under every order: nothing follows the order", lambda setting, slot: True, False),
    ("passes under every order", lambda setting, slot: False, False),
    ("a clock flips between passes", lambda setting, slot: slot >= 9, False),
    ("a race: the same order fails in one pass and passes in another", lambda setting, slot: slot != 13, False),
]


@pytest.mark.parametrize("name, fails, follows", DIRECTORY_CASES, ids=[case[0] for case in DIRECTORY_CASES])
def test_the_directory_order_probe_names_its_cause_only_when_its_outcomes_split_by_order(name, fails, follows):
    always = grid(lambda i, c, s: True)
    replays = {
        "shrunk": always,
        "collector": probe(lambda setting, slot: True),
        "directory_order": directory_probe(fails),
    }
    assert (deciding_variant(replays) == "directory_order") is follows
    assert (cause(replays, 0)[0] == "directory_order") is follows
    if follows:
        failures, runs = counts(replays["directory_order"])
        assert 0 < failures < runs == 4 * DIRECTORY_SETTINGS  # a flake, from the probe's own counts
        assert "under 6 directory orders" in cause(replays, 0)[1]
    else:  # the ordinary variants decide, exactly as without the probe
        assert cause(replays, 0) == cause({"shrunk": always, "collector": replays["collector"]}, 0)


def test_the_directory_order_probe_leaves_every_other_cause_as_it_was():
    # Whatever the ordinary replays and the collector probe show, a directory-order probe whose
    # outcomes do not split changes neither the deciding variant nor the cause nor its line.
    unsplit = [directory_probe(lambda setting, slot: True), directory_probe(lambda setting, slot: slot % 5 == 0)]
    for _, fails, expected in CASES:
        for directory in unsplit:
            replays = {"shrunk": grid(fails)}
            assert cause({**replays, "directory_order": directory}, 0) == cause(replays, 0), expected
    collector = probe(lambda setting, slot: setting in (1, 3))
    assert (
        cause({"shrunk": grid(lambda i, c, s: True), "collector": collector, "directory_order": unsplit[1]}, 0)[0]
        == "gc"
    )
    # Where both split, the collector's is read first, as before the directory order was probed.
    both = {
        "shrunk": grid(lambda i, c, s: True),
        "collector": collector,
        "directory_order": directory_probe(lambda setting, slot: setting == 0),
    }
    assert deciding_variant(both) == "collector"


CLOCK_SETTINGS = 8  # times of day the schedule draws (`seeds.clock_settings`)


def clock_probe(fails, passes: int = 4) -> list[Replay]:
    return probe(fails, passes, CLOCK_SETTINGS)


# A failure that needs the clock in a window of the time of day: the clock probe's times of
# day split it. It decides where the ordinary replays under the real clock came and went
# too; where they all failed (the window held the real clock throughout) it only names the
# cause: code can tell the probe's clock from the real one, and a failure that came every
# time under the real clock must not become a flake to freeze.
CLOCK_CASES = [
    ("fails at some times of day", lambda setting, slot: setting in (1, 4, 6), True),
    ("passes at one time of day alone", lambda setting, slot: setting != 5, True),
    ("fails at every time of day: nothing follows the clock", lambda setting, slot: True, False),
    ("passes at every time of day", lambda setting, slot: False, False),
    ("a race: the same time of day fails in one pass and passes in another", lambda setting, slot: slot != 13, False),
]
MIXED = lambda i, c, s: s in (1, 2)  # noqa: E731  # the real clock met the window in some slots


@pytest.mark.parametrize("name, fails, follows", CLOCK_CASES, ids=[case[0] for case in CLOCK_CASES])
def test_the_clock_probe_decides_a_flake_of_the_time_of_day_only_where_the_real_clock_showed_it_come_and_go(
    name, fails, follows
):
    for ordinary in (MIXED, lambda i, c, s: True, lambda i, c, s: False):
        replays = {
            "shrunk": grid(ordinary),
            "collector": probe(lambda setting, slot: True),
            "directory_order": directory_probe(lambda setting, slot: True),
            "clock": clock_probe(fails),
        }
        without = {variant: replays[variant] for variant in ("shrunk", "collector", "directory_order")}
        mixed = ordinary is MIXED
        assert (deciding_variant(replays) == "clock") is (follows and mixed)
        found, line = cause(replays, 0)
        assert (found == "time") is follows or (mixed and cause(without, 0)[0] == "time")
        if follows and mixed:
            failures, runs = counts(replays["clock"])
            assert 0 < failures < runs == 4 * CLOCK_SETTINGS  # a flake, from the probe's own counts
            assert "wall clock started at 8 times of day" in line
        elif follows:  # the ordinary replays decide the label; the probe names the cause
            assert deciding_variant(replays) == "shrunk"
            failed = counts(replays["shrunk"])[0]
            assert line.startswith(("fails every one of 30" if failed else "passes every one of 30") + " replays under")
            assert "it follows the time of day" in line
        else:  # exactly as without the probe
            assert cause(replays, 0) == cause(without, 0)


def test_the_clock_probe_is_read_after_the_collector_and_the_directory_order():
    clock = clock_probe(lambda setting, slot: setting < 4)
    always = grid(MIXED)
    assert deciding_variant({"shrunk": always, "collector": probe(lambda s, _: s in (1, 3)), "clock": clock}) == (
        "collector"
    )
    assert deciding_variant(
        {"shrunk": always, "directory_order": directory_probe(lambda s, _: s == 0), "clock": clock}
    ) == ("directory_order")


def test_the_unshrunk_payload_is_not_replayed_again_once_the_shrunk_one_always_failed_and_it_agreed():
    always, never = grid(lambda i, c, s: True), grid(lambda i, c, s: False)
    sometimes = grid(lambda i, c, s: s % 2)
    assert not replayed_again({"shrunk": always, "unshrunk": always}, "unshrunk")
    assert not replayed_again({"shrunk": always, "unshrunk": never}, "unshrunk_history")
    assert replayed_again(
        {"shrunk": always, "unshrunk": sometimes}, "unshrunk"
    )  # mixed: it keeps escalation going, as before
    assert replayed_again({"shrunk": sometimes, "unshrunk": always}, "unshrunk")  # it may decide
    assert replayed_again({"shrunk": never, "unshrunk": always}, "unshrunk")
    assert replayed_again({}, "unshrunk")  # round one replays every variant
    assert all(replayed_again({"shrunk": always}, variant) for variant in ("shrunk", "shrunk_history", "in_process"))


def test_once_the_shrunk_payload_alone_is_mixed_its_variants_after_history_and_in_one_process_are_not_replayed_again():
    always, sometimes = grid(lambda i, c, s: True), grid(lambda i, c, s: s % 2)
    mixed_alone = {"shrunk": sometimes, "shrunk_history": always, "unshrunk_history": always, "in_process": always}
    for variant in ("shrunk_history", "unshrunk_history", "in_process"):
        assert not replayed_again(mixed_alone, variant)
        # Leaving them out changes nothing read: the payload alone decides, and every later
        # round adds to it alone.
        assert deciding_variant(mixed_alone) == "shrunk"
        assert deciding_variant({**mixed_alone, variant: sometimes}) == "shrunk"
    assert replayed_again(mixed_alone, "shrunk")
    assert replayed_again({**mixed_alone, "unshrunk": always}, "unshrunk")  # its forks set the shrunk one's pids
    # While the payload alone is not mixed, a variant after history may still decide.
    assert replayed_again({"shrunk": grid(lambda i, c, s: False), "shrunk_history": sometimes}, "shrunk_history")


def test_replays_drew_one_input_only_when_each_said_which_and_all_said_the_same():
    jpy, eur = "a" * 32, "b" * 32
    assert one_input([Replay(0, 7, 0, 0, 0, True, drew=jpy), Replay(1, 0, 0, 0, 0, False, drew=jpy)])
    # Under another secret the same choices drew another currency (`sampled_from(list(a_set))`).
    assert not one_input([Replay(0, 7, 0, 0, 0, True, drew=jpy), Replay(1, 0, 0, 0, 0, False, drew=eur)])
    # One replay could not say what it drew (an address in its input, st.data(), a crash).
    assert not one_input([Replay(0, 7, 0, 0, 0, True, drew=jpy), Replay(1, 0, 0, 0, 0, False)])
    assert not one_input([])
