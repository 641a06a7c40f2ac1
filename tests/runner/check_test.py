"""The per-call time limit of `check`: a hang is refused, and the alarm is never left armed."""

from __future__ import annotations

import signal
import time

import pytest

from witness_gate.check import hangs_refused, time_limit
from witness_gate.errors import WitnessGateError


def test_a_call_that_runs_out_of_time_is_refused_in_one_line():
    before = signal.getsignal(signal.SIGALRM)
    with pytest.raises(WitnessGateError, match=r"^p\.py: prop_x: a call did not return within 0\.2 s: a hang cannot"):
        with hangs_refused("p.py: prop_x: a call did not return", 0.2), time_limit(0.2):
            time.sleep(5)
    assert signal.getsignal(signal.SIGALRM) is before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_call_that_returns_in_time_leaves_no_alarm_behind():
    with hangs_refused("never", 5), time_limit(5):
        total = sum(range(1000))
    assert total == 499500
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_time_limit_refuses_to_arm_without_its_handler():
    with pytest.raises(RuntimeError, match="outside hangs_refused"):
        with time_limit(1):
            pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
