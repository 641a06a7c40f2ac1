"""The digest of a drawn input (`worker.drawn_input`): the same only for the same plain value,
and none where the value's printed form could hide what differs."""

from __future__ import annotations

import datetime
import functools
import os
import types
from decimal import Decimal
from pathlib import Path

import pytest

from witness_gate.worker.drawn_input import ProgramState, digest, held_by_the_program


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


def _program(tree: Path, source: str, name: str = "tags") -> tuple[types.ModuleType, ProgramState]:
    """A module of the tree at `tree`, made from `source` as an interpreter would load it."""
    path = tree / f"{name}.py"
    path.write_text(source)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(source, str(path), "exec"), module.__dict__)
    return module, ProgramState(os.path.join(os.path.realpath(tree), ""), [(name, module)])


# The implementation lists a default and another empty list in a set's iteration order, and
# tells them apart with `is` (an adversarial review's case): the test's witness draws the
# first, which is the default under some hash secrets and the other list under the rest.
SENTINELS = {
    "a module attribute": "NO_TAGS = []\n_BY_NAME = {{'unset': NO_TAGS, 'empty': []}}\n"
    "TAG_CHOICES = [_BY_NAME[name] for name in {order}]\n",
    "a class attribute": "class Defaults:\n    tags = []\n\n"
    "TAG_CHOICES = [{{'unset': Defaults.tags, 'empty': []}}[name] for name in {order}]\n",
    "an instance's attribute": "class Defaults:\n    pass\n\nDEFAULTS = Defaults()\nDEFAULTS.tags = []\n"
    "TAG_CHOICES = [{{'unset': DEFAULTS.tags, 'empty': []}}[name] for name in {order}]\n",
    "a closure": "def _checker(default):\n    return lambda tags: tags is default\n\n_DEFAULT = []\n"
    "is_default = _checker(_DEFAULT)\nTAG_CHOICES = [{{'unset': _DEFAULT, 'empty': []}}[name] for name in {order}]\n"
    "del _DEFAULT\n",
    "a function's default": "def render(tags, _default=[]):\n    return tags is _default\n\n"
    "TAG_CHOICES = [{{'unset': render.__defaults__[0], 'empty': []}}[name] for name in {order}]\n",
}


@pytest.mark.parametrize("kept_in", list(SENTINELS))
def test_equal_lists_the_program_tells_apart_draw_as_different_inputs(kept_in: str, tmp_path: Path):
    digests = set()
    for order in ("['unset', 'empty']", "['empty', 'unset']"):  # two hash secrets' set orders
        (tmp_path / order[2]).mkdir()
        module, program = _program(tmp_path / order[2], SENTINELS[kept_in].format(order=order))
        first = module.TAG_CHOICES[0]  # what the witness's choices draw
        digests.add(digest({"tags": first}, frozenset(), held_by_the_program(program)))
        # The same value drawn afresh, held by nothing of the program's: another input again.
        digests.add(digest({"tags": []}, frozenset(), held_by_the_program(program)))
    assert len(digests) == 3 and None not in digests, digests


def test_a_list_the_program_holds_in_a_fixed_place_is_one_input_in_every_interpreter(tmp_path: Path):
    source = "CONFIGS = [{'region': 'EU', 'tags': []}, {'region': 'US', 'tags': []}]\n"
    drawn = []
    for interpreter in ("a", "b"):
        (tmp_path / interpreter).mkdir()
        module, program = _program(tmp_path / interpreter, source)
        drawn.append(digest({"config": module.CONFIGS[1]}, frozenset(), held_by_the_program(program)))
    assert drawn[0] == drawn[1] is not None
    assert drawn[0] != digest({"config": {"region": "US", "tags": []}}, frozenset(), held_by_the_program(program))


def test_a_program_state_too_large_to_walk_gives_no_digest_for_a_drawn_list(tmp_path: Path):
    _, program = _program(tmp_path, "TABLE = [[n] for n in range(60_000)]\n")
    held = held_by_the_program(program)
    assert held is None and digest({"tags": []}, frozenset(), held) is None
    assert digest({"code": "JPY"}, frozenset(), held) is not None  # nothing to name
