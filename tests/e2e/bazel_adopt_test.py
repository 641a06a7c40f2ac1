"""Adopting the Bazel rules without Pants, following docs/adopt.md section 4 to the letter.

`bazel/release` builds the rules' archive from this checkout; the guide's pex CLI commands
build the runner PEX from the runner wheel (this test's runtime package, in `wheels/`). A
separate git repository holds the library of the guide's section 1 and the Bazel files of
its section 4, and nothing of Pants; its WORKSPACE names the archive by a file:// URL and
the sha256 `bazel/release` printed. One Bazel server (the `bazel` on PATH gives it the test's
output root, so the guide's commands run verbatim) goes through a pass, a regression with
its failing input, the suites document for review, and the refusals. Bazel may reach no
network host, so the archive is all the repository fetches. What tests/e2e/bazel_test.py
proves of the rule itself (freezes, mixed edits, the corpus) is not repeated here.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.bazel import SOURCE, host_env, require_bazel, short_work_dir
from support.git_repo import GitRepo, Run
from support.guide import BUG, FLAKY, HONEST, IMPL, commands, guide_blocks
from support.loopback_index import pinned_dependency_wheels, served, simple_index
from support.processes import mentioning
from support.pull_requests import GitHub, copy_job
from witness_gate import __version__, schemas

TOP = f"witness-gate-bazel-{__version__}"
# What a repository using the rules needs from witness-gate: its Bazel files, unchanged.
ARCHIVED = [
    "bazel/BUILD.bazel",
    "bazel/changed-files.sh",
    "bazel/defs.bzl",
    "bazel/gate_test.sh.tpl",
    "bazel/repositories.bzl",
    "bazel/suites.py",
]
TARGET = "//tests:properties"
PLACEHOLDERS = (f"<URL of {TOP}.tar.gz>", "<the sha256 bazel/release printed>")
RUNNER_FLAG = "build --@witness_gate//bazel:runner=//:dist/runner/witness-gate.pex\n"


def release(checkout: Path) -> tuple[str, bytes]:
    """`bazel/release` in a checkout: the sha256 it printed, and the archive's bytes."""
    done = subprocess.run([str(checkout / "bazel/release")], capture_output=True, text=True, env=host_env())
    assert done.returncode == 0, done.stderr
    digest, path = done.stdout.split()
    assert path == f"dist/bazel/{TOP}.tar.gz", done.stdout
    data = (checkout / path).read_bytes()
    assert hashlib.sha256(data).hexdigest() == digest
    return digest, data


@pytest.fixture(scope="module")
def released() -> tuple[str, bytes]:
    return release(SOURCE)


def test_the_archive_is_the_same_bytes_from_any_checkout(released, tmp_path):
    time.sleep(1.1)  # a run in another second: a clock reading in the archive would show
    assert release(SOURCE) == released
    # Another checkout, elsewhere, its files touched at other times and with another umask's modes.
    elsewhere = tmp_path / "another-checkout"
    for path in ["bazel", "runner/witness_gate/__init__.py"]:
        (elsewhere / path).parent.mkdir(parents=True, exist_ok=True)
        (shutil.copytree if (SOURCE / path).is_dir() else shutil.copy2)(SOURCE / path, elsewhere / path)
    for path in [elsewhere / "runner/witness_gate/__init__.py", *(elsewhere / "bazel").iterdir()]:
        os.utime(path, (1_000_000_000, 1_000_000_000))
        path.chmod(0o700 if os.access(path, os.X_OK) else 0o600)
    assert release(elsewhere) == released


def test_the_archive_holds_this_repositorys_bazel_files_unchanged(released):
    _, data = released
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = {member.name: member for member in archive.getmembers()}
        files = {
            name.removeprefix(f"{TOP}/"): archive.extractfile(member).read()
            for name, member in members.items()
            if member.isfile()
        }
    assert all(name == TOP or name.startswith(f"{TOP}/") for name in members), sorted(members)
    assert sorted(files) == ["WORKSPACE", *ARCHIVED]
    assert files["WORKSPACE"] == b'workspace(name = "witness_gate")\n'
    for path in ARCHIVED:
        assert files[path] == (SOURCE / path).read_bytes(), f"{path} differs from this repository's"
        assert members[f"{TOP}/{path}"].mode == (0o755 if os.access(SOURCE / path, os.X_OK) else 0o644), path


class BazelAdopter(GitRepo):
    def __init__(self, root: Path, env: dict[str, str]) -> None:
        super().__init__(root)
        self.env = env

    def sh(self, command: str, timeout: int = 600) -> Run:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.root, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def run_block(self, name: str) -> Run:
        """The guide's run block: every command but the last must succeed; the last's run."""
        *preparing, last = commands(name)
        for command in preparing:
            done = self.sh(command)
            assert done.code == 0, (command, done.output)
        return self.sh(last)

    def reset(self) -> None:
        self.git("checkout", "-q", "-f", "main")
        self.git("clean", "-fdq")  # ignored files (the runner, the wheel, the pex tool) stay

    def gate_record(self) -> dict:
        with zipfile.ZipFile(self.root / "bazel-testlogs/tests/properties/test.outputs/outputs.zip") as outputs:
            return json.loads(outputs.read("gate.json"))


@pytest.fixture(scope="module")
def adopter(released) -> Iterator[BazelAdopter]:
    require_bazel()
    work = short_work_dir()
    root = work / "ledger"
    digest, data = released
    archive = work / f"{TOP}.tar.gz"  # the release's download, on disk
    archive.write_bytes(data)
    # Bazel may reach no network host (file:// URLs are still read); Debian's
    # /etc/bazel/bazelrc keeps every sandbox, which --nosandbox_debug undoes.
    no_network = work / "no-network.cfg"
    no_network.write_text("block *\n")
    machine_rc = work / "machine.bazelrc"
    machine_rc.write_text(
        "".join(f"{command} --experimental_downloader_config={no_network}\n" for command in ("build", "query"))
        + "build --nosandbox_debug\n"
    )
    # The `bazel` the guide's commands (and @witness_gate//bazel:suites inside `bazel run`) call.
    shim = work / "bin/bazel"
    shim.parent.mkdir()
    bazel = shutil.which("bazel")
    assert bazel is not None  # require_bazel() above
    shim.write_text(
        f'#!/bin/sh\nexec {shlex.quote(bazel)} --output_user_root={work / "out"} --bazelrc={machine_rc} "$@"\n'
    )
    shim.chmod(0o755)

    for path, text in {**guide_blocks("file", section="1. "), **guide_blocks("bazel-file")}.items():
        if path == "WORKSPACE":
            assert all(placeholder in text for placeholder in PLACEHOLDERS), text
            text = text.replace(PLACEHOLDERS[0], archive.as_uri()).replace(PLACEHOLDERS[1], digest)
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    assert not [
        path for path in root.rglob("*") if path.name in ("pants", "pants.toml", "BUILD")
    ], "a Pants file among the Bazel repository's"
    [wheel] = Path.cwd().glob("witness_gate-*.whl")  # this test's runtime package, in its sandbox
    (root / "wheels").mkdir()
    shutil.copy2(wheel, root / "wheels")
    (root / ".gitignore").write_text(
        "/bazel-*\n/dist/\n/wheels/\n/.pex-tool/\n/.artifacts/\n/.witness-gate/changed.txt\n"
    )

    adopter = BazelAdopter(root, {**host_env(), "PATH": f"{shim.parent}:{os.environ['PATH']}"})
    built = adopter.run_block("runner-pex")
    assert built.code == 0 and built.output.startswith(f"witness-gate {__version__}"), built.output
    adopter.git("init", "-q", "-b", "main")
    adopter.commit("the ledger, gated by bazel test")
    try:
        yield adopter
    finally:
        adopter.sh("bazel shutdown")
        shutil.rmtree(work, ignore_errors=True)


def test_bazel_test_passes_the_library_and_blocks_a_regression_with_its_failing_input(adopter):
    adopter.reset()
    green = adopter.run_block("bazel-gate")
    assert green.code == 0 and re.search(rf"^{TARGET} +PASSED", green.output, re.M), green.output
    assert adopter.gate_record()["verdict"] == "pass"

    adopter.edit(IMPL, *BUG)
    red = adopter.run_block("bazel-gate")
    # The list came from the repository, where `bazel run` was called, not from the runfiles tree.
    assert (adopter.root / ".witness-gate/changed.txt").read_text() == f"{IMPL}\n"
    assert (
        red.code == 3 and "regression: prop_balance_is_credits_minus_debits failed 60/60 replays" in red.output
    ), red.output
    [printed] = re.findall(r"^  failing input: (.*)$", red.output, re.M)
    assert any(entry["kind"] == "credit" and entry["amount"] > 5000 for entry in json.loads(printed)), printed
    gate = adopter.gate_record()
    schemas.validate("gate", gate, "gate.json")
    assert gate["verdict"] == "blocked" and {row["label"] for row in gate["witnesses"]} == {"regression"}


def test_the_suites_for_review_come_from_bazel_run_in_the_repository(adopter):
    # @witness_gate//bazel:suites queries and builds with the same Bazel server, which
    # `bazel run` released before the script started.
    adopter.reset()
    listed = adopter.run_block("bazel-suites")
    assert listed.code == 0, listed.output
    document = json.loads((adopter.root / ".artifacts/suites.json").read_text())
    schemas.validate("suites", document, "suites.json")
    assert document["commit"] == adopter.git("rev-parse", "HEAD")
    [suite] = document["suites"]
    assert (suite["name"], suite["address"], suite["impl"], suite["import_paths"]) == (
        "tests.properties",
        TARGET,
        [IMPL],
        ["src"],
    )
    assert suite["oracle"] == ["tests/BUILD.bazel", "tests/fixtures/accounts.json", "tests/properties/ledger_props.py"]


def test_without_the_runner_flag_every_gated_test_fails_with_the_line_to_add(adopter):
    adopter.reset()
    adopter.edit(".bazelrc", RUNNER_FLAG, "")
    run = adopter.sh(f"bazel test {TARGET}")
    assert run.code == 1 and "PASSED" not in run.output, run.output
    assert (
        f"{TARGET}: @witness_gate//bazel:runner names no runner PEX: add `{RUNNER_FLAG.strip()}` "
        "(the label of your runner PEX) to .bazelrc"
    ) in run.output, run.output


def test_without_the_changed_list_the_test_fails_and_names_the_rules_own_command(adopter):
    adopter.reset()
    run = adopter.sh(f"bazel test {TARGET}")
    assert run.code == 3, run.output
    assert (
        "`bazel run @witness_gate//bazel:changed-files -- origin/main > .witness-gate/changed.txt`) and pass "
        "--@witness_gate//bazel:changed_files=//:.witness-gate/changed.txt"
    ) in run.output, run.output


@pytest.fixture(scope="module")
def index_wheels(tmp_path_factory) -> list[Path]:
    """What the team's index serves: the runner wheel (this test's runtime package) and its
    dependencies' wheels, as the job pins them."""
    [wheel] = Path.cwd().glob("witness_gate-*.whl")
    return [
        wheel.absolute(),
        *pinned_dependency_wheels(SOURCE / "docs/ci/review-job.sh", tmp_path_factory.mktemp("wheels")),
    ]


def bazel_servers(workspace: Path) -> dict[int, str]:
    """The live Bazel servers of `workspace`: each names it on its command line."""
    return mentioning(f"--workspace_directory={workspace}")


def gone(workspace: Path, seconds: float = 10) -> dict[int, str]:
    """The Bazel servers of `workspace` still live after up to `seconds` (a server that was
    told to shut down may take a moment to exit)."""
    deadline = time.monotonic() + seconds
    while (left := bazel_servers(workspace)) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


def failing_input(summary: str, assertion: str) -> list:
    """The failing input of the summary's regression row for `assertion`."""
    [cell] = re.findall(
        rf"^\| tests\.properties \| {assertion} \| \*\*regression\*\* \|.*?\| `([^`]*)` \|", summary, re.M
    )
    return json.loads(cell)


def test_a_bazel_team_gets_green_red_a_flake_its_approved_freeze_and_its_expiry_from_the_copied_job(
    adopter, index_wheels, tmp_path
):
    """The whole story of the guide's Bazel repository through the workflow and the job
    copied verbatim, the runner installed by hash from a loopback index, the suites printed
    by the repository's own Bazel (this module's server): an honest pull request, a bug, a
    flake, the freeze its summary's steps write from a checkout of the base (an oracle review,
    0 once an owner approved, then merged), and the flaky change under the freeze. An author's
    own approval and the freeze's expiry meet the job's same steps on any base: the
    pytest-only story (tests/distribution/review_job_test.py) runs them. The other tests of
    the module find main as it was."""
    adopter.reset()
    original = adopter.git("rev-parse", "main")
    try:
        copy_job(adopter.root)
        (adopter.root / ".github/CODEOWNERS").write_text("/tests/ @org/spec-owners\n")
        # Two replays an interpreter keep the story quick; every verdict is the same.
        adopter.edit(
            "tests/BUILD.bazel", 'fixture = ":accounts-fixture",', 'fixture = ":accounts-fixture",\n    replays = 2,'
        )
        adopter.commit("the pull-request job, the oracle's owners, two replays")
        pull_requests = {"honest": HONEST, "bug": BUG, "flaky": FLAKY}
        for branch, change in pull_requests.items():
            adopter.git("checkout", "-q", "-B", branch, "main")
            adopter.edit(IMPL, *change)
            adopter.commit(f"the {branch} change")
        adopter.git("checkout", "-q", "main")
        teams = {"@org/spec-owners": ["carol"]}
        with served(simple_index(tmp_path / "index", index_wheels), tmp_path / "requests.log") as index:
            github = GitHub(adopter.root, tmp_path, adopter.env, index)
            for branch in pull_requests:
                github.open(branch)

            # No Bazel server before the job (a fresh CI machine's): the one its `bazel run`
            # starts is stopped by the job, not left for three idle hours.
            adopter.sh("bazel shutdown")
            assert not gone(adopter.root)
            honest = github.review("honest")
            assert honest.code == 0 and "review: pass (exit 0" in honest.output, honest.output
            assert re.search(r"^job: the base's Bazel printed the suites in [0-9.]+ s$", honest.output, re.M)
            assert "suites: tests.properties (declared in the base's build graph" in honest.output
            assert not gone(adopter.root), f"the job left its Bazel server running: {bazel_servers(adopter.root)}"

            # A server running before the job is not the job's: the same one runs after it.
            started = adopter.sh("bazel info server_pid")
            [server] = [int(pid) for pid in re.findall(r"^(\d+)$", started.output, re.M)]
            assert server in bazel_servers(adopter.root), started.output
            bug = github.review("bug")
            assert server in bazel_servers(adopter.root), "the job stopped a Bazel server it did not start"
            assert bug.code == 1 and "tests.properties: regression: prop_balance_is_credits_minus_debits" in bug.output
            entries = failing_input(github.summary(), "prop_balance_is_credits_minus_debits")
            assert any(entry["kind"] == "credit" and entry["amount"] > 5000 for entry in entries), entries

            flaky = github.review("flaky")
            assert flaky.code == 1, flaky.output
            assert "tests.properties: flake: prop_balance_is_credits_minus_debits" in flaky.output, flaky.output
            assert "bazel run @witness_gate//bazel:suites " in github.summary()  # the base's suites, by its Bazel
            freeze, frozen = github.freeze({"HOME": str(tmp_path / "home"), "WITNESS_GATE_INDEX_URL": index})
            # A Bazel glob stays in its package: the test's freezes are below it.
            assert all(path.startswith("tests/.witness-gate/freezes/") for path in frozen), frozen
            github.open(freeze)

            github.freeze_approved_and_merged(freeze, frozen, teams)
    finally:
        adopter.git("checkout", "-q", "-f", "main")
        adopter.git("reset", "-q", "--hard", original)
        adopter.git("remote", "remove", "origin")
