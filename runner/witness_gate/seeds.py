"""Every source of nondeterminism the runner controls, drawn from the lock's seed schedule.

The schedule itself is derived from the fixture digest and the generator version (see
`lock.seed_schedule`); everything here is a pure function of it and of names the
witness records, so two machines derive the same hash secrets and `random` seeds and
the same witness replays the same way. Nothing here reads the clock or the caller's
environment.
"""

from __future__ import annotations

import calendar
import hashlib
from typing import Any

# PYTHONHASHSEED accepts 0..4294967295; 0 disables randomisation, which is one secret among many.
_HASH_SECRETS = 1 << 32


def _derive(lock: dict[str, Any], *parts: object) -> int:
    material = "\0".join(["witness-gate/seeds/v1", str(lock["seed_schedule"][0]), *(str(part) for part in parts)])
    return int.from_bytes(hashlib.sha256(material.encode()).digest()[:8], "big")


def check_hash_secret(lock: dict[str, Any], module_path: str) -> int:
    """The hash secret of the interpreter that searches one property module."""
    return _derive(lock, "check-hash-secret", module_path) % _HASH_SECRETS


# The search's legs (`search_legs`), each a hash secret and a directory order of its own.
# A set of fixed strings (a table's keys) iterates in an order the hash secret alone decides,
# whatever the input, and a directory lists in the order its file system gives, whatever
# the names: one interpreter meets one of each. Each leg meets one more: a failure that
# follows the order of a two-element set (half of all secrets) is missed by the whole search
# once in 2^4, or once in 2^3 when randomization off never shows it.
_DRAWN_LEGS = 2
# A leg runs the first cases of each search again (`search_leg_cases`): a failure that needs
# a hash or directory order, whatever the input, fails on the first case under that order.
_LEG_SHARE = 10


def search_legs(lock: dict[str, Any], module_path: str) -> tuple[tuple[int, int], ...]:
    """The (hash secret, directory order) pairs `check` searches one property module under,
    in order: the module's own secret as the file system lists (the whole search), then its
    legs: hash randomization off (PYTHONHASHSEED=0, as services started so run) with the
    listing reversed (creation order on the workers' tmpfs, which lists newest first), and
    secrets and orders the schedule draws."""
    drawn = (
        (
            _derive(lock, "search-leg-hash-secret", module_path, leg) % _HASH_SECRETS,
            2 + _derive(lock, "search-leg-directory-order", module_path, leg) % _ORDERS,
        )
        for leg in range(_DRAWN_LEGS)
    )
    return ((check_hash_secret(lock, module_path), AS_LISTED), (0, REVERSED), *drawn)


def search_leg_cases(lock: dict[str, Any]) -> int:
    """How many cases each search of a leg runs at most, unless one fails: the first tenth of
    the suite's `max_examples` (at least one; fewer where a test's own search is shorter), the
    whole search's first cases under another secret and directory order."""
    return max(1, int(lock["max_examples"]) // _LEG_SHARE)


def call_random_seed(search_seed: int, assertion_id: str, payload_bytes: bytes) -> int:
    """The global `random` seed for one property call during `check`.

    A function of the payload, not of the call's position: the same payload always sees
    the same `random` state, so Hypothesis can shrink a failure that follows `random`
    without calling it flaky, while different payloads explore different branches."""
    material = (
        b"witness-gate/call-random/v1\0"
        + str(search_seed).encode()
        + b"\0"
        + assertion_id.encode()
        + b"\0"
        + payload_bytes
    )
    return int.from_bytes(hashlib.sha256(material).digest()[:8], "big")


# Replay secret 1 (round one's first fresh secret) is hash randomization off, as services
# started with PYTHONHASHSEED=0 run: an order that only that secret gives is seen.
_RANDOMIZATION_OFF_SECRET = 1


def replay_hash_secret(lock: dict[str, Any], number: int) -> int:
    """Replay hash secret number `number` (counted across rounds; see replay.plan_round)."""
    if number == _RANDOMIZATION_OFF_SECRET:
        return 0
    return _derive(lock, "replay-hash-secret", number) % _HASH_SECRETS


def replay_random_seed(lock: dict[str, Any], column: int) -> int:
    """The global `random` seed of replay column `column` (counted across rounds)."""
    return _derive(lock, "replay-random", column)


# Process ids a worker skips before it loads the module (worker.process_id.continue_at_offset):
# in the sandbox's own pid namespace ids are handed out in order, so without this every
# worker would be the same pid and code seeded from os.getpid() would look deterministic.
_PID_OFFSETS = 64


def check_pid_offset(lock: dict[str, Any], module_path: str) -> int:
    """How many process ids the worker that searches one property module skips."""
    return _derive(lock, "check-pid-offset", module_path) % _PID_OFFSETS


def replay_pid_offsets(lock: dict[str, Any], round_number: int, count: int, avoid: int) -> tuple[int, ...]:
    """`count` process-id offsets for replay round `round_number`, never `avoid` (the
    search's), distinct from each other (interpreters that share a hash secret differ in
    their process ids for certain) and, while the offsets last, from every earlier round's
    (each offset brings its own memory layout, `process_layout`: a later round meets new
    ones)."""
    earlier: list[int] = []
    draw = 0
    for _ in range(round_number + 1):
        taken = set(earlier) if len(set(earlier)) + count < _PID_OFFSETS else set()
        current: list[int] = []
        while len(current) < count:
            offset = _derive(lock, "replay-pid-offset", draw) % _PID_OFFSETS
            draw += 1
            if offset != avoid and offset not in taken and offset not in current:
                current.append(offset)
        earlier += current
    return tuple(current)


def process_layout(lock: dict[str, Any], pid_offset: int) -> int:
    """The seed of the memory layout a worker's forked replays start from (`worker.heap_layout`): one
    per process id offset, so a process is one condition, its id and its layout."""
    return _derive(lock, "process-layout", pid_offset)


# The collector probe's settings are shares of the young generation's threshold
# (gc.get_threshold()[0]: 700 on CPython 3.9-3.12, 2000 on 3.13), in thousandths, so the
# schedule is the same on every interpreter and each setting lands the call at the same
# point of its collector's cycle.
PER_MILLE = 1000
_SPREAD_SETTINGS = 10


def collector_settings(lock: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """The settings the collector probe replays a witness under, right before the call
    (after its history), as `allocate_per_mille` extra live containers, thousandths of the
    young threshold: none (where the ordinary replays meet the collector: each forked
    replay starts right after a collection), ten an eleventh of the cycle apart from an
    offset the schedule draws, and the whole cycle (with the ballast's own list, one past
    the threshold: the collector runs between the history and the call whatever they
    allocate): a failure that needs the collector to run within a stretch of the call an
    eleventh of the cycle long is met by one of them at least. Only what
    production meets: the collector stays on at the interpreter's own thresholds (a
    collector turned off or set to run at every allocation is nothing the code meets in
    production, and code can see it in gc.isenabled() and gc.get_threshold())."""
    share = PER_MILLE // (_SPREAD_SETTINGS + 1)
    offset = _derive(lock, "replay-collector") % share
    spread = [{"allocate_per_mille": share * k + offset} for k in range(1, _SPREAD_SETTINGS + 1)]
    return ({"allocate_per_mille": 0}, *spread, {"allocate_per_mille": PER_MILLE})


# --- the order directories list in --------------------------------------------------------

# Directory orders (`directory_positions`): 0 lists as the file system does (what the search
# and the ordinary replays meet), 1 reversed, any other value a permutation seeded by it.
AS_LISTED, REVERSED = 0, 1
_ORDERS = 1 << 62
# The directory-order probe's orders the schedule draws, after as listed and reversed.
_DRAWN_ORDERS = 4


def directory_positions(order: int, count: int) -> list[int]:
    """Where the entries of a listing of `count` go (pure): entry i of the file system's
    listing is listed at position result[i]. Stable for a directory that does not change
    (the same count, the same order), as a file system's own order is."""
    if order == AS_LISTED:
        return list(range(count))
    if order == REVERSED:
        return list(range(count - 1, -1, -1))
    keys = [
        hashlib.sha256(f"witness-gate/directory-order/v1\0{order}\0{count}\0{i}".encode()).digest()
        for i in range(count)
    ]
    ranked = sorted(range(count), key=keys.__getitem__)
    positions = [0] * count
    for position, entry in enumerate(ranked):
        positions[entry] = position
    return positions


def directory_settings(lock: dict[str, Any]) -> tuple[int, ...]:
    """The directory-order probe's settings: as listed and reversed (any two entries are
    listed both ways between them), then orders the schedule draws."""
    drawn = (2 + _derive(lock, "replay-directory-order", k) % _ORDERS for k in range(_DRAWN_ORDERS))
    return (AS_LISTED, REVERSED, *drawn)


# --- the wall clock ------------------------------------------------------------------------

# The clock probe's settings (`clock_settings`): instants on one day the schedule draws, in
# microseconds since the epoch. Each time-of-day unit (the hour, the minute, the second and
# the part of a second) is cut into as many equal stretches as there are settings, and each
# setting takes one stretch of each, in an order the schedule draws per unit. Within its
# stretch a setting lies in the middle half (so a call that reads the clock a few
# milliseconds after the probe started it stays in it), at the same place for every setting:
# a failure whose window in a unit is a quarter of it to three quarters fails under one
# setting at least and passes under one.
# Only the time of day: a date that moves between settings would make a patch that breaks
# the code for every day until some date look like a flake of the clock.
_CLOCK_SETTINGS = 8
_CLOCK_DAYS_FROM = calendar.timegm((2025, 1, 1, 0, 0, 0))  # the day is drawn from four years
_CLOCK_DAYS = 4 * 365 + 1
MICROSECONDS = 1_000_000  # the unit of the clock probe's instants
# Each unit in microseconds, and how many of the next larger unit's it takes.
_TIME_OF_DAY = (
    ("hour", 3600 * MICROSECONDS, 24),
    ("minute", 60 * MICROSECONDS, 60),
    ("second", MICROSECONDS, 60),
    ("fraction", 1, MICROSECONDS),
)
_QUARTER = 1 << 32


def clock_settings(lock: dict[str, Any]) -> tuple[int, ...]:
    """The instants the clock probe starts the wall clock at (microseconds since the epoch,
    UTC), one per setting: the schedule's day, at a time of day in a stretch of its own of
    every unit (see `_CLOCK_SETTINGS`)."""
    day = _CLOCK_DAYS_FROM + _derive(lock, "replay-clock-day") % _CLOCK_DAYS * 86400
    instants = [day * MICROSECONDS] * _CLOCK_SETTINGS
    for unit, length, count in _TIME_OF_DAY:
        stretches = sorted(range(_CLOCK_SETTINGS), key=lambda k: _derive(lock, "replay-clock-stretch", unit, k))
        # The same place within each stretch, between its first and its third quarter: the
        # settings lie evenly spaced in the unit, and so a window that recurs more often than
        # the unit (every ten seconds, say) meets them spread over its own period too.
        place = _QUARTER + 2 * (_derive(lock, "replay-clock-place", unit) % _QUARTER)
        for setting, stretch in enumerate(stretches):
            position = 4 * stretch * _QUARTER + place
            instants[setting] += position * count // (4 * _CLOCK_SETTINGS * _QUARTER) * length
    return tuple(instants)
