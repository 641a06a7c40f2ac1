"""A git repository of the orders example with its suite declared in pyproject.toml, and
the real `witness-gate review` of a branch `patch` against `main`, one subprocess each."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from support.sample_repo import EXAMPLE
from witness_gate import schemas

IMPL = "src/orders_app/pricing.py"
ORACLE = "tests/properties/orders_props.py"
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
# A property that no longer sees BUG (its totals fall short of the claim, and below zero for a
# free line) yet still refuses its reject payload (a negative claim), so only the review can tell.
WEAKEN = (
    '    if total < 0:\n        return False\n    return total == order["claimed_total"]',
    '    return order["claimed_total"] >= 0',
)
# The base's property, run on the head's implementation, still fails on every replay
# (two per interpreter, six interpreters, two rounds: the suite sets `replays = 2`).
CAUGHT = "prop_order_total_non_negative failed 24/24 replays"
# The orders property's strategies as a module of their own (an oracle helper a base may declare).
STRATEGIES = """lines = st.lists(
    st.fixed_dictionaries({"qty": st.integers(min_value=0, max_value=50), "price": st.integers(min_value=0, max_value=10_000)}),
    max_size=5,
)
orders = lines.map(lambda ls: {"lines": ls, "claimed_total": sum(line["qty"] * line["price"] for line in ls)})
"""  # noqa: E501 (test data: a source file, as written)


class Repo:
    def __init__(self, root: Path) -> None:
        self.root = root

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "-c", "user.email=r@witness-gate", "-c", "user.name=review", *args],
            cwd=self.root,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def edit(self, relative: str, old: str, new: str) -> None:
        path = self.root / relative
        text = path.read_text()
        assert old in text, (relative, old)
        path.write_text(text.replace(old, new, 1))

    def commit(self, message: str) -> None:
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)

    def branch(self, name: str, start: str = "main") -> None:
        self.git("checkout", "-q", "-B", name, start)

    def review(
        self,
        base: str = "main",
        head: str = "patch",
        env: dict[str, str] | None = None,
        python_path: list[str] | None = None,
        launcher: tuple[str, ...] = (),
        extra: tuple[str, ...] = (),
    ):
        """The review, with this interpreter's import path (or `python_path`), started
        through `launcher` (e.g. a namespace that changes what the machine offers)."""
        path = python_path if python_path is not None else [os.path.abspath(p) for p in sys.path]
        environment = {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(path)}
        argv = [
            *launcher,
            sys.executable,
            "-m",
            "witness_gate",
            "review",
            "--base",
            base,
            "--head",
            head,
            "--out",
            str(self.root.parent / "out"),
            *extra,
        ]
        return subprocess.run(argv, cwd=self.root, env=environment, capture_output=True, text=True, timeout=900)

    def review_graph(self, document: dict, extra: tuple[str, ...] = ()):
        """The review with `document` as the base's build graph (`--suites`), written
        as `pants witness-gate-suites` writes it."""
        path = self.root.parent / "suites.json"
        path.write_text(json.dumps(document, sort_keys=True, separators=(",", ":")) + "\n")
        return self.review(extra=("--suites", str(path), *extra))

    def review_json(self) -> dict:
        record = json.loads((self.root.parent / "out" / "review.json").read_text())
        schemas.validate("review", record, "review.json")
        return record


def review_repo(tmp_path: Path) -> Repo:
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".artifacts", "__pycache__", "BUILD", "BUILD.bazel"))
    repo = Repo(root)
    # Fewer replays than the default keep this suite quick; every verdict is the same.
    repo.edit("pyproject.toml", "generator-version = 3\n", "generator-version = 3\nreplays = 2\n")
    repo.git("init", "-q", "-b", "main")
    repo.commit("base: the orders example with its suite declared")
    repo.branch("patch")
    return repo


def assert_red(result, *reasons: str) -> None:
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    for reason in reasons:
        assert reason in output, (reason, output)


def buggy(repo: Repo) -> None:
    repo.edit(IMPL, *BUG)


# The example's suite as a Pants team declares it, once, in tests/BUILD.
GRAPH_BUILD = """witness_fixture(name="orders-fixture", source="fixtures/orders.json", generator_version=3)

witness_properties(
    name="properties",
    sources=["properties/*.py"],
    fixture=":orders-fixture",
    dependencies=["src/orders_app"],
    replays=2,
)
"""


def graph_document(commit: str, **changes) -> dict:
    """What `pants witness-gate-suites` prints at `commit` for the example declared in
    tests/BUILD as GRAPH_BUILD does (tests/rules/suites_test.py checks the goal's output
    field by field), with `changes` to its one suite."""
    suite = {
        "name": "tests.properties",
        "address": "tests:properties",
        "fixture": "tests/fixtures/orders.json",
        "generator_version": 3,
        "properties": ["tests/properties/orders_props.py"],
        "replays": 2,
        "max_examples": 100,
        "import_paths": ["src"],
        "impl": ["src/orders_app/__init__.py", "src/orders_app/pricing.py"],
        "oracle": ["tests/BUILD", "tests/fixtures/orders.json", "tests/properties/orders_props.py"],
        "oracle_globs": ["tests/properties/*.py"],
    }
    return {
        "schema_version": 1,
        "commit": commit,
        "freezes_dir": ".witness-gate/freezes",
        "max_freeze_hours": 168,
        "replay_timeout_seconds": 60,
        "suites": [{**suite, **changes}],
    }


def strategies_as_helper(repo: Repo, directory: str) -> None:
    """The orders property's strategies moved to `directory`/order_strategies.py, which the
    property imports from tests/strategies (put on the import path) and the suite declares
    as its oracle dependency."""
    module = repo.root / directory / "order_strategies.py"
    module.parent.mkdir(parents=True)
    module.write_text("from hypothesis import strategies as st\n\n" + STRATEGIES)
    repo.edit(ORACLE, STRATEGIES, "from order_strategies import orders\n")
    repo.edit("pyproject.toml", 'import-paths = ["src"]', 'import-paths = ["src", "tests/strategies"]')
    repo.edit(
        "pyproject.toml",
        'properties = ["tests/properties"]',
        'properties = ["tests/properties"]\noracle-dependencies = ["tests/strategies"]',
    )
