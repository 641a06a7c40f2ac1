"""docs/ci/review-job.sh, the pull-request job a team copies, run verbatim from a checkout
of the base: it installs the runner and its whole dependency closure by sha256 from the
index the team names (here one on loopback that also offers planted runners), and every
step before the review that fails exits 2 with "setup failed: ...", never 1 (a verdict).

The pins it carries are what docs/ci/pin_runner.py writes from the lockfile and this
build's runner wheel (this test's runtime package), so they cannot go stale. The
repository reviewed is the orders example with its suite in pyproject.toml (no Pants of
its own: the job reads the suites from there)."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

from support.commands import path_without
from support.expiry import ShiftedClock, env_passing
from support.guide import guide_blocks
from support.loopback_index import PLANTED, pinned_dependency_wheels, planted_wheel, served, simple_index
from support.processes import mentioning
from support.pull_requests import GitHub, copy_job
from support.review_repo import BUG, IMPL, ORACLE, Repo, review_repo

ROOT = Path(__file__).resolve().parents[2]
JOB = ROOT / "docs/ci/review-job.sh"
WHEEL = "witness_gate-0.4.0-py3-none-any.whl"
# An honest change: the same totals, the factors swapped.
HONEST = ('return line["qty"] * line["price"]', 'return line["price"] * line["qty"]')


def pin_runner():
    spec = importlib.util.spec_from_file_location("pin_runner", ROOT / "docs/ci/pin_runner.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def runner_wheel() -> Path:
    [wheel] = Path.cwd().glob(WHEEL)  # this test's runtime package, `./pants package runner:dist`
    return wheel.absolute()


def test_the_jobs_pins_are_the_lockfile_and_this_builds_runner_wheel(runner_wheel: Path):
    pins = pin_runner()
    shipped = pins.shipped(JOB.read_text())
    assert shipped == pins.pins(runner_wheel), (
        "docs/ci/review-job.sh pins another runner wheel or lock: ./pants package runner:dist && "
        f"python3.11 docs/ci/pin_runner.py dist/{WHEEL}"
    )
    # The closure: the runner's own requirements and what they need on CPython 3.11, nothing else.
    names = [line.split("==")[0] for line in shipped.splitlines() if "==" in line]
    assert names[0] == "witness-gate" and {
        "hypothesis",
        "jsonschema",
        "typer",
        "rich",
        "pytest",
        "rpds-py",
        "sortedcontainers",
    } <= set(names)
    assert not {"check-jsonschema", "requests", "colorama", "tomli"} & set(names), names
    assert all(line.strip().startswith("--hash=sha256:") for line in shipped.splitlines() if "==" not in line)


@pytest.fixture(scope="module")
def dependency_wheels(tmp_path_factory) -> list[Path]:
    return pinned_dependency_wheels(JOB, tmp_path_factory.mktemp("wheels"))


# The example's suite as a Bazel team declares it, in tests/BUILD.bazel (and nowhere else).
BAZEL_BUILD = (
    'load("@witness_gate//bazel:defs.bzl", "witness_gate_test")\n'
    'witness_gate_test(name = "properties", properties = glob(["properties/*.py"]), fixture = "fixtures/orders.json",\n'
    '                  generator_version = 3, deps = ["//src/orders_app"], replays = 2)\n'
)


def bazel_based(tmp_path: Path, bazel: str, change: tuple[str, str], bazelversion: bool = True) -> tuple[Repo, Path]:
    """The orders example declared for Bazel only (with the guide's .bazelversion unless
    not `bazelversion`), with the job on main and `change` on `patch`; `bazel` is the body
    of the `bazel` command the job finds first on PATH."""
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    (repo.root / "pyproject.toml").unlink()  # the build graph declares the suite, once
    (repo.root / "tests/BUILD.bazel").write_text(BAZEL_BUILD)
    (repo.root / "WORKSPACE").write_text("")
    if bazelversion:
        (repo.root / ".bazelversion").write_text(guide_blocks("bazel-file")[".bazelversion"])
    job = repo.root / ".ci/witness-gate-review.sh"
    job.parent.mkdir()
    shutil.copy2(JOB, job)
    repo.commit("base: declared for Bazel, and the pull-request job")
    repo.branch("patch")
    repo.edit(IMPL, *change)
    repo.commit("the change")
    repo.git("checkout", "-q", "main")
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "bazel").write_text(bazel)
    (tools / "bazel").chmod(0o755)
    return repo, tools


def based(tmp_path: Path, pants: str | None = None) -> Repo:
    """The orders example with the job at .ci/witness-gate-review.sh (and `pants`, a
    launcher, when given) on main, an honest change on `patch`, main checked out."""
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    job = repo.root / ".ci/witness-gate-review.sh"
    job.parent.mkdir()
    shutil.copy2(JOB, job)
    if pants is not None:
        (repo.root / "pants").write_text(pants)
        (repo.root / "pants").chmod(0o755)
    repo.commit("the pull-request job, copied from witness-gate's docs/ci")
    repo.branch("patch")
    repo.edit(IMPL, *HONEST)
    repo.commit("an honest change")
    repo.git("checkout", "-q", "main")
    return repo


def run_job(
    repo: Repo, index: str | None, path: str | None = None, base: str = "main", extra_env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    # No pip configuration of this machine: the index named is the only source.
    environment = {
        "PATH": path or os.environ["PATH"],
        "HOME": os.environ["HOME"],
        "PIP_CONFIG_FILE": os.devnull,
        **(extra_env or {}),
    }
    if index:
        environment["WITNESS_GATE_INDEX_URL"] = index
    return subprocess.run(
        ["bash", ".ci/witness-gate-review.sh", base, "patch"],
        cwd=repo.root,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


def setup_failure(done: subprocess.CompletedProcess, reason: str) -> None:
    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert any(line.startswith("setup failed: ") and reason in line for line in done.stderr.splitlines()), output


def test_a_planted_runner_under_the_pinned_version_is_refused(tmp_path: Path, dependency_wheels: list[Path]):
    # The index serves other bytes under the pinned runner's own name and version.
    planted = planted_wheel(tmp_path / "planted", "0.4.0")
    assert planted.name == WHEEL
    root = simple_index(tmp_path / "index", [planted, *dependency_wheels])
    repo = based(tmp_path / "job")
    with served(root, tmp_path / "requests.log") as index:
        done = run_job(repo, index)
    setup_failure(done, "pip could not install the pinned runner 0.4.0")
    assert "DO NOT MATCH THE HASHES" in done.stderr and PLANTED not in done.stdout + done.stderr, done.stderr
    assert not (repo.root / ".artifacts").exists()


NO_INDEX = "WITNESS_GATE_INDEX_URL is not set"
# Not contacted: each of these stops before pip runs.
UNUSED_INDEX = "http://127.0.0.1:9/simple"


def test_without_a_named_index_the_job_stops_as_setup(tmp_path: Path):
    setup_failure(run_job(based(tmp_path), None), NO_INDEX)


def test_without_bubblewrap_the_job_stops_as_setup(tmp_path: Path):
    repo = based(tmp_path / "job")
    setup_failure(
        run_job(repo, UNUSED_INDEX, path=path_without(tmp_path / "bin", "bwrap")), "bubblewrap (bwrap) is not on PATH"
    )


def test_without_cpython_311_the_job_stops_as_setup(tmp_path: Path):
    repo = based(tmp_path / "job")
    setup_failure(
        run_job(repo, UNUSED_INDEX, path=path_without(tmp_path / "bin", "python3.11")),
        "CPython 3.11 (python3.11) is not on PATH",
    )


def test_a_base_whose_pants_fails_stops_the_job_as_setup(tmp_path: Path):
    repo = based(
        tmp_path, pants='#!/bin/sh\necho "$@" >"$0.argv"\necho \'pants: no interpreter for the plugin\' >&2\nexit 1\n'
    )
    done = run_job(repo, UNUSED_INDEX)
    setup_failure(done, "the base's ./pants could not print its suites")
    assert "pants: no interpreter for the plugin" in done.stderr
    # The job runs one goal and leaves no Pants daemon behind it.
    assert (repo.root / "pants.argv").read_text().split()[:2] == ["--no-pantsd", "witness-gate-suites"]


# The base's Pants, failing once the runner's pip is installing (it names the job's work
# directory in its --output-file=; the pip, the pins there): the pip it saw is recorded beside it.
PANTS_FAILING_DURING_THE_INSTALL = r"""#!/bin/sh
echo "$@" >"$0.argv"
work="$(dirname "${3#--output-file=}")"
for _ in $(seq 1200); do
  # [p]: this grep's own command line does not match
  if grep -qsa -e "$work/runner-requirement[s]" /proc/[0-9]*/cmdline; then
    echo seen >"$0.pip"
    echo 'pants: no interpreter for the plugin' >&2
    exit 1
  fi
  sleep 0.1
done
exit 1
"""


def test_a_job_that_stops_early_stops_the_runners_install_it_started(tmp_path: Path):
    # The runner installs beside the base's Pants; when Pants fails, the job's exit stops
    # the install (its pip waits on an index that accepts connections and never answers).
    with socket.socket() as silent:  # open until the end: closing it would end the pip
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        repo = based(tmp_path, pants=PANTS_FAILING_DURING_THE_INSTALL)
        started = time.monotonic()
        done = run_job(repo, f"http://127.0.0.1:{silent.getsockname()[1]}/simple")
        took = time.monotonic() - started
        setup_failure(done, "the base's ./pants could not print its suites")
        assert (repo.root / "pants.pip").read_text() == "seen\n", "the fake Pants never saw the install running"
        work = Path((repo.root / "pants.argv").read_text().split()[2].removeprefix("--output-file=")).parent
        assert took < 60, took  # pip alone waits on the silent index for minutes (15 s a try, 5 retries)
        deadline = time.monotonic() + 10
        while (left := mentioning(work)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"the job left these running: {left}"
    assert not work.exists()


# python3.11 on a machine without its pip (Debian's, without python3-pip): `-m pip` fails,
# everything else is the real interpreter's (its venv and ensurepip too).
PYTHON_WITHOUT_PIP = """#!/bin/sh
if [ "$1" = -m ] && [ "$2" = pip ]; then echo "python3.11: No module named pip" >&2; exit 1; fi
exec {real} "$@"
"""


@pytest.mark.parametrize(
    "pip", ["python3.11's own pip (22.3 or newer)", "the venv's pip (python3.11 has no pip 22.3+)"]
)
def test_the_job_installs_a_runner_that_runs_with_python311s_pip_or_without_it(
    tmp_path: Path, runner_wheel: Path, dependency_wheels: list[Path], pip: str
):
    # The job says which pip installs the runner: python3.11's own into a venv without pip
    # where it has one that can (--python), the venv's own otherwise. Either way the
    # installed runner runs: the review itself refuses a head that is not a commit (exit 2,
    # no setup failure), which costs no suite run.
    repo = based(tmp_path / "job")
    repo.git("branch", "-q", "-D", "patch")
    path = os.environ["PATH"]
    if pip.startswith("the venv's"):
        real = shutil.which("python3.11")
        assert real is not None
        (tmp_path / "bin").mkdir()
        (tmp_path / "bin/python3.11").write_text(PYTHON_WITHOUT_PIP.format(real=shlex.quote(real)))
        (tmp_path / "bin/python3.11").chmod(0o755)
        path = f"{tmp_path / 'bin'}:{path}"
    with served(
        simple_index(tmp_path / "index", [runner_wheel, *dependency_wheels]), tmp_path / "requests.log"
    ) as index:
        done = run_job(repo, index, path=path)
    output = done.stdout + done.stderr
    assert f"job: installing the runner with {pip}" in done.stderr.splitlines(), output
    assert re.search(r"^job: the pinned runner installed in [0-9.]+ s$", done.stderr, re.M), output
    assert done.returncode == 2 and "setup failed" not in output, output
    assert "witness-gate: error: git rev-parse --verify: fatal: Needed a single revision" in output, output


def test_a_job_run_from_the_head_or_on_an_unknown_base_stops_as_setup(tmp_path: Path):
    repo = based(tmp_path)
    repo.git("checkout", "-q", "patch")
    setup_failure(run_job(repo, UNUSED_INDEX), "never from the head's")
    setup_failure(run_job(repo, UNUSED_INDEX, base="no-such-branch"), "is not a commit here")


def test_the_workflow_sets_up_every_interpreter_the_launcher_and_the_job_need_and_names_the_index():
    workflow = (ROOT / "docs/ci/github-workflow.yml").read_text()
    [versions] = re.findall(r"python-version: \|\n((?:\s+[\d.]+\n)+)", workflow)
    needed = {f"3.{minor}" for minor in re.findall(r"find_python (\d+)\)", (ROOT / "pants").read_text())}
    needed |= set(re.findall(r"command -v python(3\.\d+)", JOB.read_text()))
    assert needed == {"3.9", "3.11"} and needed <= set(versions.split()), (needed, versions)
    assert "WITNESS_GATE_INDEX_URL: ${{ vars.WITNESS_GATE_INDEX_URL }}" in workflow
    assert "apt-get install -y --no-install-recommends bubblewrap" in workflow
    # A Bazel team's Bazel is the runner's Bazelisk, pinned by the base's .bazelversion
    # (the job refuses a Bazel base without one): the workflow installs no Bazel of its own.
    assert "Bazelisk" in workflow and ".bazelversion" in workflow, workflow
    assert not re.search(r"setup-bazel|bazelisk/releases|install[^\n]*bazel", workflow), workflow


def test_the_workflow_caches_only_what_the_base_wrote_before_the_head_is_reviewed():
    # The job's caches (the base's Pants and its caches, pip's downloads of the pins) are
    # restored and, on a miss, filled and saved in steps before the job's: nothing the
    # review ran (the head's code) is on the machine when they are saved, and a hit is never
    # saved over. No actions/cache, whose post step would save after the review.
    workflow = (ROOT / "docs/ci/github-workflow.yml").read_text()
    job_step = workflow.index('.ci/witness-gate-review.sh "${{ github.sha }}"')
    assert "actions/cache@" not in workflow
    [restore] = [m.start() for m in re.finditer(r"uses: actions/cache/restore@", workflow)]
    [save] = [m.start() for m in re.finditer(r"uses: actions/cache/save@", workflow)]
    assert restore < save < job_step
    fill = workflow[restore:save]
    assert fill.count("if: steps.job-cache.outputs.cache-hit != 'true'") == 2, fill
    assert "./pants --no-pantsd --version" in fill and "--require-hashes" in fill, fill
    # Keyed by the base's files that decide them; only the caches, never the checkout.
    [key] = re.findall(r"key: (witness-gate-job-.*)", workflow)
    assert "hashFiles('pants', 'pants.toml', '**/*.lock', '.ci/witness-gate-review.sh')" in key, key
    for block in re.findall(r"path: \|\n((?:\s+~/.*\n)+)", workflow):
        assert set(block.split()) == {
            "~/.cache/witness-gate-bootstrap",
            "~/.cache/pants/named_caches",
            "~/.cache/pants/lmdb_store",
            "~/.cache/pip",
        }, block


def test_a_bazel_base_whose_bazel_fails_stops_the_job_as_setup(tmp_path: Path):
    repo, tools = bazel_based(tmp_path, "#!/bin/sh\necho 'bazel: no @witness_gate repository' >&2\nexit 1\n", HONEST)
    done = run_job(repo, UNUSED_INDEX, path=f"{tools}:{os.environ['PATH']}")
    setup_failure(done, "the base's bazel could not print its suites")
    assert "bazel: no @witness_gate repository" in done.stderr


def test_a_bazel_base_without_a_bazelversion_stops_the_job_as_setup(tmp_path: Path):
    # GitHub's `bazel` is Bazelisk: without the base's .bazelversion it would run the newest
    # Bazel. The job stops before it asks any Bazel.
    repo, tools = bazel_based(tmp_path, '#!/bin/sh\necho "$@" >>"$0.argv"\n', HONEST, bazelversion=False)
    done = run_job(repo, UNUSED_INDEX, path=f"{tools}:{os.environ['PATH']}")
    setup_failure(done, "has no .bazelversion: commit one naming the Bazel you run")
    assert "rules are tested on 4.2.3" in done.stderr and not (tools / "bazel.argv").exists(), done.stderr


# The head's change draws from `random`: a line above 5,000 loses a unit now and then, a
# flake of the head's code, which the base's never has.
FLAKY = (
    'return line["qty"] * line["price"]',
    'import random\n    return line["qty"] * line["price"] - (1 if line["qty"] * line["price"] > 5000 and '
    "random.random() < 0.4 else 0)",
)


def test_a_pytest_only_team_gets_green_red_a_flake_its_approved_freeze_and_its_expiry_from_the_copied_job(
    tmp_path: Path, runner_wheel: Path, dependency_wheels: list[Path]
):
    """The whole story of a pytest-only team (an existing @given module, its suite in
    pyproject.toml without a fixture), through the workflow and the job copied verbatim and
    installed by hash from a loopback index that also offers a planted higher runner: an
    honest pull request, a bug, a flake, the freeze its summary's steps write from a checkout
    of the base (exit 3 until an owner approves, then merged), the flaky change under the
    freeze, and the freeze's expiry."""
    from support.existing_tests import EXISTING_TESTS, MODULE

    repo = review_repo(tmp_path / "job")
    repo.git("checkout", "-q", "main")
    (repo.root / ORACLE).unlink()
    (repo.root / MODULE).write_text(EXISTING_TESTS)
    repo.edit("pyproject.toml", 'fixture = "tests/fixtures/orders.json"\n', "fixture = false\n")
    (repo.root / ".gitignore").write_text("/.artifacts/\n__pycache__/\n")
    copy_job(repo.root)
    (repo.root / ".github/CODEOWNERS").write_text("/tests/ @org/spec-owners\n/.witness-gate/ @org/spec-owners\n")
    repo.commit("base: a pytest-only suite, the pull-request job and the oracle's owners")
    pull_requests = {"honest": HONEST, "bug": BUG, "flaky": FLAKY}
    for branch, change in pull_requests.items():
        repo.branch(branch)
        repo.edit(IMPL, *change)
        repo.commit(f"the {branch} change")
    index_root = simple_index(
        tmp_path / "index", [runner_wheel, *dependency_wheels, planted_wheel(tmp_path / "planted", "0.5.0")]
    )
    teams = {"@org/spec-owners": ["carol"]}
    # The review reads the clock libfaketime gives it from the file only (see env_passing).
    clock = ShiftedClock(tmp_path)
    path = f"{env_passing(tmp_path / 'clock', clock.env())}:{os.environ['PATH']}"
    with served(index_root, tmp_path / "requests.log") as index:
        github = GitHub(repo.root, tmp_path, {"PATH": path, "HOME": os.environ["HOME"]}, index)
        for branch in pull_requests:
            github.open(branch)

        honest = github.review("honest")
        assert honest.code == 0 and "review: pass (exit 0" in honest.output, honest.output
        assert (
            "suites: orders (declared in the base's pyproject.toml)" in honest.output and PLANTED not in honest.output
        )
        fetched = (tmp_path / "requests.log").read_text()
        assert f"GET /files/{WHEEL} " in fetched and "witness_gate-0.5.0" not in fetched, fetched

        bug = github.review("bug")
        assert bug.code == 1 and f"orders: regression: {MODULE}::" in bug.output, bug.output
        summary = github.summary()
        assert summary.startswith("## witness-gate review: blocked (exit 1)"), summary
        assert re.search(r"\| \*\*regression\*\* \| .* \| `Failing test case: test_\w+\(", summary), summary

        flaky = github.review("flaky")
        assert flaky.code == 1, flaky.output
        assert f"orders: flake: {MODULE}::test_total_is_the_sum_of_its_lines" in flaky.output, flaky.output
        freeze, frozen = github.freeze({"HOME": str(tmp_path / "home"), "WITNESS_GATE_INDEX_URL": index})
        assert all(path.startswith(".witness-gate/freezes/") for path in frozen), frozen
        github.open(freeze)

        # The author's own approval never counts; an owner's of the head does.
        github.freeze_merged_until_it_expires(freeze, frozen, teams, clock)
