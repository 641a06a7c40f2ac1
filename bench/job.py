"""How long the pull-request job takes, run verbatim on an honest pull request.

    ./pants --no-pantsd package runner:dist rules:dist    # the two wheels, into dist/
    python3.11 bench/job.py [--runs 3] [--keep]

It builds a small Pants repository as tests/e2e/adopt_test.py's `adopter` fixture does
(the guide's files, this build's wheels in wheels/, the launcher, a committed lockfile; the
guide's plain @given module beside the properties), copies docs/ci/review-job.sh to
.ci/witness-gate-review.sh, commits an honest change on a branch and runs the job from
main as CI does. Pants' caches are filled first as the workflow's cache-miss step fills
them (`./pants --no-pantsd --version`), so each timed job is one with the workflow's caches
restored. It prints the job's wall time and the share the base's Pants took (from the
job's own `job: ...` lines) against the targets (60 s and 15 s), with baselines measured in
the same run: Pants' start-up alone, the runner's install alone and plain pytest of the
suite. Nothing here asserts a timing: the machines are shared and noisy (bench/README.md
records a run). It also says what each job left running (nothing, or the processes).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import cpu_account  # noqa: E402
from support.git_repo import GitRepo  # noqa: E402
from support.guide import GUIDE, IMPL, guide_blocks  # noqa: E402
from support.processes import mentioning  # noqa: E402

JOB_TARGET = 60.0
PANTS_TARGET = 15.0
# The same balances, the operands in the other order: an honest change.
HONEST = (
    'entry["amount"] if entry["kind"] == "credit" else -entry["amount"]',
    '-entry["amount"] if entry["kind"] == "debit" else entry["amount"]',
)
PINS = re.compile(r"<<'PINS'\n(.*?)^PINS\n", re.S | re.M)


# Where a command's CPU is counted: a control group of its own (every process it started,
# the runner's sandboxed workers included), or, where none can be made, its reaped children's
# times, which miss most of what the workers did (bench/cpu_account.py).
CPU_MISSING = cpu_account.available()


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int, str]:
    """Wall seconds, CPU seconds (user and system, see CPU_MISSING), exit status and output
    of one command."""
    done = cpu_account.run(argv, cwd, env, capture=True)
    return done.wall, done.cpu if done.cpu is not None else done.reaped_cpu, done.exit_code, done.output


def must(done: tuple[float, float, int, str], what: str) -> tuple[float, float, int, str]:
    if done[2] != 0:
        sys.exit(f"bench/job.py: {what} failed (exit {done[2]}):\n{done[3]}")
    return done


def plain_given_module() -> str:
    """The guide's team test as it was (a plain @given module), from docs/adopt.md."""
    [module] = re.findall(r"```python\n(# tests/properties/test_balance\.py:.*?)```", GUIDE.read_text(), re.S)
    return module


def adopter(root: Path, env: dict[str, str]) -> GitRepo:
    """The guide's ledger under Pants with the job on main and an honest change on `patch`."""
    wheels = sorted((ROOT / "dist").glob("witness_gate*-0.4.0-py3-none-any.whl"))
    if {w.name.split("-")[0] for w in wheels} != {"witness_gate", "witness_gate_pants"}:
        sys.exit("bench/job.py: dist/ lacks this build's wheels: ./pants --no-pantsd package runner:dist rules:dist")
    (root / "wheels").mkdir(parents=True)
    for wheel in wheels:
        shutil.copy2(wheel, root / "wheels")
    shutil.copy2(ROOT / "pants", root / "pants")
    for path, text in {**guide_blocks("file"), "tests/properties/test_balance.py": plain_given_module()}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / ".gitignore").write_text(
        "/.pants-bootstrap/\n/.pants.d/\n/.pids/\n/dist/\n/.venv/\n/.artifacts/\n__pycache__/\n"
    )
    (root / ".ci").mkdir()
    shutil.copy2(ROOT / "docs/ci/review-job.sh", root / ".ci/witness-gate-review.sh")
    repo = GitRepo(root)
    repo.git("init", "-q", "-b", "main")
    must(timed(["./pants", "--no-pantsd", "generate-lockfiles"], root, env), "./pants generate-lockfiles")
    repo.commit("the ledger, gated, with the pull-request job")
    repo.git("checkout", "-q", "-b", "patch")
    repo.edit(IMPL, *HONEST)
    repo.commit("an honest change")
    repo.git("checkout", "-q", "main")
    return repo


def step(output: str, pattern: str) -> float:
    """A step's seconds, from the job's own `job: ...` line."""
    found = re.search(rf"^job: {pattern} ([0-9.]+) s", output, re.M)
    if not found:
        sys.exit(f"bench/job.py: the job printed no line `job: {pattern} ... s`:\n{output}")
    return float(found.group(1))


def verdict(value: float, target: float) -> str:
    return f"target {target:.0f} s: {'met' if value <= target else 'missed'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="timed jobs (and Pants start-ups); the median is printed")
    parser.add_argument("--keep", action="store_true", help="keep the repository (its path is printed)")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="witness-gate-job-bench-"))
    # A Pants store of this run's own, as the adoption test keeps one (a rebuilt 0.4.0 plugin
    # wheel must not meet a stale resolve); named caches and the launcher's bootstrap are
    # this machine's, as the workflow restores them.
    env = {**os.environ, "PANTS_LOCAL_STORE_DIR": str(work / "store")}
    load_before = os.getloadavg()[0]
    print(
        f"CPU: {'reaped children only: ' + CPU_MISSING if CPU_MISSING else 'a control group per command'}", flush=True
    )
    try:
        root = work / "ledger"
        adopter(root, env)
        job_env = {**env, "PIP_FIND_LINKS": str(root / "wheels")}  # the runner wheel, as the release

        fill = must(timed(["./pants", "--no-pantsd", "--version"], root, env), "the cache-filling ./pants --version")
        print(
            f"cache miss: the workflow's filling step (./pants --no-pantsd --version): {fill[0]:.1f} s",
            flush=True,
        )

        starts = [
            must(timed(["./pants", "--no-pantsd", "--version"], root, env), "./pants --version")
            for _ in range(args.runs)
        ]
        start_wall = statistics.median(s[0] for s in starts)
        start_cpu = statistics.median(s[1] for s in starts)
        print(
            f"baseline: Pants' start-up alone (./pants --no-pantsd --version, warm): {start_wall:.1f} s wall, "
            f"{start_cpu:.1f} s CPU (median of {args.runs})",
            flush=True,
        )

        requirements = work / "runner-requirements.txt"
        pins = PINS.search((root / ".ci/witness-gate-review.sh").read_text())
        assert pins is not None, "the job holds no pins block"
        requirements.write_text(pins.group(1))
        venv = work / "runner"
        install = must(
            timed(
                [
                    "bash",
                    "-c",
                    f'python3.11 -m venv "{venv}" && "{venv}/bin/pip" install --quiet --disable-pip-version-check '
                    f'--require-hashes --only-binary :all: --no-deps -r "{requirements}"',
                ],
                root,
                job_env,
            ),
            "the runner's install",
        )
        print(f"baseline: the runner's install alone (a fresh venv, the job's pins): {install[0]:.1f} s", flush=True)
        pytest = timed(
            [str(venv / "bin/python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties"],
            root,
            {**env, "PYTHONPATH": str(root / "src")},
        )
        if pytest[2] != 0:
            sys.exit(f"bench/job.py: plain pytest of the suite failed (exit {pytest[2]}):\n{pytest[3]}")
        print(f"baseline: plain pytest of the suite (tests/properties): {pytest[0]:.1f} s", flush=True)

        runs = []
        for number in range(1, args.runs + 1):
            already = mentioning(root)
            wall, cpu, code, output = timed(["bash", ".ci/witness-gate-review.sh", "main", "patch"], root, job_env)
            if code != 0 or "review: pass (exit 0" not in output:
                sys.exit(f"bench/job.py: the job on an honest pull request did not pass (exit {code}):\n{output}")
            [job_work] = re.findall(r"declared in the base's build graph \((\S+)/suites\.json\)", output)
            left = {pid: command for pid, command in mentioning(root, job_work).items() if pid not in already}
            pants, installed, review = (
                step(output, "the base's Pants printed the suites in"),
                step(output, "the pinned runner installed in"),
                step(output, "the review took"),
            )
            print(
                f"job {number}: {wall:.1f} s wall, {cpu:.1f} s CPU; the base's Pants {pants} s, "
                f"the runner's install {installed} s beside it, the review {review} s; "
                f"left running: {', '.join(left.values()) or 'nothing'}",
                flush=True,
            )
            runs.append((wall, cpu, pants, installed, review, left))

        wall = statistics.median(r[0] for r in runs)
        pants = statistics.median(r[2] for r in runs)
        print(
            f"job, an honest pull request, verbatim: {wall:.1f} s wall, median of {args.runs} "
            f"({verdict(wall, JOB_TARGET)}); "
            f"{statistics.median(r[1] for r in runs):.1f} s CPU; vs plain pytest of the suite {pytest[0]:.1f} s",
            flush=True,
        )
        print(
            f"Pants in the job: {pants:.1f} s, {pants / wall:.0%} of the job ({verdict(pants, PANTS_TARGET)}); "
            f"its start-up alone {start_wall:.1f} s wall, {start_cpu:.1f} s CPU",
            flush=True,
        )
        print(
            f"left running after the jobs: {'nothing' if not any(r[5] for r in runs) else [r[5] for r in runs]}",
            flush=True,
        )
        print(
            f"machine: {os.cpu_count()} cores, load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after",
            flush=True,
        )
    finally:
        if args.keep:
            print(f"kept: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
