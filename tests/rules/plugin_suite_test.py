"""Runs the plugin's RuleRunner tests (the other `*_test.py` files here) on Pants' own
interpreter: CPython 3.9 with pantsbuild.pants.testutil, from the `./pants` bootstrap.

`[pytest]` installs from the 3.11 resolve, which cannot carry Pants 2.17 (it is cp39-only),
so this test is the bridge: it passes exactly when that suite passes, and prints its report.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
SUITE = sorted(path.name for path in HERE.glob("*_test.py") if path.name != Path(__file__).name)


def test_plugin_rule_runner_suite():
    python = os.environ.get("WITNESS_GATE_PANTS_PYTHON")
    assert (
        python
    ), "WITNESS_GATE_PANTS_PYTHON is unset: run the tests through ./pants, which bootstraps that interpreter"
    assert SUITE == [
        "rules_test.py",
        "run_rule_test.py",
        "suites_test.py",
        "target_pages_test.py",
        "target_types_test.py",
    ]
    root = HERE.parents[1]
    result = subprocess.run(
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", *(str(HERE / name) for name in SUITE)],
        cwd=root,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(root / "rules"), str(root / "docs")])},
        capture_output=True,
        text=True,
        timeout=900,
    )
    print(result.stdout, result.stderr)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout and " failed" not in result.stdout
