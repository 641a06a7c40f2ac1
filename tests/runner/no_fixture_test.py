"""A pytest-only suite needs no invented JSON fixture: it is declared without fixture data
(`fixture = false` in pyproject.toml, `--no-fixture` on the command line), its lock pins
nothing and says so (no path, the digest of no bytes), and the review gates it as any
other suite. Saying nothing is not the same as saying "none": a suite without the key is
refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.existing_tests import EXISTING_TESTS, MODULE
from support.review_repo import BUG, IMPL, Repo, assert_red, review_repo
from witness_gate import lock as locks
from witness_gate import schemas
from witness_gate.config import parse_config
from witness_gate.errors import WitnessGateError

EMPTY_DIGEST = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
HONEST = ('return line["qty"] * line["price"]', 'return line["price"] * line["qty"]')


def suite_toml(fixture_line: str) -> bytes:
    return (
        f'[tool.witness-gate]\nimpl-prefixes = ["src/"]\noracle-prefixes = ["tests/properties/"]\n\n'
        f'[[tool.witness-gate.suites]]\nname = "cart"\n{fixture_line}generator-version = 1\nproperties = '
        '["tests/properties"]\n'
    ).encode()


def test_a_suite_is_declared_without_fixture_data_only_by_saying_so():
    [suite] = parse_config(suite_toml("fixture = false\n"), "pyproject.toml").suites
    assert suite.fixture is None
    with pytest.raises(WitnessGateError, match="missing key 'fixture'"):
        parse_config(suite_toml(""), "pyproject.toml")
    with pytest.raises(WitnessGateError, match="fixture must be a path, or false for a suite without fixture data"):
        parse_config(suite_toml("fixture = true\n"), "pyproject.toml")


def test_its_lock_pins_nothing_and_says_so(tmp_path: Path):
    record = locks.pin(None, tmp_path, 1)
    assert record["fixture"] == {"path": None, "sha256": EMPTY_DIGEST, "size": 0}
    schemas.validate("lock", record, "lock")
    locks.verify_fixture(record, tmp_path)  # nothing to have changed
    # A lock may not claim "no fixture" and a digest of some bytes, nor name a file of no bytes.
    for fixture in (
        {"path": None, "sha256": "0" * 64, "size": 0},
        {"path": None, "sha256": EMPTY_DIGEST, "size": 3},
        {"path": "tests/fixtures/empty.json", "sha256": EMPTY_DIGEST, "size": 0},
    ):
        with pytest.raises(WitnessGateError, match="not a valid lock"):
            schemas.validate("lock", {**record, "fixture": fixture}, "lock")


def runner(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "witness_gate", *args], cwd=root, env=env, capture_output=True, text=True, timeout=900
    )


def pytest_only(tmp_path: Path) -> Repo:
    """The orders example as a pytest-only team has it: its own @given module, no JSON
    fixture of the gate's (the module reads its files itself), `fixture = false`."""
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "tests/properties/orders_props.py").unlink()
    (repo.root / MODULE).write_text(EXISTING_TESTS)
    repo.edit("pyproject.toml", 'fixture = "tests/fixtures/orders.json"\n', "fixture = false\n")
    repo.commit("base: a pytest-only suite, declared without fixture data")
    repo.branch("patch")
    return repo


def test_the_gate_and_the_review_run_a_suite_without_fixture_data(tmp_path: Path):
    repo = pytest_only(tmp_path)
    gated = runner(
        repo.root,
        "gate",
        "--no-fixture",
        "--generator-version",
        "1",
        "--properties",
        "tests/properties",
        "--out",
        ".artifacts/gate",
        "--max-examples",
        "30",
        "--check-only",
    )
    assert gated.returncode == 0, gated.stdout + gated.stderr
    assert json.loads((repo.root / ".artifacts/gate/fixture.lock").read_text())["fixture"]["path"] is None
    shutil.rmtree(repo.root / ".artifacts")
    repo.edit(IMPL, *HONEST)
    repo.commit("an honest change")
    green = repo.review()
    assert green.returncode == 0, green.stdout + green.stderr
    repo.edit(IMPL, HONEST[1], BUG[1].replace('line["qty"] * line["price"]', 'line["price"] * line["qty"]'))
    repo.commit("a bug")
    assert_red(repo.review(), "regression:", "failing input: ")


def test_exactly_one_of_fixture_and_no_fixture(tmp_path: Path):
    for args in ((), ("--no-fixture", "--fixture", "x.json")):
        done = runner(tmp_path, "pin", "--generator-version", "1", "--out", str(tmp_path / "lock"), *args)
        assert done.returncode == 2 and "exactly one" in done.stderr, done.stderr
