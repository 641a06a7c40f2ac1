"""A team's state machines and plain tests under the gate, through the real CLI (`given_tests`).

A `RuleBasedStateMachine`'s `TestCase`, and a test function that calls
`run_state_machine_as_test`, are searched, shrunk and replayed like `@given` tests: their
witness is the choice sequence Hypothesis' example database received, their input the steps
Hypothesis printed. A plain test (neither) that fails blocks the verdict with a line naming it,
and a module with nothing to search says so.
"""

from __future__ import annotations

import pytest
from conftest import SampleRepo, copy_example

from witness_gate import schemas, witness

IMPL = "src/orders_app/pricing.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
MACHINE = "tests/properties/test_cart_machine.py"
MACHINE_NODE = f"{MACHINE}::TestCart::runTest"
RUNNER_NODE = f"{MACHINE}::test_cart_through_run_state_machine_as_test"

CART_MACHINE = '''"""The team's own state machine: a cart whose running total is never negative."""

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from orders_app.pricing import line_total


class Cart(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.lines = []

    @rule(qty=st.integers(0, 9), price=st.integers(0, 9))
    def add(self, qty, price):
        self.lines.append({"qty": qty, "price": price})

    @rule()
    def clear(self):
        self.lines = []

    @invariant()
    def total_is_what_the_lines_say(self):
        assert sum(line_total(line) for line in self.lines) == sum(line["qty"] * line["price"] for line in self.lines)


TestCart = Cart.TestCase
TestCart.settings = settings(max_examples=40, stateful_step_count=10)


def test_cart_through_run_state_machine_as_test():
    run_state_machine_as_test(Cart, settings=settings(max_examples=40, stateful_step_count=10))
'''


def machine_repo(tmp_path, module: str = CART_MACHINE) -> SampleRepo:
    repo = copy_example(tmp_path / "orders")
    (repo.root / "tests/properties/orders_props.py").unlink()
    repo.write(MACHINE, module)
    return repo


def gate(repo: SampleRepo, *changed: str):
    # Small plans: the labels here are deterministic ones, or a control's.
    return repo.gate(*changed, extra=("--replays", "2", "--replay-interpreters", "3", "--max-examples", "30"))


def rows(repo: SampleRepo) -> dict[str, dict]:
    return {row["assertion_id"]: row for row in repo.gate_json()["witnesses"]}


def test_a_state_machine_bug_is_a_regression_whose_witness_replays_the_steps(tmp_path):
    repo = machine_repo(tmp_path)
    green = gate(repo)
    assert green.code == 0, green.stdout + green.stderr
    run = repo.gate_json()["pytest"]
    assert run["given_tests"] == run["stateful_tests"] == [MACHINE_NODE, RUNNER_NODE], run
    assert "pytest: 0 @given test(s) and 2 state machine(s) searched" in green.stdout, green.stdout

    repo.edit(IMPL, *BUG)
    red = gate(repo, IMPL)
    assert red.code == 1, red.stdout + red.stderr
    found = rows(repo)
    assert {node: (row["label"], row["cause"]) for node, row in found.items()} == {
        MACHINE_NODE: ("regression", "deterministic"), RUNNER_NODE: ("regression", "deterministic")}, red.stdout
    assert all(row["failures"] == row["runs"] > 0 for row in found.values()), found
    for path in sorted((repo.root / ".artifacts/gate/witnesses").glob("*.json")):
        record = witness.load(path)
        assert set(record["payload"]) == {"choices"} and record["origin"] == "search" and record["fully_shrunk"], record
        # The steps Hypothesis printed, shrunk to the one line that shows the bug.
        assert record["given"]["failing_example"].splitlines() == [
            "state = Cart()", "state.total_is_what_the_lines_say()", "state.add(price=0, qty=4)", "state.total_is_what_the_lines_say()",
            "state.teardown()"], record["given"]
        assert path.name.startswith("tests.properties.test_cart_machine--"), path.name
    assert "state = Cart() state.total_is_what_the_lines_say() state.add(price=0, qty=4)" in red.stdout, red.stdout

    repo.edit(IMPL, BUG[1], BUG[0])
    fixed = gate(repo, IMPL)  # the witnesses are replayed on the fixed code
    assert fixed.code == 4, fixed.stdout + fixed.stderr
    assert {row["label"] for row in rows(repo).values()} == {"not_reproduced"}, fixed.stdout


# --- a pull request that tries to escape the gating --------------------------------------------

# The base: an implementation, and the team's tests of it, a state machine (whose teardown
# calls the implementation too) and a plain test. Each attack is the head's implementation
# alone: the tests, the oracle, are the base's.
PRICING = '''"""The implementation under test: order totals."""


def line_total(line: dict) -> int:
    return line["qty"] * line["price"]


def order_total(order: dict) -> int:
    return sum(line_total(line) for line in order["lines"])


def currency() -> str:
    return "EUR"
'''
GUARDED_MACHINE = '''"""The team's own tests: a cart machine, checked again as it is torn down, and a plain test."""

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from orders_app.pricing import currency, line_total, order_total


class Cart(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.lines = []

    @rule(qty=st.integers(0, 9), price=st.integers(0, 9))
    def add(self, qty, price):
        self.lines.append({"qty": qty, "price": price})

    @invariant()
    def lines_total_what_they_say(self):
        for line in self.lines:
            assert line_total(line) == line["qty"] * line["price"]

    def teardown(self):
        assert order_total({"lines": self.lines}) == sum(line["qty"] * line["price"] for line in self.lines)


TestCart = Cart.TestCase
TestCart.settings = settings(max_examples=40, stateful_step_count=10)


def test_prices_are_in_euros():
    assert currency() == "EUR"
'''
GUARDED_NODE = f"{MACHINE}::TestCart::runTest"
PLAIN_NODE = f"{MACHINE}::test_prices_are_in_euros"
LINE_BUG = ('    return line["qty"] * line["price"]\n', '    return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)\n')
# Code under test that reaches the tests' state machines as they are defined, before pytest collects them.
ON_EACH_MACHINE = '''
import hypothesis.stateful
import pytest


def _each_machine(cls, **kwargs):
    {}


hypothesis.stateful.RuleBasedStateMachine.__init_subclass__ = classmethod(_each_machine)
'''
INCOMPLETE = "a @given or stateful test of the base's module must be searched, unless the module itself marks it skip or xfail"
ATTACKS = {
    # The head's code marks the machine's TestCase skipped, expected to fail, or no test, for pytest.
    "skipped": (ON_EACH_MACHINE.format("cls.TestCase.__unittest_skip__ = True"), 4, f"incomplete: {GUARDED_NODE}: skipped; {INCOMPLETE}"),
    "xfail": (ON_EACH_MACHINE.format("cls.TestCase.pytestmark = [pytest.mark.xfail(reason='known')]"), 4,
              f"incomplete: {GUARDED_NODE}: run once as a plain test (marked xfail?), not searched; {INCOMPLETE}"),
    "renamed": (ON_EACH_MACHINE.format("cls.TestCase.__test__ = False"), 4,
                f"incomplete: {GUARDED_NODE}: not collected (deselected, or no longer a test at run time); {INCOMPLETE}"),
    # ...runs the machine's TestCase with a run_state_machine_as_test of its own, which runs nothing.
    "not run": ("\nimport hypothesis.stateful\nhypothesis.stateful.run_state_machine_as_test = lambda *args, **kwargs: None\n", 1,
                f"blocked: {GUARDED_NODE}: the stateful test ran no state machine through Hypothesis' run_state_machine_as_test"),
    # ...or runs it through Hypothesis' own, unseeded and unwatched, in place of the worker's.
    "unwatched": ("\nimport hypothesis.stateful\nhypothesis.stateful.get_state_machine_test = "
                  "hypothesis.stateful.get_state_machine_test.__self__._make\n", 1,
                  f"blocked: {GUARDED_NODE}: pytest or Hypothesis stopped the test outside any case: AssertionError"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS), ids=lambda name: name.replace(" ", "_"))
def test_code_under_test_that_keeps_a_machine_from_being_searched_does_not_pass(tmp_path, attack):
    hiding, code, said = ATTACKS[attack]
    repo = machine_repo(tmp_path, GUARDED_MACHINE)
    repo.write(IMPL, PRICING)
    repo.write(IMPL, PRICING.replace(*LINE_BUG) + hiding)
    result = gate(repo, IMPL)
    assert result.code == code, result.stdout + result.stderr
    assert said in result.stdout, result.stdout
    assert not repo.gate_json()["witnesses"], result.stdout  # nothing of the machine was searched
