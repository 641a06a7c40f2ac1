"""The worker's replay schedule: when each replay runs is evidence, so it is tested as such."""

from __future__ import annotations

import contextlib
import gc
import os
import random
import signal
import stat
import time
from pathlib import Path

from hypothesis import strategies as st

import witness_gate
from witness_gate import layout, worker
from witness_gate.properties import _MARK, LoadedProperty


class _Recorder:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    def send(self, message: dict) -> None:
        self.messages.append(message)


def test_replays_in_one_process_are_spread_over_time_like_forked_ones(tmp_path: Path):
    # A clock bug fails for part of every second. Replays called back to back all land in
    # one instant, so one process would fail on every slot or none and make the bug look
    # certain (a wall-clock flake labelled a regression); the slots must be spaced.
    called_at: list[float] = []

    @witness_gate.property(payloads=st.integers())
    def prop_clock(value: int) -> bool:
        called_at.append(time.monotonic())
        return True

    prop = LoadedProperty("prop_clock", prop_clock, getattr(prop_clock, _MARK), "p.py", "0" * 64, 1)
    spacing, slots = 0.2, 3
    request = {
        "jobs": [{"assertion_id": "prop_clock", "payload": 1, "expect": "accept", "witness": "w", "history": [], "fork": False}],
        "seeds": [[slot] for slot in range(slots)],
        "hung": [],
        "spacing_seconds": spacing,
        "timeout": 10,
        "layout_seed": 0,
    }
    fixture_path = tmp_path / "fixture.json"
    fixture_path.write_text("[]")
    channel = _Recorder()
    try:
        worker._replay(request, channel, {"prop_clock": prop}, worker._Fixture(fixture_path, "unused: the property takes no fixture"))
    finally:
        gc.unfreeze()  # the worker freezes what exists before it forks; here that is this test process
    assert [m["failed"] for m in channel.messages if m["event"] == "outcome"] == [False] * slots
    # The last slot starts (slots - 1) spacings after the pass began; the first at once.
    # Half of that span leaves room for a stalled machine; back to back is about 0.
    span = called_at[-1] - called_at[0]
    assert len(called_at) == slots and span >= (slots - 1) * spacing / 2, f"{slots} replays in one process within {span:.3f} s"


# --- replays after history: the history once, a forked call per slot -----------------------

_STATE: list[int] = []  # what the history leaves behind, in whichever process ran it
_ACTIONS: dict[float, str] = {}
_TEST_RUN = os.getpid()  # what a call does, by the first `random` draw under its slot's seed


def _seeded(action: str, seed: int) -> int:
    _ACTIONS[random.Random(seed).random()] = action
    return seed


@witness_gate.property(payloads=st.integers())
def prop_after_history(value: int) -> bool:
    if value == 0:  # a history call: leaves state behind
        _STATE.append(value)
        return True
    action = _ACTIONS.get(random.random(), "pass")
    if action == "exit":
        os._exit(3)
    if action == "hang":
        time.sleep(60)
    if action == "garble":  # an unfinished line on every pipe the call can reach, the result's included, and gone
        ours = {os.fstat(fd).st_ino for fd in (1, 2)}  # not the test run's own output
        for fd in range(3, 64):
            with contextlib.suppress(OSError):
                if stat.S_ISFIFO(os.fstat(fd).st_mode) and os.fstat(fd).st_ino not in ours:
                    os.write(fd, b"not a signed line")
        os._exit(5)  # the line left unfinished
    if action == "end the history's process" and os.getppid() != _TEST_RUN:  # never the test run itself
        os.kill(os.getppid(), signal.SIGKILL)
    seen = len(_STATE)
    _STATE.append(value)  # a call that leaked into the next would show in its count
    return seen == 2


def _after_history(tmp_path: Path, actions: list[str], history_calls: int = 2, timeout: float = 3.0) -> list[dict | None]:
    prop = LoadedProperty("prop_after_history", prop_after_history, getattr(prop_after_history, _MARK), "p.py", "0" * 64, 1)
    history = [{"assertion_id": "prop_after_history", "payload": 0, "random_seed": 0}] * history_calls
    job = {"assertion_id": "prop_after_history", "payload": 1, "expect": "accept", "witness": "w", "history": history, "fork": True}
    calls = [(_seeded(action, 1000 + slot), 0) for slot, action in enumerate(actions)]
    fixture_path = tmp_path / "fixture.json"
    fixture_path.write_text("[]")
    fixture = worker._Fixture(fixture_path, "unused: the property takes no fixture")
    return worker._forked_after_history({"prop_after_history": prop}, job, calls, fixture, timeout, b"k" * 32, layout.Layout(0))


def test_every_replay_after_history_starts_from_the_state_the_history_left(tmp_path: Path):
    # Two history calls leave two entries; each slot's call must see exactly those two: not
    # none (no history), not more (the history again, or an earlier slot's call).
    assert _after_history(tmp_path, ["pass"] * 4) == [None] * 4
    assert _STATE == [], "the history and the calls ran in forked processes, never in the worker"
    assert [e["kind"] for e in _after_history(tmp_path, ["pass"] * 2, history_calls=1)] == ["returned_false"] * 2


def test_a_replay_after_history_that_ends_or_garbles_fails_alone_and_a_hang_stops_the_rest(tmp_path: Path):
    outcomes = _after_history(tmp_path, ["pass", "exit", "pass", "garble", "pass", "hang", "pass"])
    assert outcomes[0] is None and outcomes[2] is None and outcomes[4] is None, outcomes
    assert outcomes[1]["message"] == "replay process ended without a result (exit status 3)"
    assert outcomes[3]["message"] == "replay process wrote a result it did not sign (exit status 5)"
    assert outcomes[5]["message"] == "replay did not finish within 3 s"
    assert outcomes[6]["message"] == "not replayed: an earlier replay of this witness hung"


def test_a_replay_that_ends_the_history_s_process_fails_with_every_replay_after_it(tmp_path: Path):
    outcomes = _after_history(tmp_path, ["pass", "end the history's process", "pass"])
    assert outcomes[0] is None
    assert outcomes[1] == outcomes[2] and outcomes[1]["kind"] == "crashed", outcomes
    assert "the process that ran the replay's history ended" in outcomes[1]["message"]
