"""One version everywhere, and the ranges the runner declares: their lower bounds really run.

The ranges in pyproject.toml and 3rdparty/python/requirements.txt are what the runner's
wheel declares; the lockfile pins the newest releases, which every other test runs; this
file runs the lower bound of each (Hypothesis, jsonschema, typer, rich), together in a
fresh venv from PyPI, through a whole gate, and shows a lock pinned under one Hypothesis
is refused under the other."""

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


# The runner's requirements, each with a lower bound CI runs.
REQUIREMENTS = ("hypothesis", "jsonschema", "typer", "rich")


def declared(name: str) -> str:
    [spec] = [
        r
        for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
        if re.match(rf"{name}\b", r)
    ]
    return spec


def lowest_version(name: str) -> str:
    bound = re.fullmatch(rf"{name}>=([\d.]+)(,<[\d.]+)?", declared(name))
    assert bound, declared(name)
    return bound.group(1)


def test_every_copy_of_the_version_agrees():
    version = witness_gate.__version__
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"] == version
    for build in ("runner/BUILD", "rules/BUILD"):
        assert re.findall(r'version="([^"]+)"', (ROOT / build).read_text()) == [version], build
    assert re.search(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(), re.M).group(1) == version
    printed = subprocess.run(
        [sys.executable, "-m", "witness_gate", "--version"], capture_output=True, text=True, check=True
    )
    assert printed.stdout == f"witness-gate {version} (Hypothesis {hypothesis_version()})\n"


@pytest.mark.parametrize("name", REQUIREMENTS)
def test_each_range_is_declared_once_in_two_places(name: str):
    requirements = [
        line
        for line in (ROOT / "3rdparty/python/requirements.txt").read_text().splitlines()
        if re.match(rf"{name}\b", line)
    ]
    assert requirements == [declared(name)]


@pytest.fixture(scope="module")
def lowest(tmp_path_factory) -> tuple[str, str]:
    """A venv with the lower bound of every range the runner declares, from PyPI (what
    they depend on in turn is pip's choice, as for anyone who installs them); the
    runner's sources come from this checkout."""
    venv = tmp_path_factory.mktemp("lowest") / "venv"
    # The interpreter a venv of this one was made from (a private name of CPython's `sys`).
    subprocess.run([getattr(sys, "_base_executable"), "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [
            str(venv / "bin/pip"),
            "install",
            "-q",
            "--disable-pip-version-check",
            *(f"{name}=={lowest_version(name)}" for name in REQUIREMENTS),
        ],
        check=True,
        timeout=900,
    )
    return str(venv / "bin/python"), str(Path(witness_gate.__file__).resolve().parents[1])


def test_the_venv_holds_each_lower_bound(lowest):
    python, _ = lowest
    script = f"import importlib.metadata as m, json; print(json.dumps([m.version(n) for n in {list(REQUIREMENTS)!r}]))"
    installed = json.loads(subprocess.run([python, "-c", script], capture_output=True, text=True, check=True).stdout)
    assert [release(v) for v in installed] == [release(lowest_version(name)) for name in REQUIREMENTS]


def release(version: str) -> tuple[int, ...]:
    """A plain release number without its trailing zeros (6.140 is 6.140.0)."""
    parts = [int(part) for part in version.split(".")]
    while parts and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def test_the_lowest_versions_gate_a_regression_and_its_lock_is_refused_under_another(lowest, tmp_path):
    python, runner = lowest
    old = copy_example(tmp_path / "orders", python=python, python_path=runner)
    # The gate's artifacts are checked against schemas/ (jsonschema) as they are written.
    clean = old.gate()
    assert clean.code == 0 and re.search(r"^gate: pass \(exit 0", clean.stdout, re.M), clean.stdout + clean.stderr
    assert (old.root / ".artifacts/gate/gate.json").is_file()
    old.edit(IMPL, *BUG)
    result = old.gate(IMPL)
    assert result.code == 1, result.stdout + result.stderr
    assert "regression: prop_order_total_non_negative failed 60/60 replays" in result.stdout
    pinned_with = json.loads((old.root / ".artifacts/gate/fixture.lock").read_text())["hypothesis_version"]
    assert pinned_with != hypothesis_version()

    # This interpreter, on the lock pinned above.
    refused = SampleRepo(old.root).cli(
        "classify",
        "--lock",
        ".artifacts/gate/fixture.lock",
        "--witnesses",
        ".artifacts/gate/witnesses",
        "--diff-paths",
        "changed.txt",
    )
    assert refused.code == 2
    assert f"pinned with Hypothesis {pinned_with}, running {hypothesis_version()}" in refused.stderr
