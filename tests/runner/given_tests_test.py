"""A team's existing `@given` tests under pytest, unchanged, through the real CLI (`given_tests`):
the module of support/existing_tests.py in place of the orders example's properties."""

from __future__ import annotations

import json
import re

import pytest
from conftest import SampleRepo, copy_example

from support.existing_tests import EXISTING_TESTS, FLAKY_TEST, MODULE
from support.expiry import ShiftedClock, expires_at
from witness_gate import schemas, witness
from witness_gate.given_tests import declared_searched_tests, declared_tests, is_pytest_module, unrun_plain, unsearched
from witness_gate.witness import file_stem

IMPL = "src/orders_app/pricing.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
GATE = ".artifacts/gate"

GATED = (
    f"{MODULE}::TestFixtureOrders::test_fixture_orders_total_what_their_lines_say",
    f"{MODULE}::test_an_order_survives_a_file",
    f"{MODULE}::test_line_total_is_never_negative",
    f"{MODULE}::test_scaling_the_price[0]",
    f"{MODULE}::test_scaling_the_price[7]",
    f"{MODULE}::test_total_is_the_sum_of_its_lines",
)


def existing_tests_repo(tmp_path) -> SampleRepo:
    repo = copy_example(tmp_path / "orders")
    (repo.root / "tests/properties/orders_props.py").unlink()
    repo.write(MODULE, EXISTING_TESTS)
    return repo


def gate(repo: SampleRepo, *changed: str, env: dict[str, str] | None = None):
    # Fewer replays and examples than the defaults: the labels do not need more here, and a
    # history replay runs the module's earlier searches again.
    return repo.gate(*changed, extra=("--replays", "3", "--replay-interpreters", "3", "--max-examples", "30"), env=env)


def witnesses(repo: SampleRepo) -> dict[str, dict]:
    """The gate's witnesses by assertion id, each loaded as `classify` loads it."""
    return {
        record["assertion_id"]: record
        for record in (witness.load(path) for path in sorted((repo.root / GATE / "witnesses").glob("*.json")))
    }


def labels(repo: SampleRepo) -> dict[str, str]:
    return {row["assertion_id"]: row["label"] for row in repo.gate_json()["witnesses"]}


def test_a_module_is_pytests_when_it_imports_nothing_from_witness_gate():
    assert is_pytest_module(b"from hypothesis import given\n")
    assert is_pytest_module(b"from .witness_gate import helpers\n")  # a package of the team's own
    assert not is_pytest_module(b"import witness_gate\n")
    assert not is_pytest_module(b"from witness_gate.properties import property\n")
    assert not is_pytest_module(b"def f(:\n")  # the property import names the syntax error


def test_a_node_id_names_a_witness_file_apart_from_every_other():
    assert file_stem("prop_total") == "prop_total"
    stems = {file_stem(node_id) for node_id in GATED}
    assert len(stems) == len(GATED)
    for stem in stems:
        assert witness.FILE_NAME.match(f"{stem}.{'0' * 12}.json"), stem
    assert file_stem("t.py::test_a[1-2]") != file_stem("t.py::test_a[1_2]")


def test_unchanged_tests_pass_the_gate_and_the_test_without_given_is_reported(tmp_path):
    repo = existing_tests_repo(tmp_path)
    result = gate(repo)
    assert result.code == 0, result.stdout + result.stderr
    record = repo.gate_json()
    schemas.validate("gate", record, "gate.json")
    cases = record["pytest"].pop("cases_run")
    assert sorted(cases) == list(GATED) and all(count > 0 for count in cases.values()), cases
    assert record["pytest"] == {
        "given_tests": list(GATED),
        "stateful_tests": [],
        "skipped_tests": [],
        "nothing_to_search": [],
        "plain_tests": [{"node_id": f"{MODULE}::test_the_fixture_loads", "passed": True}],
    }
    assert (
        f"pytest: 6 @given test(s) searched ({min(cases.values())}-{max(cases.values())} cases each); "
        "plain tests (run once; a failure blocks): 1 passed, 0 failed"
    ) in result.stdout


def test_a_bug_is_a_regression_whose_witness_is_what_hypothesis_saved_and_once_fixed_it_is_not_reproduced(tmp_path):
    repo = existing_tests_repo(tmp_path)
    repo.edit(MODULE, "@example([Line(1, 2)])", "@example([Line(1, 2)])\n@example([Line(5, 3)])")
    repo.edit(IMPL, *BUG)
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    # Every test the bug reaches, and none it does not (the fixture's lines all have
    # quantities below 4), each parametrized case its own.
    assert labels(repo) == {
        node_id: "regression" for node_id in GATED if "TestFixtureOrders" not in node_id
    }, result.stdout
    records = witnesses(repo)
    line_test = records[f"{MODULE}::test_line_total_is_never_negative"]
    assert line_test["schema_version"] == 3 and line_test["origin"] == "search" and line_test["fully_shrunk"]
    assert set(line_test["payload"]) == {"choices"}
    assert "pair=(4, 0)" in line_test["given"]["failing_example"]
    assert "failing input: Failing test case: test_line_total_is_never_negative( pair=(4, 0), )" in result.stdout
    # The history is the tests before it and its own search up to the failure.
    assert [entry["assertion_id"] for entry in line_test["history"]][-1] == line_test["assertion_id"]
    file_test = records[f"{MODULE}::test_an_order_survives_a_file"]
    assert "<basetemp>" in file_test["given"]["failing_example"] and "witness-gate-pytest-" not in json.dumps(file_test)
    # A failing @example is its own witness: Hypothesis runs it first and never shrinks it.
    example = records[f"{MODULE}::test_total_is_the_sum_of_its_lines"]
    assert (example["origin"], example["payload"], example["seed"]) == ("example", {"example": 1}, None)
    assert "Line(qty=5, price=3)" in example["given"]["failing_example"]

    repo.edit(IMPL, BUG[1], BUG[0])
    fixed = gate(repo, IMPL)  # the earlier run's witnesses are replayed, not forgotten
    assert fixed.code == 4, fixed.stdout + fixed.stderr
    assert set(labels(repo).values()) == {"not_reproduced"} and len(labels(repo)) == 5
    repo.edit(MODULE, '"""The team\'s own Hypothesis tests', '"""The team\'s own Hypothesis tests (reworded)')
    unlisted = gate(repo, IMPL)
    assert unlisted.code == 4 and set(labels(repo).values()) == {"unclassified"}, unlisted.stdout
    assert "property module changed but the changed-file list does not name it" in unlisted.stdout


def test_the_same_run_writes_the_same_witness_bytes(tmp_path):
    repo = existing_tests_repo(tmp_path)
    repo.edit(IMPL, *BUG)
    first, second = (repo.root / ".artifacts/first"), (repo.root / ".artifacts/second")
    assert repo.pin().code == 0
    for out in (first, second):
        run = repo.cli("check", "--lock", repo.lock, "--properties", "tests/properties", "--out", str(out))
        assert run.code == 1, run.stdout + run.stderr
    names = sorted(path.name for path in first.iterdir())
    assert len(names) == 5 and names == sorted(path.name for path in second.iterdir())
    assert all((first / name).read_bytes() == (second / name).read_bytes() for name in names)


def test_a_random_flake_is_a_flake_and_the_freeze_command_it_prints_lets_it_pass(tmp_path):
    repo = existing_tests_repo(tmp_path)
    repo.edit(MODULE, EXISTING_TESTS, EXISTING_TESTS + FLAKY_TEST)
    red = gate(repo)
    assert red.code == 1, red.stdout + red.stderr
    assert labels(repo) == {f"{MODULE}::test_no_promotion_applies": "flake"}
    [row] = repo.gate_json()["witnesses"]
    assert row["cause"] == "random_seed", row
    command = re.search(r"to freeze it, [^:]*: witness-gate (freeze .*)$", red.stdout, re.MULTILINE)
    assert command is not None, red.stdout
    frozen = repo.cli(*command.group(1).split())
    assert frozen.code == 0, frozen.stdout + frozen.stderr
    green = gate(repo)
    assert green.code == 0, green.stdout + green.stderr
    assert repo.gate_json()["witnesses"][0]["frozen_by"]
    # Nothing else changes but the clock: past the freeze's expiry, the flake blocks again.
    clock = ShiftedClock(tmp_path)
    clock.past(expires_at(repo.root / command.group(1).split("--out ")[1].split()[0]))
    expired = gate(repo, env=clock.env())
    assert expired.code == 1 and "expired at" in expired.stdout, expired.stdout + expired.stderr


def test_an_oracle_edit_is_an_oracle_defect_and_with_the_code_a_mixed_edit(tmp_path):
    repo = existing_tests_repo(tmp_path)
    repo.edit(
        MODULE,
        'assert line_total({"qty": qty, "price": price}) >= 0',
        'assert line_total({"qty": qty, "price": price}) > 0',
    )
    assert gate(repo, MODULE).code == 3  # oracle review
    assert labels(repo) == {f"{MODULE}::test_line_total_is_never_negative": "oracle_defect"}
    repo.edit(IMPL, *BUG)
    (repo.root / GATE).rename(repo.root / ".artifacts/oracle-only")
    assert gate(repo, MODULE, IMPL).code == 1
    assert set(labels(repo).values()) == {"mixed_edit"}


def test_a_case_that_ends_the_worker_is_a_witness_of_the_search_that_led_to_it(tmp_path):
    repo = existing_tests_repo(tmp_path)
    repo.edit(
        IMPL,
        'return line["qty"] * line["price"]',
        'import os\n    if line["qty"] > 3:\n        os._exit(3)\n    return line["qty"] * line["price"]',
    )
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    record = witnesses(repo)[f"{MODULE}::test_line_total_is_never_negative"]
    assert record["evidence"]["kind"] == "crashed" and not record["fully_shrunk"], record["evidence"]
    assert set(record["payload"]) == {"search", "calls"} and record["payload"]["search"] == record["seed"]
    assert labels(repo)[record["assertion_id"]] == "regression", result.stdout


FIRST_FAILS_THEN_ONE_ENDS_THE_WORKER = """\
import os

from hypothesis import given, strategies as st

from orders_app.pricing import line_total


@given(st.integers(0, 20))
def test_a_bug_hypothesis_prints(n):
    assert line_total({"qty": n, "price": 1}) < 5


@given(st.integers(0, 20))
def test_a_case_that_ends_the_worker(n):
    if n > 5:
        os._exit(3)
"""


def test_a_search_that_ends_the_worker_shows_no_example_another_test_printed(tmp_path):
    # Hypothesis prints the first test's falsifying example; the second test's case ends the
    # worker before anything is printed: its witness must not carry the first one's printout.
    repo = copy_example(tmp_path / "orders")
    (repo.root / "tests/properties/orders_props.py").unlink()
    repo.write(MODULE, FIRST_FAILS_THEN_ONE_ENDS_THE_WORKER)
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    records = witnesses(repo)
    printed = records[f"{MODULE}::test_a_bug_hypothesis_prints"]["given"]["failing_example"]
    assert "n=5" in printed, printed
    ended = records[f"{MODULE}::test_a_case_that_ends_the_worker"]
    assert ended["evidence"]["kind"] == "crashed", ended["evidence"]
    assert ended["given"]["failing_example"] == "", ended["given"]


HIDING_IMPLEMENTATION = """
import hypothesis.core

_run_engine = hypothesis.core.StateForActualGivenExecution.run_engine


def _quiet_run_engine(self):
    try:
        _run_engine(self)
    except BaseException:
        pass  # the failure Hypothesis found never reaches pytest


hypothesis.core.StateForActualGivenExecution.run_engine = _quiet_run_engine
"""


# ...and the worker's own check of it, too: what the runner saw decides.
HIDING_FROM_THE_WORKER_TOO = (
    HIDING_IMPLEMENTATION
    + """
import witness_gate.worker.pytest_module

_search = witness_gate.worker.pytest_module.GivenTest.search


def _passing_search(self, *args):
    try:
        return _search(self, *args)
    except witness_gate.worker.pytest_module.WitnessGateError:
        return witness_gate.worker.pytest_module.Searched("passed")


witness_gate.worker.pytest_module.GivenTest.search = _passing_search
"""
)


@pytest.mark.parametrize(
    "hiding, said",
    [
        (HIDING_IMPLEMENTATION, "yet the test passed: something in the worker hid the failure"),
        (
            HIDING_FROM_THE_WORKER_TOO,
            "a @given test's search passed after a case failed: something in the worker hid the failure",
        ),
    ],
    ids=["from-pytest", "from-the-worker-too"],
)
def test_code_under_test_that_swallows_hypothesis_failures_does_not_pass(tmp_path, hiding, said):
    # The implementation runs in the worker, next to Hypothesis: it can make a failing test
    # look passed to pytest, and to the worker's code. The runner saw the failing case itself.
    repo = existing_tests_repo(tmp_path)
    repo.edit(IMPL, *BUG)
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""\n',
        '"""The implementation under test: order totals."""\n' + hiding,
    )
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    assert said in result.stdout, result.stdout


# Code under test that tries Hypothesis' and pytest's ways out of a case, and a team's test
# module that meets Hypothesis and pytest features a gate must not be fooled by.
HOSTILE_BASE = '''"""Functions the tests below check; the pull request's version is HOSTILE_HEAD."""


def skipping(n):
    return n


rejecting = stopping = interrupting = wrong_by_one = skipping
'''
HOSTILE_HEAD = '''"""Each function fails the same inputs, each leaving the case another way."""

import hypothesis
import pytest
from hypothesis.errors import StopTest


def skipping(n):
    if n > 3:
        pytest.skip("not today")
    return n


def rejecting(n):
    if n > 3:
        hypothesis.reject()
    return n


def stopping(n):
    if n > 3:
        raise StopTest(-1)
    return n


def interrupting(n):
    if n > 3:
        raise KeyboardInterrupt
    return n


def wrong_by_one(n):
    return n - (1 if n > 3 else 0)
'''
HOSTILE_TESTS = """import os
from unittest import mock

import pytest
from hypothesis import example, given, strategies as st, target

from orders_app import hostile


@given(st.integers(0, 10))
def test_skipping(n):
    assert hostile.skipping(n) == n


@given(st.integers(0, 10))
def test_rejecting(n):
    assert hostile.rejecting(n) == n


@given(st.integers(0, 10))
def test_stopping(n):
    assert hostile.stopping(n) == n


@given(st.integers(0, 10))
def test_interrupting(n):
    assert hostile.interrupting(n) == n


@mock.patch.dict(os.environ, {"REGION": "EU"})
@given(st.integers(0, 10))
def test_under_a_decorator(n):
    assert hostile.wrong_by_one(n) == n


@given(st.integers(0, 10))
def test_with_a_target(n):
    target(float(n))
    assert hostile.wrong_by_one(n) == n


@given(st.integers(0, 10))
@example(-1).xfail(raises=ValueError)
def test_an_expected_error_of_an_example(n):
    if n < 0:
        raise ValueError("no negative quantities")


@pytest.mark.skip(reason="the team's own skip")
@given(st.integers())
def test_skipped(n):
    assert False


@pytest.mark.xfail(reason="a known bug")
@given(st.integers())
def test_known_bug(n):
    assert False
"""
HOSTILE = "src/orders_app/hostile.py"
HOSTILE_MODULE = "tests/properties/test_hostile.py"


def test_code_under_test_leaving_cases_hypothesis_s_or_pytest_s_way_is_still_a_regression(tmp_path):
    repo = copy_example(tmp_path / "orders")
    (repo.root / "tests/properties/orders_props.py").unlink()
    repo.write(HOSTILE, HOSTILE_BASE)
    repo.write(HOSTILE_MODULE, HOSTILE_TESTS)
    green = gate(repo)
    assert green.code == 0, green.stdout + green.stderr
    repo.write(HOSTILE, HOSTILE_HEAD)
    red = gate(repo, HOSTILE)
    assert red.code == 1, red.stdout + red.stderr
    found = {node_id.split("::")[1]: label for node_id, label in labels(repo).items()}
    assert found == {
        name: "regression"
        for name in (
            "test_skipping",
            "test_rejecting",
            "test_stopping",
            "test_interrupting",
            "test_under_a_decorator",
            "test_with_a_target",
        )
    }, red.stdout
    records = {record["assertion_id"].split("::")[1]: record for record in witnesses(repo).values()}
    # Hypothesis saves no choices for a KeyboardInterrupt: the witness is the search up to it.
    assert set(records["test_interrupting"]["payload"]) == {"search", "calls"}
    assert (
        records["test_with_a_target"]["payload"].keys() == {"choices"}
        and "n=4" in records["test_with_a_target"]["given"]["failing_example"]
    )
    pytest_run = repo.gate_json()["pytest"]
    assert pytest_run["skipped_tests"] == [f"{HOSTILE_MODULE}::test_skipped"]
    assert pytest_run["plain_tests"] == [{"node_id": f"{HOSTILE_MODULE}::test_known_bug", "passed": True}]  # xfailed
    assert f"{HOSTILE_MODULE}::test_an_expected_error_of_an_example" in pytest_run["given_tests"]


def test_code_under_test_that_makes_given_tests_look_plain_does_not_pass(tmp_path):
    # Were the worker to ask Hypothesis after the code under test is imported, every test
    # would be a plain one, run once and gating nothing: the gate would pass the bug.
    repo = copy_example(tmp_path / "orders")
    (repo.root / "tests/properties/orders_props.py").unlink()
    repo.write(HOSTILE, HOSTILE_HEAD + "\nhypothesis.is_hypothesis_test = lambda function: False\n")
    repo.write(HOSTILE_MODULE, HOSTILE_TESTS)
    result = gate(repo, HOSTILE)
    assert result.code == 1, result.stdout + result.stderr
    assert "pytest: 8 @given test(s) searched" in result.stdout, result.stdout


CANNOT_RUN = {
    "tests/properties/test_unsatisfiable.py": """from hypothesis import assume, given, strategies as st


@given(st.integers())
def test_never(n):
    assume(False)
""",
    "tests/properties/test_broken_fixture.py": """import pytest
from hypothesis import given, strategies as st


@pytest.fixture
def ledger():
    raise OSError("no ledger here")


@given(st.integers())
def test_uses_the_ledger(ledger, n):
    pass
""",
    "tests/properties/test_machine.py": """from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from orders_app.pricing import line_total


class Cart(RuleBasedStateMachine):
    total = 0

    @rule(qty=st.integers(0, 9), price=st.integers(0, 9))
    def add(self, qty, price):
        self.total += line_total({"qty": qty, "price": price})

    @invariant()
    def never_negative(self):
        assert self.total >= 0


TestCart = Cart.TestCase
""",
}


def test_a_test_that_cannot_run_blocks_a_state_machine_is_searched_and_a_module_without_tests_is_refused(tmp_path):
    repo = copy_example(tmp_path / "orders")
    for path, source in CANNOT_RUN.items():
        repo.write(path, source)
    blocked = gate(repo)
    assert blocked.code == 1, blocked.stdout + blocked.stderr
    assert (
        "blocked: tests/properties/test_unsatisfiable.py::test_never: pytest or Hypothesis stopped the test outside "
        "any case: "
        "Unsatisfiable"
    ) in blocked.stdout, blocked.stdout
    assert (
        "blocked: tests/properties/test_broken_fixture.py::test_uses_the_ledger: pytest or Hypothesis stopped the "
        "test outside "
        "any case: OSError: no ledger here"
    ) in blocked.stdout, blocked.stdout
    run = repo.gate_json()["pytest"]
    assert run["stateful_tests"] == ["tests/properties/test_machine.py::TestCart::runTest"], run
    assert run["cases_run"]["tests/properties/test_machine.py::TestCart::runTest"] >= 30, run

    repo.write("tests/properties/helpers.py", "def total(lines):\n    return sum(lines)\n")
    refused = gate(repo)
    assert (
        refused.code == 2
        and "tests/properties/helpers.py: no witness_gate.property and no test found: there is nothing to check"
        in refused.stderr
    ), refused.stdout + refused.stderr


# --- a gated test that was not searched is no pass ---------------------------------------------

DECLARING = b"""
import pytest
from hypothesis import given, strategies as st

pytestmark = [pytest.mark.filterwarnings("ignore")]


@given(st.integers())
def test_plain(n): pass


@pytest.mark.skip(reason="the team's own")
@given(st.integers())
def test_marked_skip(n): pass


@pytest.mark.xfail(reason="a known bug")
@given(st.integers())
def test_marked_xfail(n): pass


@pytest.mark.skipif(True, reason="decided at run time")
@given(st.integers())
def test_skipif(n): pass


@pytest.mark.xfail(False, reason="conditional")
@given(st.integers())
def test_conditional_xfail(n): pass


def helper_with_given(): pass


class TestGroup:
    @given(st.integers())
    def test_in_a_class(self, n): pass


@pytest.mark.skip
class TestSkipped:
    @given(st.integers())
    def test_in_a_skipped_class(self, n): pass


class Helpers:
    @given(st.integers())
    def test_not_collected_by_default(self, n): pass
"""


def test_the_base_module_says_which_given_tests_it_declares_and_which_it_marks_itself():
    assert declared_searched_tests(DECLARING) == {
        "test_plain": False,
        "test_marked_skip": True,
        "test_marked_xfail": True,
        "test_skipif": False,
        "test_conditional_xfail": False,
        "TestGroup::test_in_a_class": False,
        "TestSkipped::test_in_a_skipped_class": True,
    }
    assert declared_searched_tests(b"pytestmark = pytest.mark.skip\n@given(st.integers())\ndef test_a(n): pass\n") == {
        "test_a": True
    }
    assert declared_searched_tests(b"from hypothesis import given as g\n@g(st.integers())\ndef test_b(n): pass\n") == {
        "test_b": False
    }
    assert declared_searched_tests(b"def f(:\n") == {}
    own = declared_tests(
        b"@settings(max_examples=5)\n@given(st.integers())\ndef test_a(n): pass\n\n"
        b"@given(st.integers())\ndef test_b(n): pass\n\n@settings(max_examples=9)\nclass TestC:\n    def "
        b"test_d(self): pass\n"
    )
    assert {key: test.own_max_examples for key, test in own.items()} == {
        "test_a": True,
        "test_b": False,
        "TestC::test_d": True,
    }
    assert not own["TestC::test_d"].given


def test_each_declared_plain_test_that_did_not_count_as_run_is_named_with_why():
    module = "tests/test_m.py"
    declared = {"test_a": False, "test_b": False, "test_c": True}  # test_c: the module carries a skip mark for it
    ran = {f"{module}::test_a", f"{module}::test_c", "tests/other.py::test_b"}
    excused = {f"{module}::test_a", f"{module}::test_c", f"{module}::test_inherited"}
    reasons = unrun_plain(module, declared, ran, excused)
    assert [reason.split(";")[0] for reason in reasons] == [
        # A mark the source does not show: the code under test may have placed it.
        f"{module}::test_a: a skip or xfail mark excused it that the base's module does not carry (the code under "
        "test may have placed it)",
        # Declared, never collected (only another module's test of that name ran).
        f"{module}::test_b: not collected (deselected, or no longer a test at run time)",
    ]
    assert unrun_plain(module, declared, {f"{module}::test_a", f"{module}::test_b[1]"}, {f"{module}::test_c"}) == []


def test_each_declared_given_test_not_searched_is_named_with_why():
    module = "tests/test_m.py"
    searched = {
        f"{module}::test_plain[1]": 12,
        f"{module}::test_plain[2]": 0,
        f"{module}::TestGroup::test_in_a_class": 3,
    }
    reasons = unsearched(
        module,
        declared_searched_tests(DECLARING),
        searched,
        {f"{module}::test_skipif", f"{module}::test_marked_skip"},
        {f"{module}::test_conditional_xfail", f"{module}::test_marked_xfail"},
    )
    assert [reason.split(";")[0] for reason in reasons] == [
        f"{module}::test_plain[2]: no case ran (the search ran nothing)",
        f"{module}::test_skipif: skipped",
        f"{module}::test_conditional_xfail: run once as a plain test (marked xfail?), not searched",
    ]
    everything = {f"{module}::{name}": 5 for name in ("test_plain", "test_skipif", "test_conditional_xfail")}
    assert (
        unsearched(
            module,
            declared_searched_tests(DECLARING),
            {**everything, f"{module}::TestGroup::test_in_a_class": 1},
            set(),
            set(),
        )
        == []
    )
    [missing] = unsearched(module, declared_searched_tests(DECLARING), everything, set(), set())
    assert missing.startswith(f"{module}::TestGroup::test_in_a_class: not collected")
    # Node by node: one parameter searched does not cover another skipped, nor one class another.
    [skipped] = unsearched(
        module,
        declared_searched_tests(DECLARING),
        {**everything, f"{module}::TestGroup::test_in_a_class": 1},
        {f"{module}::test_plain[safe]"},
        set(),
    )
    assert skipped.startswith(f"{module}::test_plain[safe]: skipped")


@pytest.mark.parametrize(
    "attack",
    [
        # pytest's own way to run a test, replaced by one that runs nothing: no case runs.
        "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n",
        # A skip raised while the test module imports the code: nothing of the module is collected.
        "import pytest\npytest.importorskip('a_module_production_has_and_the_worker_lacks')\n",
    ],
    ids=["a_no_op_runtest", "importorskip"],
)
def test_a_bug_whose_tests_the_code_under_test_keeps_from_running_is_incomplete_not_a_pass(tmp_path, attack):
    repo = existing_tests_repo(tmp_path)
    repo.edit(IMPL, *BUG)
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""',
        f'"""The implementation under test: order totals."""\n{attack}',
    )
    result = gate(repo, IMPL)
    assert result.code in (1, 4), result.stdout + result.stderr  # never a pass
    assert "incomplete: " in result.stdout, result.stdout
    assert f"{MODULE}::test_line_total_is_never_negative" in result.stdout, result.stdout


def test_a_profile_the_code_under_test_loads_is_refused_not_searched_under(tmp_path):
    # Hypothesis' public API, when the tests import the code: one case per test (the tests
    # without settings of their own take the default in force when they are decorated).
    repo = existing_tests_repo(tmp_path)
    repo.edit(IMPL, *BUG)
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""',
        '"""The implementation under test: order totals."""\n'
        "from hypothesis import settings\nsettings.register_profile('one', "
        "max_examples=1)\nsettings.load_profile('one')\n",
    )
    result = gate(repo, IMPL)
    assert result.code == 1, result.stdout + result.stderr
    assert (
        "pricing.py loaded the Hypothesis profile 'one': only the test module and its conftest files may choose"
        in result.stdout
    )


def test_a_default_the_code_under_test_sets_past_the_public_api_does_not_weaken_the_search(tmp_path):
    # Hypothesis' own module state, set when the tests import the code: every test decorated
    # after it would search one case. A test whose module sets no max_examples searches at
    # least the suite's.
    repo = existing_tests_repo(tmp_path)
    repo.edit(
        IMPL,
        '"""The implementation under test: order totals."""',
        '"""The implementation under test: order totals."""\n'
        "import hypothesis._settings as _s\n_s.default_variable.value = _s.settings(max_examples=1)\n",
    )
    result = gate(repo)
    assert result.code == 0, result.stdout + result.stderr
    assert repo.gate_json()["pytest"]["cases_run"][f"{MODULE}::test_total_is_the_sum_of_its_lines"] >= 30, result.stdout


def test_the_profile_the_bases_ini_names_is_loaded_by_hypothesis_own_plugin(tmp_path):
    # The worker turns pytest's plugin autoloading off and loads Hypothesis' plugin by name:
    # `--hypothesis-profile` in the base's ini still works, and its profile may ask for more.
    repo = existing_tests_repo(tmp_path)
    repo.write(
        "tests/conftest.py",
        "from hypothesis import settings\n\nsettings.register_profile('thorough', max_examples=120)\n",
    )
    repo.write("pytest.ini", "[pytest]\naddopts = --hypothesis-profile=thorough\n")
    result = gate(repo)
    assert result.code == 0, result.stdout + result.stderr
    assert repo.gate_json()["pytest"]["cases_run"][f"{MODULE}::test_total_is_the_sum_of_its_lines"] > 30, result.stdout


def test_a_witness_file_names_its_test_readably_and_one_to_one():
    # The module, then the test's names and parameters: what a reader looks for, in order.
    assert file_stem("tests/test_cart.py::test_merge_keeps_the_total") == "tests.test_cart--test_merge_keeps_the_total"
    assert file_stem("tests/test_cart.py::TestCart::test_total[eur]") == "tests.test_cart--TestCart.test_total[eur]"
    # Ids a plainer spelling would merge stay apart: where the module ends, a dot in a
    # directory or a module, and characters a file name or an artifact upload cannot carry.
    tricky = [
        "a/b.py::c",
        "a.py::b::c",
        "a.b/c.py::t",
        "a/b.c.py::t",
        "t.py::test[a/b]",
        "t.py::test[a~2Fb]",
        "t.py::test[a:b]",
        "t.py::test[a~3Ab]",
        "t.py::test[é]",
        "x-y/t.py::t",
        "x~2Dy/t.py::t",
        "t.py::test[" + "x" * 300 + "]",
        "t.py::test[" + "x" * 300 + "y]",
        "t.py::test[a--b]",
        "t--a.py::b",
    ]
    stems = [file_stem(node_id) for node_id in tricky]
    assert len(set(stems)) == len(tricky), stems
    for stem in stems:
        assert witness.FILE_NAME.match(f"{stem}.{'0' * 12}.json") and len(stem) <= 160, stem
        assert not set(stem) & set('/:*?"<>|\\ '), stem  # nothing a file system or actions/upload-artifact refuses
