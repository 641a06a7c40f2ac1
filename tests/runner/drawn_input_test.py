"""The digest of a drawn input (`worker.drawn_input`): the same only for the same plain value,
and none where the value's printed form could hide what differs."""

from __future__ import annotations

import datetime
import functools
from decimal import Decimal

import pytest

from witness_gate.worker.drawn_input import digest


def test_the_same_plain_input_gives_the_same_digest_and_another_another():
    cart = {"lines": [{"sku": "SKU-1001", "qty": 3}], "coupon": None, "at": datetime.date(2026, 12, 7)}
    assert digest({"cart": cart}, frozenset()) == digest({"cart": dict(cart)}, frozenset()) is not None
    assert digest({"code": "JPY"}, frozenset()) != digest({"code": "CHF"}, frozenset())
    # A set is one value whatever order it iterates in; a dict's order is part of it.
    assert digest({"s": {"EUR", "USD", "GBP"}}, frozenset()) == digest({"s": {"GBP", "USD", "EUR"}}, frozenset())
    assert digest({"d": {"a": 1, "b": 2}}, frozenset()) != digest({"d": {"b": 2, "a": 1}}, frozenset())
    # Floats by their bits: a NaN's sign, and zero's, tell inputs apart (repr shows every NaN as `nan`).
    nan = float("nan")
    assert digest({"x": nan}, frozenset()) != digest({"x": -nan}, frozenset())
    assert digest({"x": 0.0}, frozenset()) != digest({"x": -0.0}, frozenset())
    # An int past the 4,300 digits repr prints: a digest, not an error in the replay.
    assert digest({"n": 10**5000}, frozenset()) != digest({"n": 10**5000 + 1}, frozenset())
    # Equal values of different types are different inputs.
    assert digest({"n": 1}, frozenset()) != digest({"n": True}, frozenset())
    assert digest({"n": 1}, frozenset()) != digest({"n": Decimal(1)}, frozenset())


def test_the_tests_fixtures_are_not_part_of_the_input(tmp_path):
    assert digest({"code": "JPY", "tmp_path": tmp_path}, frozenset({"tmp_path"})) == digest(
        {"code": "JPY"}, frozenset()
    )
    assert digest({"tmp_path": tmp_path}, frozenset({"tmp_path"})) is None  # nothing drawn


class _Currency:
    def __init__(self, code: str) -> None:
        self.code = code

    def __repr__(self) -> str:
        return "Currency(cents=True)"  # what every currency shares: not what the bug reads


class _Code(str):
    pass


def _to_cents(code: str):
    def to_cents(amount: int) -> int:
        return amount * 100

    return to_cents


@pytest.mark.parametrize(
    "value",
    [
        _Currency("JPY"),  # an object of anyone's, printed however it likes
        _Code("JPY"),  # a subclass of a plain type
        _to_cents("JPY"),  # a closure, printed by its function's name (what st.functions() draws too)
        functools.partial(int, "7"),
        [1, _Currency("JPY")],  # inside a plain container
        datetime.datetime(2026, 12, 7, tzinfo=type("Zone", (datetime.tzinfo,), {})()),  # a time zone of anyone's
    ],
    ids=["object", "str subclass", "closure", "partial", "nested object", "custom time zone"],
)
def test_a_value_whose_printed_form_could_hide_a_difference_gives_no_digest(value):
    assert digest({"value": value}, frozenset()) is None


def test_an_input_nested_deeper_than_the_interpreter_recurses_gives_no_digest() -> None:
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert digest({"deep": deep}, frozenset()) is None
