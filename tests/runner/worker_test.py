"""The worker's replay schedule: when each replay runs is evidence, so it is tested as such."""

from __future__ import annotations

import gc
import json
import time
from typing import cast
from pathlib import Path

import pytest
from hypothesis import strategies as st

import witness_gate
from witness_gate.properties import _MARK
from witness_gate.worker import main as worker
from witness_gate.worker import pytest_module
from witness_gate.worker.property_module import LoadedProperty


class _Recorder:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    def send(self, message: dict) -> None:
        self.messages.append(message)

    def send_bytes(self, line: bytes) -> None:
        self.messages.append(json.loads(line))


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
        "jobs": [
            {
                "assertion_id": "prop_clock",
                "payload": 1,
                "expect": "accept",
                "witness": "w",
                "history": [],
                "fork": False,
            }
        ],
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
        # The recorder stands in for the worker's channel to the runner.
        worker._replay(
            request,
            cast(worker._Channel, channel),
            {"prop_clock": prop},
            worker._Fixture(fixture_path, "unused: the property takes no fixture"),
        )
    finally:
        gc.unfreeze()  # the worker freezes what exists before it forks; here that is this test process
    assert [m["failed"] for m in channel.messages if m["event"] == "outcome"] == [False] * slots
    # The last slot starts (slots - 1) spacings after the pass began; the first at once.
    # Half of that span leaves room for a stalled machine; back to back is about 0.
    span = called_at[-1] - called_at[0]
    assert (
        len(called_at) == slots and span >= (slots - 1) * spacing / 2
    ), f"{slots} replays in one process within {span:.3f} s"


def _search_calls(tmp_path: Path, fails_from: int | None) -> tuple[str, int]:
    """(the status, the calls) of one search of a property cut at three cases, as a leg's
    (`seeds.search_leg_cases`): calls from the `fails_from`-th on fail."""
    calls: list[int] = []

    @witness_gate.property(payloads=st.integers())
    def prop_counted(value: int) -> bool:
        calls.append(value)
        return fails_from is None or len(calls) < fails_from

    prop = LoadedProperty("prop_counted", prop_counted, getattr(prop_counted, _MARK), "p.py", "0" * 64, 1)
    fixture_path = tmp_path / "fixture.json"
    fixture_path.write_text("[]")
    fixture = worker._Fixture(fixture_path, "unused: the property takes no fixture")
    status = worker._search(cast(worker._Channel, _Recorder()), prop, fixture, 7, 100, 3)
    return status, len(calls)


def test_a_legs_search_passes_after_its_cases_and_a_failure_among_them_is_shrunk_past_them(tmp_path: Path):
    assert _search_calls(tmp_path, None) == ("passed", 3)
    status, calls = _search_calls(tmp_path, 2)
    assert status == "falsified" and calls > 3, (status, calls)


def test_an_enough_cases_the_code_under_test_raises_is_not_the_legs_stop(tmp_path: Path):
    # A strategy that calls the implementation (`.map`) can raise the stop's class outside any
    # property call: the search does not pass on it; the worker ends, which blocks.
    def normalised(quantity: int) -> int:
        if quantity > 3:
            raise pytest_module.EnoughCases()
        return quantity

    @witness_gate.property(payloads=st.integers(0, 50).map(normalised))
    def prop_quantity(value: int) -> bool:
        return True

    prop = LoadedProperty("prop_quantity", prop_quantity, getattr(prop_quantity, _MARK), "p.py", "0" * 64, 1)
    fixture_path = tmp_path / "fixture.json"
    fixture_path.write_text("[]")
    fixture = worker._Fixture(fixture_path, "unused: the property takes no fixture")
    with pytest.raises(pytest_module.EnoughCases):
        worker._search(cast(worker._Channel, _Recorder()), prop, fixture, 7, 100, 10)
