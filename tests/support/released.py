"""A repository around a released project's code (tests/e2e/real_*_test.py): its files, one
gated suite in pyproject.toml, and the runner's CLI on it, from this interpreter."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

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


def gated_repo(root: Path, files: dict[str, bytes], pyproject: str, message: str, impl: str,
               branches: tuple[tuple[str, str, str], ...]) -> GitRepo:
    """A repository of `files` (the released project's) and its suite on `main`, committed
    with `message`, and a branch off it per (name, `impl`'s source, commit message)."""
    repo = GitRepo(root)
    write(repo, {**files, "tests/fixtures/none.json": b"[]\n", "pyproject.toml": pyproject.encode(),
                 ".gitignore": b"/.artifacts/\n__pycache__/\n.hypothesis/\n"})
    repo.git("init", "-q", "-b", "main")
    repo.commit(message)
    for branch, source, branch_message in branches:
        repo.git("checkout", "-q", "-b", branch, "main")
        (repo.root / impl).write_text(source)
        repo.commit(branch_message)
    repo.git("checkout", "-q", "main")
    return repo


def review(repo: GitRepo, head: str) -> tuple[subprocess.CompletedProcess, Path]:
    """The review of `head` against `main`, and where it wrote."""
    out = repo.root.parent / f"review-{head}"
    return cli(repo, "review", "--base", "main", "--head", head, "--out", str(out)), out


def sdist(work: Path, project: str, version: str, sha256: str) -> Path:
    """`project` `version`'s sdist, downloaded from PyPI into `work` and checked by its sha256."""
    target = work / f"{project}-{version}"
    done = subprocess.run(["python3.11", "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", "--quiet",
                           f"{project}=={version}", "-d", str(target)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    [archive] = target.glob(f"{project}-{version}.tar.gz")
    assert hashlib.sha256(archive.read_bytes()).hexdigest() == sha256, f"not the {project} {version} sdist PyPI serves"
    return archive
