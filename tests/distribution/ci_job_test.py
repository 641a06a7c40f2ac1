"""The pull-request CI job of docs/review.md, run as written, in a workspace a previous
job's code left a `.git/hooks/post-checkout` in: the hook never runs, and the job's review
is red on the pull request's bug.

Only the runner's build step is replaced (by this test's prebuilt runner PEX): the
repository under review is the orders example, which has no Pants of its own."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from support.review_repo import CAUGHT, buggy, review_repo

ROOT = Path(__file__).resolve().parents[2]
BUILD_STEP = "(cd ../trusted && ./pants package runner:witness-gate)"


def documented_job() -> str:
    text = (ROOT / "docs/review.md").read_text()
    [job] = re.findall(r"A CI job for a pull request, in full.*?```bash\n(.*?)```", text, re.S)
    assert BUILD_STEP in job, job
    return job


def test_the_documented_ci_job_runs_no_hook_and_blocks_the_bug(tmp_path: Path):
    [pex] = Path.cwd().glob("runner/witness-gate.pex")  # this test's runtime package
    origin = review_repo(tmp_path / "origin")
    buggy(origin)
    origin.commit("the pull request: a bug")
    head = origin.git("rev-parse", "patch")
    origin.git("checkout", "-q", "main")
    workspace = tmp_path / "jobs" / "workspace"
    subprocess.run(["git", "clone", "-q", str(origin.root), str(workspace)], check=True)
    marker = tmp_path / "hook-ran"
    hook = workspace / ".git/hooks/post-checkout"  # what a previous job's code left behind
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    build = f"mkdir -p ../trusted/dist/runner && cp {pex.absolute()} ../trusted/dist/runner/witness-gate.pex"
    job = "set -euo pipefail\n" + documented_job().replace(BUILD_STEP, build)
    done = subprocess.run(
        ["bash", "-c", job],
        cwd=workspace,
        env={**os.environ, "PR_HEAD_SHA": head},
        capture_output=True,
        text=True,
        timeout=900,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert CAUGHT in output, output
    assert not marker.exists(), "the job ran a hook from the reused checkout"
    assert (workspace / ".artifacts/review/review.json").is_file()


def setup_failed(done: subprocess.CompletedProcess, step: str) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"setup failed: {step}" in done.stderr.splitlines(), done.stderr


def test_a_setup_step_of_the_documented_ci_job_that_fails_exits_2_not_a_verdict(tmp_path: Path):
    origin = review_repo(tmp_path / "origin")
    origin.commit("the pull request: empty")
    head = origin.git("rev-parse", "patch")
    origin.git("checkout", "-q", "main")
    workspace = tmp_path / "jobs" / "workspace"
    subprocess.run(["git", "clone", "-q", str(origin.root), str(workspace)], check=True)
    job = "set -euo pipefail\n" + documented_job()  # verbatim: the example has no ./pants to build the runner with

    def run(sha: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", job],
            cwd=workspace,
            env={**os.environ, "PR_HEAD_SHA": sha},
            capture_output=True,
            text=True,
            timeout=300,
        )

    setup_failed(run("0" * 40), "git fetch")  # a head the origin does not have
    setup_failed(run(head), "the base's ./pants could not build the runner")
    assert not (workspace / ".artifacts").exists()
