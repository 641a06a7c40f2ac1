"""The wall clock as a condition: the clock probe's instants (`seeds.clock_settings`, pure)
and the worker's clock (`worker.clock`) in a plain interpreter of its own with Debian's
libfaketime preloaded as the sandbox preloads it (`sandbox.clock_environment`), so this
test's own clock is never touched."""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys

import pytest
from support.tools import missing

from witness_gate import sandbox, seeds
from witness_gate.errors import SetupFailed

LOCK = {"seed_schedule": [12345], "max_examples": 100}
_UNITS = {"hour": (24, 3600), "minute": (60, 60), "second": (60, 1)}


def _times_of_day(lock: dict) -> list[datetime.datetime]:
    return [datetime.datetime.fromtimestamp(us / 1e6, datetime.timezone.utc) for us in seeds.clock_settings(lock)]


@pytest.mark.parametrize("schedule", [[12345], [1], [2**63 - 1]])
def test_every_unit_of_the_time_of_day_has_one_setting_in_each_eighth(schedule):
    instants = _times_of_day({**LOCK, "seed_schedule": schedule})
    assert len(instants) == 8
    assert len({instant.date() for instant in instants}) == 1  # the time of day moves, never the date
    for name, (count, _) in _UNITS.items():
        values = [getattr(instant, name) for instant in instants]
        assert sorted(value * 8 // count for value in values) == list(range(8)), (name, values)
    fractions = [instant.microsecond / 1e6 for instant in instants]
    assert sorted(int(fraction * 8) for fraction in fractions) == list(range(8))
    # In the middle half of its eighth: a call that reads the clock a little later stays in it.
    assert all(0.25 <= (fraction * 8) % 1 < 0.75 for fraction in fractions), fractions


def test_the_instants_are_the_schedule_s():
    assert seeds.clock_settings(LOCK) == seeds.clock_settings(dict(LOCK))  # pure
    others = seeds.clock_settings({**LOCK, "seed_schedule": [1]})
    assert set(others).isdisjoint(seeds.clock_settings(LOCK))


@pytest.mark.parametrize("share", [1 / 4, 1 / 2, 3 / 4])
def test_a_time_window_of_a_quarter_to_three_quarters_of_any_unit_splits_the_settings(share):
    # Wherever in the hour, the minute or the second a failure's window lies, one setting at
    # least meets it and one at least does not: the settings lie at most an eighth and a half apart.
    instants = _times_of_day(LOCK)
    positions = {
        **{name: [getattr(i, name) / count for i in instants] for name, (count, _) in _UNITS.items()},
        "fraction": [i.microsecond / 1e6 for i in instants],
    }
    for name, places in positions.items():
        for start in (k / 960 for k in range(960)):
            inside = [(place - start) % 1 < share for place in places]
            assert any(inside) and not all(inside), (name, start, share)


_WORKER_CLOCK = r"""
import datetime, json, os, sys, time
from witness_gate.worker import clock
clock.install()
before = time.monotonic()
time.sleep(0.2)
slept = time.monotonic() - before
clock.start_at(int(sys.argv[1]))
read = time.time()
now = datetime.datetime.now(datetime.timezone.utc).timestamp()
environ = os.environ.get("FAKETIME")
listed = open("/proc/self/environ", "rb").read().split(b"\0")
errors = []
for length in ("0.1", -1, float("nan")):
    try:
        time.sleep(length)
    except (TypeError, ValueError) as error:
        errors.append(type(error).__name__)
import subprocess
program = subprocess.run([sys.executable, "-c", "import time; time.sleep(0.01); print(time.time())"],
                         capture_output=True, text=True)
clock.run_real()
print(json.dumps({"slept": slept, "read": read, "now": now, "environ": environ,
                  "listed": [v.decode() for v in listed if v.startswith(b"FAKETIME=")],
                  "errors": errors, "real": time.time(), "preloaded": os.environ.get("LD_PRELOAD"),
                  "program": [program.returncode, program.stdout.strip(), program.stderr[-300:]]}))
"""


def _run(code: str, *args: str, preload: bool = True) -> subprocess.CompletedProcess[str]:
    environment = {"PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path if p)}
    if preload:
        try:
            environment.update(sandbox.clock_environment())
        except SetupFailed as error:
            missing(str(error))
    return subprocess.run(
        [sys.executable, "-c", code, *args], env=environment, capture_output=True, text=True, timeout=60
    )


def test_the_worker_s_clock_reads_the_instant_it_was_started_at_and_sleeps_on_real_time():
    instant = seeds.clock_settings(LOCK)[3]
    done = _run(_WORKER_CLOCK, str(instant))
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert abs(seen["read"] - instant / 1e6) < 0.05
    assert abs(seen["now"] - instant / 1e6) < 0.05
    assert 0.19 < seen["slept"] < 2  # a real pause, where CPython's own sleep fails with EINVAL
    assert seen["errors"] == ["TypeError", "ValueError", "ValueError"]  # as time.sleep's own
    # The code under test sees the worker's environment, never the setting.
    assert seen["environ"] == "+0" and seen["listed"] == ["FAKETIME=+0"]
    real = datetime.datetime.now(datetime.timezone.utc).timestamp()
    assert abs(seen["real"] - real) < 60
    # A program the code under test runs gets no libfaketime: it sleeps, on the real clock.
    assert seen["preloaded"] is None
    returncode, printed, said = seen["program"]
    assert returncode == 0, said
    assert abs(float(printed) - real) < 60


def test_a_worker_without_libfaketime_refuses_the_clock_probe():
    done = _run("from witness_gate.worker import clock; clock.install()", preload=False)
    assert done.returncode != 0
    assert "cannot set its wall clock: libfaketime is not preloaded" in done.stderr


def test_a_machine_without_libfaketime_fails_setup_naming_the_package(monkeypatch):
    sandbox.clock_environment.cache_clear()
    monkeypatch.setattr(sandbox, "_LIBFAKETIME", "/nonexistent/{}/libfaketime.so.1")
    try:
        with pytest.raises(SetupFailed, match="apt-get install libfaketime"):
            sandbox.clock_environment()
    finally:
        sandbox.clock_environment.cache_clear()
