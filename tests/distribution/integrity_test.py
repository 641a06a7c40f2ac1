"""The runner PEX checks its installed copy before `review` decides: a copy that a
previous job wrote into (under a reused PEX_ROOT) refuses to review.

The attack: pull request A's code, run as the CI user outside any sandbox (an ordinary
test step), appends to the runner's installed `labels.py` so that every verdict is a
pass; pull request B, reviewed later on the same machine, carries a real bug."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from support.review_repo import CAUGHT, Repo, assert_red, buggy, review_repo


@pytest.fixture
def pex(tmp_path: Path) -> Path:
    [built] = Path.cwd().glob("runner/witness-gate.pex")  # this test's runtime package
    return Path(shutil.copy2(built, tmp_path / "witness-gate.pex"))


def review_with(pex: Path, repo: Repo, pex_root: Path) -> subprocess.CompletedProcess:
    environment = {"PATH": os.environ["PATH"], "HOME": os.environ["HOME"], "PEX_ROOT": str(pex_root)}
    return subprocess.run(
        [str(pex), "review", "--base", "main", "--head", "patch", "--out", str(repo.root.parent / "out")],
        cwd=repo.root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_a_runner_whose_installed_copy_was_edited_refuses_to_review(pex: Path, tmp_path: Path):
    repo, pex_root = review_repo(tmp_path), tmp_path / "pex_root"
    buggy(repo)
    repo.commit("B: the bug")
    assert_red(review_with(pex, repo, pex_root), CAUGHT)  # installs the venv, and works
    [classify] = pex_root.glob("venvs/*/*/lib/python*/site-packages/witness_gate/labels.py")
    with open(classify, "a") as handle:  # what A's code did between the two jobs
        handle.write("\n\ndef most_severe(codes):\n    return 0\n")
    result = review_with(pex, repo, pex_root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "differs from" in result.stderr and "witness_gate/labels.py" in result.stderr, result.stderr
    assert "fresh PEX_ROOT" in result.stderr
