"""Which witnesses the replay engine escalates because of how their search ended."""

from __future__ import annotations

from dataclasses import replace

import pytest

from witness_gate.replay import search_came_and_went
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
