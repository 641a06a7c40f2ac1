"""Which witnesses the replay engine escalates because of how their search ended."""

from __future__ import annotations

import pytest

from witness_gate.replay import search_came_and_went


def record(origin: str, fully_shrunk: bool, kind: str) -> dict:
    return {
        "origin": origin,
        "fully_shrunk": fully_shrunk,
        "evidence": {"kind": kind, "exception_type": None, "message": ""},
    }


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
    stopped = {
        **record("search", False, "exception"),
        "given": {"failing_example": ""},
        "payload": {"search": 1, "calls": 5},
    }
    assert not search_came_and_went(stopped)
    assert search_came_and_went({**stopped, "payload": {"choices": "AA=="}})
