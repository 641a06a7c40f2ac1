"""A team's existing Hypothesis tests, as a pytest module for the orders example (`given_tests`).

It imports nothing from witness_gate: tuples, `st.builds` of a dataclass, pytest's
`tmp_path`, an `@example`, a test's own `@settings`, a test method, a parametrized test,
a module-scoped fixture and a test without `@given`. The runner's tests and bench/perf.py
put it at `MODULE` in a copy of examples/orders, in place of its property module.
"""

MODULE = "tests/properties/test_pricing.py"

EXISTING_TESTS = '''\
"""The team's own Hypothesis tests, as they run under plain pytest."""

import json
import random
from dataclasses import dataclass

import pytest
from hypothesis import example, given, settings, strategies as st

from orders_app.pricing import line_total, order_total


@dataclass
class Line:
    qty: int
    price: int


lines = st.lists(st.builds(Line, qty=st.integers(0, 50), price=st.integers(0, 1000)), max_size=8)


def as_order(items):
    return {"lines": [{"qty": line.qty, "price": line.price} for line in items]}


@pytest.fixture(scope="module")
def fixture_orders():
    with open("tests/fixtures/orders.json") as handle:
        return json.load(handle)


@given(lines)
@example([Line(1, 2)])
def test_total_is_the_sum_of_its_lines(items):
    assert order_total(as_order(items)) == sum(line.qty * line.price for line in items)


@settings(max_examples=50)
@given(st.tuples(st.integers(0, 50), st.integers(0, 1000)))
def test_line_total_is_never_negative(pair):
    qty, price = pair
    assert line_total({"qty": qty, "price": price}) >= 0


@given(n=st.integers(0, 20))
def test_an_order_survives_a_file(tmp_path, n):
    path = tmp_path / "order.json"
    path.write_text(json.dumps({"lines": [{"qty": n, "price": 1}]}))
    assert order_total(json.loads(path.read_text())) == n


@pytest.mark.parametrize("price", [0, 7])
@given(qty=st.integers(0, 9))
def test_scaling_the_price(price, qty):
    assert line_total({"qty": qty, "price": price}) == qty * price


class TestFixtureOrders:
    @given(index=st.integers(0, 1000))
    def test_fixture_orders_total_what_their_lines_say(self, fixture_orders, index):
        order = {"lines": fixture_orders[index % len(fixture_orders)]["lines"]}
        assert order_total(order) == sum(line["qty"] * line["price"] for line in order["lines"])


def test_the_fixture_loads(fixture_orders):
    assert fixture_orders
'''

FLAKY_TEST = """

def promotion(total):
    # The flaky helper: a random promotion takes a unit off now and then.
    return total - (1 if random.random() < 0.3 else 0)


@given(lines)
def test_no_promotion_applies(items):
    total = order_total(as_order(items))
    assert promotion(total) == total
"""
