"""The digest of a drawn input (`worker.drawn_input`): the same only for the same plain value,
and none where the value's printed form could hide what differs, or where a list, tuple, dict
or set of it is one the draw did not make (`DrawWatch`)."""

from __future__ import annotations

import datetime
import functools
import gc
import sys
import tracemalloc
from pathlib import Path
from decimal import Decimal

import pytest

from witness_gate.worker.drawn_input import DrawWatch, digest, traces_allocations


def digest_of(arguments: dict, fixtures: frozenset[str]) -> str | None:
    """The digest of arguments whose containers the draw made."""
    return digest(arguments, fixtures, lambda _: True)


def test_the_same_plain_input_gives_the_same_digest_and_another_another():
    cart = {"lines": [{"sku": "SKU-1001", "qty": 3}], "coupon": None, "at": datetime.date(2026, 12, 7)}
    assert digest_of({"cart": cart}, frozenset()) == digest_of({"cart": dict(cart)}, frozenset()) is not None
    assert digest_of({"code": "JPY"}, frozenset()) != digest_of({"code": "CHF"}, frozenset())
    # A set is one value whatever order it iterates in; a dict's order is part of it.
    assert digest_of({"s": {"EUR", "USD", "GBP"}}, frozenset()) == digest_of({"s": {"GBP", "USD", "EUR"}}, frozenset())
    assert digest_of({"d": {"a": 1, "b": 2}}, frozenset()) != digest_of({"d": {"b": 2, "a": 1}}, frozenset())
    # Floats by their bits: a NaN's sign, and zero's, tell inputs apart (repr shows every NaN as `nan`).
    nan = float("nan")
    assert digest_of({"x": nan}, frozenset()) != digest_of({"x": -nan}, frozenset())
    assert digest_of({"x": 0.0}, frozenset()) != digest_of({"x": -0.0}, frozenset())
    # An int past the 4,300 digits repr prints: a digest, not an error in the replay.
    assert digest_of({"n": 10**5000}, frozenset()) != digest_of({"n": 10**5000 + 1}, frozenset())
    # Equal values of different types are different inputs.
    assert digest_of({"n": 1}, frozenset()) != digest_of({"n": True}, frozenset())
    assert digest_of({"n": 1}, frozenset()) != digest_of({"n": Decimal(1)}, frozenset())


def test_the_tests_fixtures_are_not_part_of_the_input(tmp_path):
    assert digest_of({"code": "JPY", "tmp_path": tmp_path}, frozenset({"tmp_path"})) == digest_of(
        {"code": "JPY"}, frozenset()
    )
    assert digest_of({"tmp_path": tmp_path}, frozenset({"tmp_path"})) is None  # nothing drawn


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
def test_a_value_whose_printed_form_could_hide_a_difference_gives_no_digest_of(value):
    assert digest_of({"value": value}, frozenset()) is None


def test_an_input_nested_deeper_than_the_interpreter_recurses_gives_no_digest_of() -> None:
    deep: list = []
    for _ in range(10_000):
        deep = [deep]
    assert digest_of({"deep": deep}, frozenset()) is None


# The program's "not given" default, and an equal list: `is` tells them apart, their values cannot.
NO_TAGS: list[str] = []
_TAG_LISTS = {"unset": NO_TAGS, "empty": []}


def _nobodys(filename: str) -> bool:
    return False


def _tags_of(name: str) -> list[str]:
    return [name]


def test_a_container_the_program_held_before_the_draw_is_not_shown_and_one_the_draw_made_is():
    watch = DrawWatch(_nobodys, enabled=True)
    watch.start()
    drawn = {"tags": [str(n) for n in range(3)], "order": {"lines": tuple(range(1, 3))}, "none": ()}
    made = digest(drawn, frozenset(), watch.made_by_the_draw)
    assert made is not None and made == digest_of(drawn, frozenset())
    assert digest({"tags": _TAG_LISTS["empty"]}, frozenset(), watch.made_by_the_draw) is None
    assert digest({"orders": [{"tags": NO_TAGS}]}, frozenset(), watch.made_by_the_draw) is None
    # A tuple written in the code is a constant of it, held before; strings and numbers are
    # shown by their values whoever made them.
    assert digest({"lines": (1, 2)}, frozenset(), watch.made_by_the_draw) is None
    assert digest({"code": "JPY", "n": 7}, frozenset(), watch.made_by_the_draw) is not None
    watch.stop()  # before the test's body: from here nothing is shown as made
    assert digest(drawn, frozenset(), watch.made_by_the_draw) is None


def test_a_container_made_while_the_programs_code_ran_in_the_draw_is_not_shown():
    """A registry built on first use behind a `.map`: made in the draw, by the program."""
    watch = DrawWatch(lambda filename: filename == __file__, enabled=True)
    watch.start()
    drawn = {"tags": _tags_of("b")}
    assert digest(drawn, frozenset(), watch.made_by_the_draw) is None
    watch.stop()


def test_a_plain_dict_from_a_free_list_of_dicts_freed_before_the_draw_reads_as_held():
    """The cost of reading allocations for what the collector does not track (a dict of plain
    values): never a held container shown, sometimes a made one not."""
    gc.collect()
    freed = [{"n": n} for n in range(10)]
    del freed  # ten dicts on CPython's free list, allocated before the watch
    watch = DrawWatch(_nobodys, enabled=True)
    watch.start()
    drawn = {"order": {"sku": str(7)}}
    assert not gc.is_tracked(drawn["order"])
    assert digest(drawn, frozenset(), watch.made_by_the_draw) is None
    watch.stop()


@pytest.mark.parametrize("whose", ["tracing", "a profiler", "disabled"])
def test_a_watch_shows_nothing_where_it_cannot_watch_and_leaves_anothers_tracing_running(whose):
    if whose == "tracing":
        tracemalloc.start(1)
    elif whose == "a profiler":
        sys.setprofile(lambda *_: None)
    try:
        watch = DrawWatch(_nobodys, enabled=whose != "disabled")
        watch.start()
        assert digest({"tags": [str(n) for n in range(3)]}, frozenset(), watch.made_by_the_draw) is None
        watch.stop()
        assert tracemalloc.is_tracing() is (whose == "tracing")  # theirs, left running
        assert (sys.getprofile() is not None) is (whose == "a profiler")
    finally:
        sys.setprofile(None)
        if tracemalloc.is_tracing():
            tracemalloc.stop()


def test_a_module_that_holds_tracemalloc_or_one_of_its_functions_traces_allocations():
    assert traces_allocations({"tracemalloc": tracemalloc, "x": 1})
    assert traces_allocations({"start": tracemalloc.start})
    assert not traces_allocations({"gc": gc, "start": print})


def test_the_programs_code_is_the_repositorys_but_the_test_module_and_an_environment_in_it(tmp_path):
    """What the watch counts as the program's code (`pytest_module._Runtime.is_program`): a
    virtual environment inside the repository holds Hypothesis, whose draw is not the program's."""
    import hypothesis

    from witness_gate.worker import pytest_module

    root = Path(hypothesis.__file__).resolve().parents[4]  # a root above the environment's site-packages
    runtime = pytest_module._Runtime(root, root / "tests" / "test_module.py")
    assert runtime.is_program(str(root / "src" / "shop.py"))
    assert runtime.is_program(str(root / "tests" / "conftest.py"))
    assert not runtime.is_program(str(root / "tests" / "test_module.py"))
    assert not runtime.is_program(hypothesis.__file__)
    assert not runtime.is_program(pytest_module.__file__)
    assert not runtime.is_program(tracemalloc.__file__)
    assert not runtime.is_program("<frozen importlib._bootstrap>")
