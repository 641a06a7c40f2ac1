"""One version everywhere, and the Hypothesis range CI claims: its lower bound really runs.

The range in pyproject.toml and 3rdparty/python/requirements.txt is what the runner's
wheel declares; the lockfile pins the newest release, which every other test runs; this
file runs the lower bound, in a fresh venv from PyPI, through a whole gate, and shows a
lock pinned under one version is refused under the other."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from support.sample_repo import SampleRepo, copy_example

import witness_gate
from witness_gate.lock import hypothesis_version

ROOT = Path(__file__).resolve().parents[2]
BUG = ('return line["qty"] * line["price"]', 'return line["qty"] * line["price"] - (1 if line["qty"] > 3 else 0)')
IMPL = "src/orders_app/pricing.py"


def declared_hypothesis() -> str:
    [spec] = [r for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"] if r.startswith("hypothesis")]
    return spec


def test_every_copy_of_the_version_agrees():
    version = witness_gate.__version__
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == version
    for build in ("runner/BUILD", "rules/BUILD"):
        assert re.findall(r'version="([^"]+)"', (ROOT / build).read_text()) == [version], build
    assert re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M).group(1) == version
    printed = subprocess.run([sys.executable, "-m", "witness_gate", "--version"], capture_output=True, text=True, check=True)
    assert printed.stdout == f"witness-gate {version} (Hypothesis {hypothesis_version()})\n"


def test_the_hypothesis_range_is_declared_once_in_two_places():
    requirements = [line for line in (ROOT / "3rdparty/python/requirements.txt").read_text().splitlines() if line.startswith("hypothesis")]
    assert requirements == [declared_hypothesis()]


@pytest.fixture(scope="module")
def lowest(tmp_path_factory) -> tuple[str, str]:
    """A venv with the range's lower bound of Hypothesis (and the runner's other
    requirements) from PyPI; the runner's sources come from this checkout."""
    bound = re.fullmatch(r"hypothesis>=([\d.]+),<\d+", declared_hypothesis())
    assert bound, declared_hypothesis()
    venv = tmp_path_factory.mktemp("lowest") / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(venv / "bin/pip"), "install", "-q", "--disable-pip-version-check", f"hypothesis=={bound.group(1)}.0",
                    "jsonschema>=4.23,<5", "typer>=0.12,<0.29", "rich>=13.8"], check=True, timeout=900)
    return str(venv / "bin/python"), str(Path(witness_gate.__file__).resolve().parents[1])


def test_the_lowest_hypothesis_gates_a_regression_and_its_lock_is_refused_under_another(lowest, tmp_path):
    python, runner = lowest
    old = copy_example(tmp_path / "orders", python=python, python_path=runner)
    old.edit(IMPL, *BUG)
    result = old.gate(IMPL)
    assert result.code == 1, result.stdout + result.stderr
    assert "regression: prop_order_total_non_negative failed 60/60 replays" in result.stdout
    pinned_with = json.loads((old.root / ".artifacts/gate/fixture.lock").read_text())["hypothesis_version"]
    assert pinned_with != hypothesis_version()

    # This interpreter, on the lock pinned above.
    refused = SampleRepo(old.root).cli("classify", "--lock", ".artifacts/gate/fixture.lock", "--witnesses", ".artifacts/gate/witnesses", "--diff-paths", "changed.txt")
    assert refused.code == 2
    assert f"pinned with Hypothesis {pinned_with}, running {hypothesis_version()}" in refused.stderr
