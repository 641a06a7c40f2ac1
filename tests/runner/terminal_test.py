"""Terminal behaviour: a progress bar and colour on a TTY, plain lines elsewhere."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from conftest import SampleRepo
from gate_test import BUG, IMPL

GATE = [
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
    "changed.txt",
]


def run_on_terminal(repo: SampleRepo, env: dict[str, str]) -> str:
    """Runs the gate with stdout and stderr on a pseudo-terminal; returns what it showed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "witness_gate", *GATE], cwd=repo.root, env=env, stdout=follower, stderr=follower
    )
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is gone
            break
        if not chunk:
            break
        shown += chunk
    process.wait(timeout=300)
    os.close(leader)
    return shown.decode("utf-8", "replace")


def environment(repo: SampleRepo, **extra: str) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    return {**base, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path), "TERM": "xterm", **extra}


def test_a_terminal_gets_colour_and_no_plain_progress_lines(repo: SampleRepo):
    repo.edit(IMPL, *BUG)
    (repo.root / "changed.txt").write_text(f"{IMPL}\n")
    shown = run_on_terminal(repo, environment(repo))
    assert "\x1b[" in shown  # ANSI styling
    assert "replay interpreter" not in shown
    assert "regression" in shown


def test_ci_or_a_pipe_gets_plain_lines_without_colour(repo: SampleRepo):
    repo.edit(IMPL, *BUG)
    (repo.root / "changed.txt").write_text(f"{IMPL}\n")
    on_ci = run_on_terminal(repo, environment(repo, CI="true"))
    assert "witness-gate: tests/properties/orders_props.py: replay interpreter 6/6 done" in on_ci
    piped = subprocess.run(
        [sys.executable, "-m", "witness_gate", *GATE],
        cwd=repo.root,
        env=environment(repo),
        capture_output=True,
        text=True,
    )
    assert piped.returncode == 1
    assert "\x1b[" not in piped.stdout + piped.stderr
    assert "witness-gate: tests/properties/orders_props.py: replay interpreter 6/6 done" in piped.stderr
