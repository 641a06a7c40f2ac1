"""A repository around a released project's code (tests/e2e/real_*_test.py): its files, one
gated suite in pyproject.toml, and the runner's CLI on it, from this interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

from support.git_repo import GitRepo


def suite_pyproject(name: str) -> str:
    """The implementation under src/, the oracle under tests/properties/, one suite `name`."""
    return f'''[tool.witness-gate]
impl-prefixes = ["src/"]
oracle-prefixes = ["tests/properties/"]
import-paths = ["src"]

[[tool.witness-gate.suites]]
name = "{name}"
fixture = "tests/fixtures/none.json"
generator-version = 1
properties = ["tests/properties"]
replays = 2
'''


def runner_env() -> dict[str, str]:
    """This environment, with this interpreter's import path (the runner's) for the CLI."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}


def cli(repo: GitRepo, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "witness_gate", *args], cwd=repo.root, env=runner_env(), capture_output=True,
                          text=True, timeout=900)


def write(repo: GitRepo, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        (repo.root / path).parent.mkdir(parents=True, exist_ok=True)
        (repo.root / path).write_bytes(data)
