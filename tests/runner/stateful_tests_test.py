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
from witness_gate.given_tests import declared_searched_tests, declared_tests

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
        MACHINE_NODE: ("regression", "deterministic"),
        RUNNER_NODE: ("regression", "deterministic"),
    }, red.stdout
    assert all(row["failures"] == row["runs"] > 0 for row in found.values()), found
    for path in sorted((repo.root / ".artifacts/gate/witnesses").glob("*.json")):
        record = witness.load(path)
        assert set(record["payload"]) == {"choices"} and record["origin"] == "search" and record["fully_shrunk"], record
        # The steps Hypothesis printed, shrunk to the one line that shows the bug.
        assert record["given"]["failing_example"].splitlines() == [
            "state = Cart()",
            "state.total_is_what_the_lines_say()",
            "state.add(price=0, qty=4)",
            "state.total_is_what_the_lines_say()",
            "state.teardown()",
        ], record["given"]
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
LINE_BUG = (
    '    return line["qty"] * line["price"]\n',
    '    return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)\n',
)
# Code under test that reaches the tests' state machines as they are defined, before pytest collects them.
ON_EACH_MACHINE = """
import hypothesis.stateful
import pytest


def _each_machine(cls, **kwargs):
    {}


hypothesis.stateful.RuleBasedStateMachine.__init_subclass__ = classmethod(_each_machine)
"""
INCOMPLETE = (
    "a @given or stateful test of the base's module must be searched, unless the module itself marks it skip or xfail"
)
ATTACKS = {
    # The head's code marks the machine's TestCase skipped, expected to fail, or no test, for pytest.
    "skipped": (
        ON_EACH_MACHINE.format("cls.TestCase.__unittest_skip__ = True"),
        4,
        f"incomplete: {GUARDED_NODE}: skipped; {INCOMPLETE}",
    ),
    "xfail": (
        ON_EACH_MACHINE.format("cls.TestCase.pytestmark = [pytest.mark.xfail(reason='known')]"),
        4,
        f"incomplete: {GUARDED_NODE}: run once as a plain test (marked xfail?), not searched; {INCOMPLETE}",
    ),
    "renamed": (
        ON_EACH_MACHINE.format("cls.TestCase.__test__ = False"),
        4,
        f"incomplete: {GUARDED_NODE}: not collected (deselected, or no longer a test at run time); {INCOMPLETE}",
    ),
    # ...runs the machine's TestCase with a run_state_machine_as_test of its own, which runs nothing.
    "not run": (
        "\nimport hypothesis.stateful\nhypothesis.stateful.run_state_machine_as_test = lambda *args, **kwargs: None\n",
        1,
        f"blocked: {GUARDED_NODE}: the stateful test ran no state machine through Hypothesis' "
        "run_state_machine_as_test",
    ),
    # ...or runs it through Hypothesis' own, unseeded and unwatched, in place of the worker's.
    "unwatched": (
        "\nimport hypothesis.stateful\nhypothesis.stateful.get_state_machine_test = "
        "hypothesis.stateful.get_state_machine_test.__self__._make\n",
        1,
        f"blocked: {GUARDED_NODE}: pytest or Hypothesis stopped the test outside any case: AssertionError",
    ),
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


# The base's machine under an alias of Hypothesis' base class: the source reader must see it as
# a machine all the same, or the head's code could keep it from being collected unnoticed.
ALIASED_MACHINE = GUARDED_MACHINE.replace(
    "from hypothesis.stateful import RuleBasedStateMachine, invariant, rule",
    "from hypothesis.stateful import RuleBasedStateMachine as Machine, invariant, rule",
).replace("class Cart(RuleBasedStateMachine):", "class Cart(Machine):")


def test_a_machine_declared_through_an_alias_cannot_be_kept_from_collection(tmp_path):
    assert ALIASED_MACHINE != GUARDED_MACHINE
    hiding, code, said = ATTACKS["renamed"]
    repo = machine_repo(tmp_path, ALIASED_MACHINE)
    repo.write(IMPL, PRICING.replace(*LINE_BUG) + hiding)
    result = gate(repo, IMPL)
    assert result.code == code, result.stdout + result.stderr
    assert said in result.stdout, result.stdout


# The head's code reaches the test module while it is imported and marks every test skipped:
# a mark the base's module does not carry, so it excuses nothing.
SKIP_THE_MODULE = """

import sys as _sys
import pytest as _pytest
_frame = _sys._getframe(0)
while _frame is not None and not _frame.f_globals.get("__name__", "").endswith("test_cart_machine"):
    _frame = _frame.f_back
_frame.f_globals["pytestmark"] = [_pytest.mark.{}(reason="later")]
"""
PLAIN_ONLY = '''"""The team's plain tests only."""

from orders_app.pricing import currency


def test_prices_are_in_euros():
    assert currency() == "EUR"
'''


@pytest.mark.parametrize("mark", ["skip", "xfail"])
def test_a_plain_test_excused_by_a_mark_the_head_places_does_not_pass(tmp_path, mark):
    repo = machine_repo(tmp_path, PLAIN_ONLY)
    repo.write(IMPL, PRICING.replace('    return "EUR"\n', '    return "USD"\n') + SKIP_THE_MODULE.format(mark))
    result = gate(repo, IMPL)
    assert result.code == 4, result.stdout + result.stderr
    assert (
        f"incomplete: {PLAIN_NODE}: a skip or xfail mark excused it that the base's module does not carry (the code "
        "under test may have placed it); a plain test of the base's module must run, unless the module itself marks it"
    ) in result.stdout, result.stdout


def test_a_plain_test_the_base_marks_may_be_excused(tmp_path):
    marked = PLAIN_ONLY.replace(
        "def test_prices_are_in_euros",
        "@pytest.mark.skipif(True, reason='no euros here')\n" "def test_prices_are_in_euros",
    ).replace('"""The team\'s plain tests only."""\n', '"""The team\'s plain tests only."""\n\nimport pytest\n')
    repo = machine_repo(tmp_path, marked)
    repo.write(IMPL, PRICING.replace('    return "EUR"\n', '    return "USD"\n'))
    result = gate(repo, IMPL)
    assert result.code == 0, result.stdout + result.stderr


PLAIN_FAILED = "a plain test (no @given, no state machine) failed: "


@pytest.mark.parametrize(
    "head, failure",
    [
        # The team's plain test catches the head's bug: no witness, so no label, and it blocks.
        ('    return "USD"\n', "AssertionError: assert 'USD' == 'EUR' + where 'USD' = currency()"),
        # ...a bug that shows only where the gate runs its tests, as one in CI only would.
        (
            '    import sys\n    return "USD" if "witness_gate" in sys.modules else "EUR"\n',
            "AssertionError: assert 'USD' == 'EUR' + where 'USD' = currency()",
        ),
        # ...and a skip the code under test asks for: the test's own way out, taken by the code it checks.
        ('    import pytest\n    pytest.skip("no currency here")\n', "Skipped: no currency here"),
    ],
    ids=["fails", "fails_only_in_the_worker", "skipped_by_the_code_under_test"],
)
def test_a_failing_plain_test_blocks_naming_it_and_its_failure(tmp_path, head, failure):
    repo = machine_repo(tmp_path, GUARDED_MACHINE)
    repo.write(IMPL, PRICING)
    repo.edit(IMPL, '    return "EUR"\n', head)
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    assert f"blocked: {PLAIN_NODE}: {PLAIN_FAILED}{failure}. It is no witness" in result.stdout, result.stdout
    assert f"plain tests (run once; a failure blocks): 0 passed, 1 failed: {PLAIN_NODE}" in result.stdout, result.stdout
    record = repo.gate_json()
    schemas.validate("gate", record, "gate.json")
    assert record["witnesses"] == [] and record["verdict"] == "blocked", record
    assert record["pytest"]["plain_tests"] == [{"node_id": PLAIN_NODE, "passed": False, "failure": failure}], record[
        "pytest"
    ]


def test_a_module_with_nothing_to_search_says_so(tmp_path):
    repo = machine_repo(
        tmp_path,
        "from orders_app.pricing import line_total\n\n\ndef test_a_free_line_costs_nothing():\n"
        "    assert line_total({'qty': 0, 'price': 5}) == 0\n",
    )
    result = gate(repo)
    assert result.code == 0, result.stdout + result.stderr
    assert (
        f"pytest: {MACHINE}: nothing to search (no @given test, no state machine): only its plain tests ran, "
        "once each; "
        "no input of it was searched"
    ) in result.stdout, result.stdout
    assert repo.gate_json()["pytest"]["nothing_to_search"] == [MACHINE]


@pytest.mark.parametrize(
    "head, label, cause, said",
    [
        # The machine's teardown calls code of the head's that raises: every run of it fails there.
        (
            'def order_total(order: dict) -> int:\n    raise RuntimeError("the ledger is closed")\n',
            "regression",
            "deterministic",
            "RuntimeError: the ledger is closed",
        ),
        # The head's code makes the machine's steps come out one way or another from run to run.
        (
            "def order_total(order: dict) -> int:\n    import random\n"
            '    return sum(line_total(line) for line in order["lines"]) - (random.random() < 0.5)\n',
            "flake",
            "random_seed",
            "AssertionError",
        ),
    ],
    ids=["teardown_raises", "nondeterministic_steps"],
)
def test_a_machine_the_head_makes_fail_in_teardown_or_at_random_stays_red(tmp_path, head, label, cause, said):
    repo = machine_repo(tmp_path, GUARDED_MACHINE)
    repo.write(IMPL, PRICING)
    repo.write(IMPL, PRICING + "\n\n" + head)  # a later definition replaces the base's
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    row = rows(repo)[GUARDED_NODE]
    assert (row["label"], row["cause"]) == (label, cause), result.stdout
    assert said in row["reason"], row


HELPERS = '''"""State machines the gate cannot search one by one: through a helper, and two in one test."""

from hypothesis import settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, rule, run_state_machine_as_test


class Counter(RuleBasedStateMachine):
    count = 0

    @rule(step=st.integers(0, 3))
    def add(self, step):
        self.count += step


QUICK = settings(max_examples=5, stateful_step_count=3)


def run(machine):
    run_state_machine_as_test(machine, settings=QUICK)


def test_through_a_helper():
    run(Counter)


def test_two_machines():
    run_state_machine_as_test(Counter, settings=QUICK)
    run_state_machine_as_test(Counter, settings=QUICK)
'''


def test_a_machine_the_gate_cannot_search_alone_blocks_and_says_why(tmp_path):
    repo = machine_repo(tmp_path)
    repo.write("tests/properties/test_helpers.py", HELPERS)
    result = gate(repo)
    assert result.code == 1, result.stdout + result.stderr
    assert (
        "blocked: tests/properties/test_helpers.py::test_through_a_helper: a plain test (no @given, no state machine) "
        "failed: "
        "WitnessGateError: a state machine ran in a test the gate does not search as one (through a helper, or from "
        "the code under "
        "test): run it as `TestX = Machine.TestCase`, or call run_state_machine_as_test in the test function itself"
    ) in result.stdout, result.stdout
    assert (
        "blocked: tests/properties/test_helpers.py::test_two_machines: pytest or Hypothesis stopped the test outside "
        "any case: "
        "WitnessGateError: a second state machine in one test: the gate searches one machine per test; give each "
        "its own test"
    ) in result.stdout, result.stdout


def test_the_base_module_declares_its_state_machines_from_its_source_alone():
    source = b"""
import unittest
import hypothesis.stateful as hs
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test


class Base(hs.RuleBasedStateMachine):
    pass


class Cart(Base):
    pass


CartTests = Cart.TestCase


@pytest.mark.skip
class TestSkippedCart(Cart.TestCase):
    pass


class TestPlain(unittest.TestCase):  # a unittest class is no machine
    def test_it(self): pass


Other = Imported.TestCase  # a machine of another module: searched, not declared here


def test_runs_one():
    run_state_machine_as_test(Cart)


def test_through_a_helper():
    helper(Cart)
"""
    declared = declared_tests(source)
    assert {key for key, test in declared.items() if test.stateful} == {
        "CartTests::runTest",
        "TestSkippedCart::runTest",
        "test_runs_one",
    }
    assert declared_searched_tests(source) == {
        "CartTests::runTest": False,
        "TestSkippedCart::runTest": True,
        "test_runs_one": False,
    }
    assert declared["CartTests::runTest"].line == 15
