"""The repository modules the property modules import are oracle, declared or not: found
from the base's sources (`oracle_imports`), and a pull request that narrows one beside its
bug is a mixed edit, reviewed by the real `witness-gate review`."""

from __future__ import annotations

from pathlib import Path

from support.review_repo import buggy, review_repo
from witness_gate import oracle_imports


def test_import_statements_name_their_candidates():
    source = b"import a.b\nfrom c import d\nfrom . import e\nfrom ..f import g\nimport json\n"
    assert oracle_imports.imported_names(source, "tests/properties/p.py") == [
        "a.b",
        "c",
        "c.d",
        "/tests/properties",
        "/tests/properties/e",
        "/tests/f",
        "/tests/f/g",
        "json",
    ]
    assert oracle_imports.imported_names(b"from .... import x\n", "a/p.py") == []  # above the root
    assert oracle_imports.imported_names(b"def f(:\n", "p.py") == []


def test_a_name_lives_in_a_module_or_a_package_of_an_import_path():
    assert oracle_imports.module_paths("a.b", ["src", "."]) == [
        "src/a.py",
        "src/a/__init__.py",
        "src/a/b.py",
        "src/a/b/__init__.py",
        "a.py",
        "a/__init__.py",
        "a/b.py",
        "a/b/__init__.py",
    ]
    assert oracle_imports.module_paths("/tests/f", ["src"]) == [
        "tests.py",
        "tests/__init__.py",
        "tests/f.py",
        "tests/f/__init__.py",
    ]


def test_helpers_are_followed_through_each_other_but_not_into_the_implementation(tmp_path: Path):
    files = {
        "tests/properties/p.py": "from testing.strategies import orders\nimport shop.pricing\nimport hypothesis\n",
        "testing/__init__.py": "",
        "testing/strategies.py": "from .shapes import line\nimport shop.models\n",
        "testing/shapes.py": "",
        "src/shop/__init__.py": "",
        "src/shop/pricing.py": "import testing.unreached\n",  # the implementation's imports are its own
        "src/shop/models.py": "",
        "testing/unreached.py": "",
    }
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    found = oracle_imports.helpers(
        tmp_path, ["tests/properties/p.py"], ["src", "."], lambda path: path.startswith("src/")
    )
    # Under src/, an earlier import path, a module of the same name would shadow each helper.
    assert found == {
        "testing/__init__.py": "tests/properties/p.py",
        "testing/strategies.py": "tests/properties/p.py",
        "testing/shapes.py": "testing/strategies.py",
        **{
            f"src/testing{shadow}": "tests/properties/p.py"
            for shadow in (".py", "/__init__.py", "/strategies.py", "/strategies/__init__.py")
        },
    }


PYTEST_MODULE = """from hypothesis import given

from orders_app.pricing import line_total
from testing.strategies import prices, quantities


@given(quantities, prices)
def test_a_line_costs_its_quantity_times_its_price(qty, price):
    assert line_total({"qty": qty, "price": price}) == qty * price
"""


def test_a_strategy_helper_no_suite_declares_is_oracle_and_cannot_narrow_the_search(tmp_path: Path):
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    repo.edit("pyproject.toml", 'import-paths = ["src"]', 'import-paths = ["src", "."]')
    (repo.root / "tests/properties/orders_props.py").unlink()
    (repo.root / "tests/properties/test_orders.py").write_text(PYTEST_MODULE)
    (repo.root / "testing").mkdir()
    (repo.root / "testing/__init__.py").write_text("")
    (repo.root / "testing/strategies.py").write_text(
        "from hypothesis import strategies as st\n\nquantities = st.integers(0, 50)\n" "prices = st.integers(0, 1000)\n"
    )
    repo.commit("base: the properties draw from a helper no suite declares")
    repo.branch("patch")
    buggy(repo)  # wrong for quantities above 3
    repo.edit("testing/strategies.py", "st.integers(0, 50)", "st.integers(0, 3)")
    repo.commit("bug, and quantities narrowed below it")
    result = repo.review()
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "oracle edit: testing/strategies.py" in output and "mixed_edit" in output, output
