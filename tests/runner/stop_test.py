"""A review or gate stopped by a signal (a cancelled CI job sends SIGTERM, a person at a
terminal SIGINT) kills its workers and removes what it staged: its temporary trees, its
staging directory, and nothing new in `--out`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.review_repo import IMPL, Repo, buggy, review_repo


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    return review_repo(tmp_path)


def _a_worker_of(pid: int) -> bool:
    """Whether the process `pid` has started a confined worker (the launcher becomes bwrap),
    or an unconfined one."""
    for entry in os.listdir("/proc"):
        try:
            status = Path(f"/proc/{entry}/status").read_text() if entry.isdigit() else ""
        except OSError:
            continue
        if f"\nPPid:\t{pid}\n" in status and status.split("\n", 1)[0].split()[-1] in ("bwrap", "python", "python3"):
            return True
    return False


def _inside(directory: Path) -> list[str]:
    """Processes whose working directory lies under `directory` (workers run in their tree)."""
    found = []
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            if Path(os.readlink(f"/proc/{entry}/cwd")).is_relative_to(directory):
                found.append(entry)
        except OSError:
            continue
    return found


def stopped(repo: Repo, command: list[str], number: int) -> subprocess.CompletedProcess:
    """`command` (the CLI's arguments) run in the repository with its own temporary
    directory, sent `number` once it has started a worker."""
    temporary = repo.root.parent / "tmp"
    temporary.mkdir()
    environment = {
        **os.environ,
        "TMPDIR": str(temporary),
        "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "witness_gate", *command],
        cwd=repo.root,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not _a_worker_of(process.pid):
        assert process.poll() is None and time.monotonic() < deadline, "the run ended before any worker started"
        time.sleep(0.05)
    time.sleep(0.5)  # into the worker's conversation
    process.send_signal(number)
    out, err = process.communicate(timeout=120)
    assert list(temporary.iterdir()) == [], "temporary trees left behind"
    assert _inside(repo.root.parent) == [], "processes left behind"
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.parametrize("number", [signal.SIGTERM, signal.SIGINT])
def test_a_stopped_review_leaves_no_worker_tree_or_staging_and_publishes_nothing(repo: Repo, number: int):
    buggy(repo)
    repo.commit("a bug: its replays keep workers busy")
    done = stopped(
        repo, ["review", "--base", "main", "--head", "patch", "--out", str(repo.root.parent / "out")], number
    )
    assert done.returncode == 128 + number, done.stdout + done.stderr
    assert f"stopped by {signal.Signals(number).name}" in done.stderr
    assert sorted(path.name for path in repo.root.parent.iterdir()) == ["repo", "tmp"]  # no out, no .out.staging-*


def test_a_stopped_gate_leaves_its_earlier_output_and_no_staging(repo: Repo):
    buggy(repo)
    (repo.root.parent / "changed.txt").write_text(f"{IMPL}\n")
    earlier = repo.root / ".artifacts/gate"
    earlier.mkdir(parents=True)
    (earlier / "notes.txt").write_text("an earlier run's\n")
    done = stopped(
        repo,
        [
            "gate",
            "--fixture",
            "tests/fixtures/orders.json",
            "--generator-version",
            "3",
            "--properties",
            "tests/properties",
            "--out",
            ".artifacts/gate",
            "--diff-paths",
            str(repo.root.parent / "changed.txt"),
        ],
        signal.SIGTERM,
    )
    assert done.returncode == 128 + signal.SIGTERM, done.stdout + done.stderr
    assert sorted(path.name for path in (repo.root / ".artifacts").iterdir()) == ["gate"]  # no .gate.staging
    assert [path.name for path in earlier.iterdir()] == ["notes.txt"]
