"""pytest reads only the base's configuration: the files it reads at collection are oracle,
and the worker fixes the root, the ini file, the conftest boundary, the plugins and the
import mode. Each attack is a pull request reviewed by the real `witness-gate review`: a bug
plus a file that restores the right behaviour whenever pytest reads it."""

from __future__ import annotations

import pytest

from support.review_repo import Repo, buggy, review_repo
from witness_gate import pytest_files
from witness_gate.config import GateConfig, Suite
from witness_gate.ownership import own

PYTEST_MODULE = """from hypothesis import given, strategies as st

from orders_app.pricing import line_total


@given(st.integers(0, 50), st.integers(0, 1000))
def test_a_line_costs_its_quantity_times_its_price(qty, price):
    assert line_total({"qty": qty, "price": price}) == qty * price
"""
# A pytest plugin in the implementation that puts the right line_total back during tests.
RESTORING_PLUGIN = """import orders_app.pricing as pricing

pricing.line_total = lambda line: line["qty"] * line["price"]
"""


def test_every_file_pytest_reads_on_the_way_to_a_module_is_listed():
    read = pytest_files.read_at_collection("tests/properties/test_orders.py")
    for directory in ("", "tests/", "tests/properties/"):
        for name in (
            "conftest.py",
            "__init__.py",
            "pytest.toml",
            ".pytest.toml",
            "pytest.ini",
            ".pytest.ini",
            "tox.ini",
            "setup.cfg",
            "pyproject.toml",
        ):
            assert f"{directory}{name}" in read
    assert pytest_files.read_at_collection("tests/properties") == pytest_files.read_at_collection(
        "tests/properties/test_orders.py"
    )


def test_they_are_oracle_but_a_packages_own_init():
    suite = Suite(
        name="orders",
        fixture="tests/fixtures/orders.json",
        generator_version=3,
        properties=("src/pkg/tests/test_p.py",),
    )
    config = GateConfig(impl_prefixes=("src/",), suites=(suite,))
    ownership = own(
        [
            "src/conftest.py",
            "src/pkg/tests/conftest.py",
            "src/pkg/__init__.py",
            "src/pkg/tests/tox.ini",
            "src/other.py",
        ],
        config,
        {},
    )
    assert sorted(ownership.oracle) == ["src/conftest.py", "src/pkg/tests/conftest.py", "src/pkg/tests/tox.ini"]
    assert ownership.oracle["src/conftest.py"] == "suite orders (read by pytest)"
    assert ownership.impl == ("src/pkg/__init__.py", "src/other.py")


@pytest.fixture
def repo(tmp_path) -> Repo:
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "tests/properties/orders_props.py").unlink()
    (repo.root / "tests/properties/test_orders.py").write_text(PYTEST_MODULE)
    repo.commit("base: the suite is a pytest module")
    repo.branch("patch")
    return repo


def review(repo: Repo, message: str):
    repo.commit(message)
    result = repo.review()
    return result, result.stdout + result.stderr


@pytest.mark.parametrize(
    "path, text",
    [
        ("tests/conftest.py", "pytest_plugins = ['orders_app.restore']\n"),
        ("tests/pytest.ini", "[pytest]\naddopts = -p orders_app.restore\n"),
        ("tests/tox.ini", "[pytest]\naddopts = -p orders_app.restore\n"),
        ("tests/pyproject.toml", "[tool.pytest.ini_options]\naddopts = '-p orders_app.restore'\n"),
        ("pytest.toml", "[pytest]\naddopts = ['-p', 'orders_app.restore']\n"),
    ],
    ids=["conftest_above_the_properties", "pytest_ini", "tox_ini", "nested_pyproject", "pytest_toml_at_the_root"],
)
def test_a_file_pytest_reads_that_the_head_adds_is_an_oracle_edit(repo: Repo, path: str, text: str):
    buggy(repo)
    (repo.root / "src/orders_app/restore.py").write_text(RESTORING_PLUGIN)
    (repo.root / path).write_text(text)
    result, output = review(repo, "bug, and a file pytest reads that restores the right code")
    assert result.returncode == 1, output
    assert f"oracle edit: {path}" in output and "mixed_edit" in output, output


def test_a_copy_of_the_package_beside_the_tests_does_not_shadow_it(repo: Repo):
    # pytest's default (prepend) import mode puts the test module's directory first on
    # sys.path: a right copy of the package committed there (a directory no one owns, so
    # the head's) would be tested instead of the package under src/.
    repo.git("checkout", "-q", "main")
    (repo.root / "checks").mkdir()
    (repo.root / "tests/properties/test_orders.py").rename(repo.root / "checks/test_orders.py")
    repo.edit("pyproject.toml", 'properties = ["tests/properties"]', 'properties = ["checks/test_orders.py"]')
    repo.commit("base: the suite's module lives in checks/")
    repo.branch("patch")
    buggy(repo)
    shadow = repo.root / "checks/orders_app"
    shadow.mkdir()
    (shadow / "__init__.py").write_text("")
    (shadow / "pricing.py").write_text('def line_total(line):\n    return line["qty"] * line["price"]\n')
    result, output = review(repo, "bug, and a right copy of the package beside the tests")
    assert result.returncode == 1, output
    assert "orders: regression: checks/test_orders.py::test_a_line_costs_its_quantity_times_its_price" in output, output


STAND_IN = """import os, sys, types

from hypothesis import given, strategies as st


@given(st.integers(0, 50), st.integers(0, 1000))
def test_a_line_costs_its_quantity_times_its_price(qty, price):
    pass


stand_in = types.ModuleType("test_orders")
stand_in.__file__ = os.path.join(os.getcwd(), "tests/properties/test_orders.py")
stand_in.test_a_line_costs_its_quantity_times_its_price = test_a_line_costs_its_quantity_times_its_price
for name in ("test_orders", "tests.properties.test_orders"):  # the names pytest's importlib mode tries for the module
    sys.modules[name] = stand_in
"""


def test_a_stand_in_for_the_test_module_in_sys_modules_is_refused(repo: Repo):
    # The base's conftest imports the package (common); the head's package puts a module of
    # passing tests where pytest's importlib mode looks first.
    repo.git("checkout", "-q", "main")
    (repo.root / "tests/conftest.py").write_text("import orders_app  # noqa: F401\n")
    repo.commit("base: a conftest that imports the package")
    repo.branch("patch")
    buggy(repo)
    (repo.root / "src/orders_app/__init__.py").write_text(STAND_IN)
    result, output = review(repo, "bug, and a stand-in for the test module")
    assert result.returncode == 1, output
    assert "the module pytest collected was in sys.modules before pytest imported the test module" in output, output


SHADOW_PYTEST = """import importlib, sys

import orders_app.pricing as pricing

pricing.line_total = lambda line: line["qty"] * line["price"]  # the right code back, for the tests
del sys.modules["pytest"]
roots = [entry for entry in sys.path if entry.endswith("/src")]
for entry in roots:
    sys.path.remove(entry)
sys.modules["pytest"] = importlib.import_module("pytest")  # then the real pytest, as if nothing happened
sys.path[:0] = roots
"""


def test_a_pytest_module_in_the_implementation_never_loads(repo: Repo):
    # The worker loads pytest before the patch's import paths exist: a `pytest.py` beside the
    # package would otherwise run first, before any guard.
    buggy(repo)
    (repo.root / "src/pytest.py").write_text(SHADOW_PYTEST)
    result, output = review(repo, "bug, and a pytest of its own")
    assert result.returncode == 1, output
    assert (
        "orders: regression: tests/properties/test_orders.py::test_a_line_costs_its_quantity_times_its_price" in output
    ), output
