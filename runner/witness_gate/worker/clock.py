"""The wall clock the code under test reads, as the clock probe sets it (`seeds.clock_settings`).

The probe's worker runs with Debian's libfaketime preloaded (`sandbox.clock_environment`):
the wall clock (`time.time`, `datetime.now`, `clock_gettime(CLOCK_REALTIME)`, and so
every C library's) reads the real time plus the offset the C environment's `FAKETIME`
names, read again at every call (`FAKETIME_NO_CACHE`). The monotonic clocks stay real
(`FAKETIME_DONT_FAKE_MONOTONIC`), so every deadline, timeout and pause the worker and the
code under test keep runs on real time. `start_at`, in a probe child right before the
call, sets the offset so that the wall clock reads the setting's instant then and runs on
from it at the real pace.

The offset goes into the C environment alone (`os.putenv`): `os.environ` and
/proc/self/environ keep showing the worker's `FAKETIME=+0` under every setting. Programs
the code under test runs get no libfaketime (`install` takes LD_PRELOAD out of the
environment once it is loaded) and read the real clock. Not covered: file times, which
the kernel stamps, and the boot clock: code can tell the probe's clock from the real one,
which is why the probe alone never makes a flake (`evidence.deciding_variant`).

`time.sleep` is replaced before any user code (`install`): CPython sleeps until a
deadline of the monotonic clock (`clock_nanosleep` with `TIMER_ABSTIME`), which
libfaketime 0.9.10 refuses with EINVAL once it leaves that clock real.
"""

from __future__ import annotations

import math
import operator
import os
import select
import time

from witness_gate import seeds
from witness_gate.errors import WitnessGateError

_REAL = "+0"
# The instant `install` starts the clock at to see it move (2001-09-09T01:46:40Z), and how
# far from it the clock may read: a call that slow is no clock under control either.
_CHECK_INSTANT = 1_000_000_000 * seeds.MICROSECONDS
_CHECK_SLACK_SECONDS = 60.0


def install() -> None:
    """In the probe's worker, before any user code: replaces `time.sleep`, and refuses when
    the wall clock does not follow `start_at`."""
    time.sleep = sleep
    # Loaded now: the programs the code under test runs must not load it (their sleep would fail).
    os.environ.pop("LD_PRELOAD", None)
    start_at(_CHECK_INSTANT)
    moved = time.time() - _CHECK_INSTANT / seeds.MICROSECONDS
    run_real()
    if abs(moved) > _CHECK_SLACK_SECONDS:
        raise WitnessGateError(
            "the clock probe's worker cannot set its wall clock: libfaketime is not preloaded, or ignores FAKETIME"
        )


def start_at(instant: int) -> None:
    """The wall clock reads `instant` (microseconds since the epoch) now, and runs on from it."""
    run_real()
    real = time.time()
    # A new offset each time (the real time moves), so libfaketime reads it afresh.
    time_offset = instant / seeds.MICROSECONDS - real
    _set_offset(f"{time_offset:+.6f}")


def run_real() -> None:
    """The wall clock reads the real time."""
    _set_offset(_REAL)


def _set_offset(value: str) -> None:
    os.putenv("FAKETIME", value)  # alone: never os.environ, which the code under test reads


def sleep(seconds: float) -> None:
    """`time.sleep` on a relative timeout: the same pause on real time, the same errors for
    a negative or non-numeric length, interrupted and resumed by signals alike (PEP 475)."""
    length = seconds if isinstance(seconds, float) else operator.index(seconds)
    if math.isnan(length):
        raise ValueError("Invalid value NaN (not a number)")
    if length < 0:
        raise ValueError("sleep length must be non-negative")
    select.select((), (), (), length)
