"""Which witnesses the replay engine escalates because of how their search ended, and what it
takes from a replay interpreter's outcome messages."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from witness_gate import lock, protocol, replay, seeds
from witness_gate.replay import search_came_and_went
from witness_gate.sandbox import Ended
from witness_gate.witness import Call, PropertyModule, Witness


def record(origin: str, fully_shrunk: bool, kind: str) -> Witness:
    call = Call(0, 0, ())
    return Witness(
        schema_version=3,
        assertion_id="prop_x",
        fixture_digest="0" * 64,
        shrunk=call,
        unshrunk=call,
        hash_secret=0,
        origin=origin,
        expect="accept",
        fully_shrunk=fully_shrunk,
        seed=None,
        evidence={"kind": kind, "exception_type": None, "message": ""},
        property_module=PropertyModule("tests/properties/x_props.py", "0" * 64, 1),
        generator_version=1,
        hypothesis_version="6.0.0",
        condition=None,
        failing_example=None,
        directory_order=0,
    )


def test_a_search_hypothesis_could_not_finish_shrinking_came_and_went():
    assert search_came_and_went(record("search", False, "returned_false"))
    assert search_came_and_went(record("search", False, "exception"))


@pytest.mark.parametrize("kind", ["crashed", "timeout", "protocol"])
def test_a_search_the_failing_call_ended_saw_one_failure_only(kind: str):
    assert not search_came_and_went(record("search", False, kind))


@pytest.mark.parametrize("origin", ["example", "fixture", "reject"])
def test_only_a_search_can_come_and_go(origin: str):
    assert not search_came_and_went(record(origin, True, "returned_false"))


def test_a_fully_shrunk_search_did_not_come_and_go():
    assert not search_came_and_went(record("search", True, "returned_false"))


def test_a_given_tests_search_up_to_its_failing_case_did_not_come_and_go():
    # Hypothesis saved no choices for it (a KeyboardInterrupt): the witness is the search to that case.
    stopped = replace(
        record("search", False, "exception"), failing_example="", shrunk=Call({"search": 1, "calls": 5}, 0, ())
    )
    assert not search_came_and_went(stopped)
    assert search_came_and_went(replace(stopped, shrunk=Call({"choices": "AA=="}, 0, ())))


class _ScriptedWorker:
    """A replay interpreter that says what the test scripts, in place of `sandbox.Worker`."""

    def __init__(self, messages: list[dict]) -> None:
        self._messages = iter(messages)

    def __call__(self, request: dict, hash_secret: int, root: Path, scratch: Path) -> _ScriptedWorker:
        return self

    def __enter__(self) -> _ScriptedWorker:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def receive(self, seconds: float) -> dict | Ended:
        return next(self._messages, Ended("exited", "ended (exit status 0)"))

    def close(self) -> None:
        pass


@pytest.mark.parametrize(
    "drew", ["0123456789abcdef0123456789abcdef", None, "0123456789ABCDEF0123456789ABCDEF", "digest", 7, ["0" * 32]]
)
def test_an_outcome_is_taken_only_with_a_digest_of_what_it_drew_or_none(drew, tmp_path: Path, monkeypatch):
    # A replay's `drew` decides whether replays that differ can make a flake (`evidence.one_input`):
    # any other shape is a broken protocol, the replay a failure, never a drawn input.
    outcome = {"event": "outcome", "job": 0, "slot": 0, "failed": False, "evidence": None, "drew": drew}
    monkeypatch.setattr(replay, "Worker", _ScriptedWorker([outcome, {"event": "done"}]))
    plan = replay.ReplayPlan(tmp_path, (), None, lock.pin(None, tmp_path, 1), 1.0)
    job = replay.Job(
        "w.json", "shrunk", "tests/properties/test_x.py::test_x", "accept", {"choices": "AA=="}, 0, [], True
    )
    found = replay._interpreter(
        "tests/properties/test_x.py", [job], [[0]], (0, seeds.AS_LISTED), 0, {}, plan, tmp_path, set()
    )
    if drew is None or protocol.is_input_digest(drew):
        assert found == {(0, 0): (False, None, drew)}
    else:
        [(failed, evidence, shown)] = found.values()
        assert failed and shown is None and evidence is not None and evidence["kind"] == "protocol", found
        assert "broke the message protocol ('outcome' message)" in evidence["message"], evidence
