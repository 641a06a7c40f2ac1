"""tests/support/tools.py: a missing tool fails the suite under CI and skips it elsewhere.

Pants reports a target whose tests all skipped as "succeeded", so under CI=true a skip
would hide a whole area that never ran; this runs pytest on a test that needs a missing
tool, under each value of CI, and reads its outcome."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

NEEDS_A_TOOL = """
from support.tools import missing


def test_needs_a_tool():
    missing("the frobnicator is not installed")
"""


def outcome(tmp_path: Path, ci: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "needs_tool_test.py").write_text(NEEDS_A_TOOL)
    env = {key: value for key, value in os.environ.items() if key != "CI"}
    if ci is not None:
        env["CI"] = ci
    env["PYTHONPATH"] = os.pathsep.join(os.path.abspath(p) for p in sys.path)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "needs_tool_test.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("ci", ["true", "1", "TRUE", "yes"])
def test_under_ci_a_missing_tool_fails_with_its_reason(tmp_path: Path, ci: str):
    done = outcome(tmp_path, ci)
    assert done.returncode == 1 and "1 failed" in done.stdout, done.stdout
    assert (
        "the frobnicator is not installed (CI is set: a missing tool fails the suite instead of skipping it)"
        in done.stdout
    )


@pytest.mark.parametrize("ci", [None, "", "false", "0", "no"])
def test_elsewhere_a_missing_tool_skips_and_says_why(tmp_path: Path, ci: str | None):
    done = outcome(tmp_path, ci)
    assert done.returncode == 0 and "1 skipped" in done.stdout, done.stdout
    assert "the frobnicator is not installed" in done.stdout  # -rs: the reason is printed
