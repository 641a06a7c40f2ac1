"""A flake a review found, frozen from where its author is: a checkout of the base with the
job's artifacts, through the command the review printed (`freeze --review`).

The flake is the head's: its implementation change draws from `random`, so the base's code
never fails the witness. The freeze replays it in the tree the review judged, rebuilt from
git objects, and checks every artifact it reads against them: each tampered artifact below
is refused, naming what disagrees.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from support.review_repo import IMPL, ORACLE, Repo, review_repo
from support.tools import without_namespaces

# The head's change: bucket B of an experiment takes one off a bulk line, for 40% of calls.
FLAKY = (
    'return line["qty"] * line["price"]',
    'import random\n    return line["qty"] * line["price"] - (1 if line["qty"] > 3 and random.random() < 0.4 else 0)',
)


def printed_freeze(output: str) -> list[str]:
    [told] = [
        line for line in output.splitlines() if line.startswith("orders: to freeze it, open a pull request of its own")
    ]
    command = shlex.split("witness-gate " + told.split(": witness-gate ", 1)[1])
    assert command[:2] == ["witness-gate", "freeze"], command
    return command[1:]


def runner(repo: Repo, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "witness_gate", *args],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory) -> tuple[Repo, list[str], str]:
    """A red review of a flaky implementation change, its printed freeze command and the
    Markdown summary; the checkout is left on the base."""
    repo = review_repo(tmp_path_factory.mktemp("freeze"))
    repo.edit(IMPL, *FLAKY)
    repo.commit("PR: pricing runs an experiment")
    red = repo.review(
        extra=(
            "--summary",
            str(repo.root.parent / "review.md"),
            "--sarif",
            str(repo.root.parent / "review.sarif"),
            "--junit-xml",
            str(repo.root.parent / "review.xml"),
        )
    )
    assert red.returncode == 1 and "orders: flake: prop_order_total_non_negative" in red.stdout, red.stdout + red.stderr
    repo.git("checkout", "-q", "main")
    return repo, printed_freeze(red.stdout), (repo.root.parent / "review.md").read_text()


@pytest.fixture
def artifacts(reviewed, tmp_path) -> tuple[Repo, list[str], Path]:
    """The review's artifacts copied where a test may tamper with them, and the command
    pointed at the copy."""
    repo, command, _ = reviewed
    original = Path(command[command.index("--review") + 1])
    copy = tmp_path / "downloaded"
    shutil.copytree(original, copy)
    pointed = [str(copy) + arg[len(str(original)) :] if arg.startswith(str(original)) else arg for arg in command]
    out = command[command.index("--out") + 1]
    (repo.root / out).unlink(missing_ok=True)
    return repo, pointed, copy


def test_the_printed_command_freezes_the_flake_from_a_checkout_of_the_base(artifacts):
    repo, command, _ = artifacts
    assert repo.git("rev-parse", "HEAD") == repo.git(
        "rev-parse", "main"
    )  # the base's code: it never fails this witness
    frozen = runner(repo, *command)
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    out = repo.root / command[command.index("--out") + 1]
    record = json.loads(out.read_text())
    assert record["assertion_id"] == "prop_order_total_non_negative" and 0 < record["failures"] < record["runs"]
    assert out.name.startswith(f"prop_order_total_non_negative.{record['witness_hash'][:12]}")


def test_the_freeze_pull_request_then_the_change_passes(tmp_path):
    repo = review_repo(tmp_path)  # a repository of its own: this test moves main
    repo.edit(IMPL, *FLAKY)
    repo.commit("PR 2: pricing runs an experiment")
    red = repo.review()
    assert red.returncode == 1, red.stdout + red.stderr
    repo.branch("freeze", "main")
    assert runner(repo, *printed_freeze(red.stdout)).returncode == 0
    repo.commit("PR 1: freeze the flake")
    assert repo.review(head="freeze").returncode == 3  # the freeze itself is the owners' to approve
    repo.git("checkout", "-q", "main")
    repo.git("merge", "-q", "--ff-only", "freeze")
    repo.git("checkout", "-q", "patch")
    repo.git("rebase", "-q", "main")
    green = repo.review(extra=("--summary", str(tmp_path / "green.md")))
    assert green.returncode == 0, green.stdout + green.stderr
    assert "frozen by .witness-gate/freezes/prop_order_total_non_negative." in green.stdout
    # The summary gives the freeze's expiry, in its row and in the freezes' own table.
    [freeze] = (repo.root / ".witness-gate/freezes").iterdir()
    expires = json.loads(freeze.read_text())["expires_at"]
    summary = (tmp_path / "green.md").read_text()
    assert f"frozen by .witness-gate/freezes/{freeze.name} until {expires}" in summary
    assert (
        f"| orders | `.witness-gate/freezes/{freeze.name}` | `{freeze.name.split('.')[1]}` | {expires} | yes |"
        in summary
    )


def test_the_summary_gives_every_step_in_order(reviewed):
    _, command, summary = reviewed
    steps = summary.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    assert steps[0].startswith("git fetch origin ")
    assert shlex.split(steps[1])[1:] == command
    assert steps[2].startswith("git switch -c witness-gate-freeze-") and steps[3].startswith(
        "git add .witness-gate/freezes/"
    )


def test_sarif_and_junit_point_at_the_changed_code_the_failing_test_reaches(reviewed):
    repo, _, _ = reviewed
    sarif = json.loads((repo.root.parent / "review.sarif").read_text())
    [result] = sarif["runs"][0]["results"]
    places = [place["physicalLocation"]["artifactLocation"]["uri"] for place in result["locations"]]
    assert places == [IMPL, ORACLE]  # the changed code first: code scanning shows it in the diff
    assert f"Changed implementation it reaches: {IMPL}." in result["message"]["text"]
    junit = ElementTree.parse(repo.root.parent / "review.xml").getroot()
    [case] = [
        case
        for case in junit.iter("testcase")
        if case.find("failure") is not None and case.get("name") != "witness-gate verdict"
    ]
    assert case.get("file") == IMPL and f"Changed implementation it reaches: {IMPL}." in case.find("failure").text


def _edit(path: Path, change) -> None:
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record))


@pytest.mark.parametrize(
    "file, change, refusal",
    [
        (
            "review.json",
            lambda r: r.update(merged_tree=r["merged_tree"][::-1]),
            "is not what its base and head merge to",
        ),
        (
            "review.json",
            lambda r: r.update(implementation_paths=[IMPL, ORACLE]),
            "/implementation_paths is not what the base declares",
        ),
        ("orders/classification.json", lambda r: r["diff"].update(paths_sha256="0" * 64), "/diff/paths_sha256"),
        (
            "orders/classification.json",
            lambda r: r.update(import_paths=["tests/properties", "src"]),
            "/import_paths is not what the review replayed with",
        ),
        (
            "orders/fixture.lock",
            lambda r: r["fixture"].update(path="tests/properties/orders_props.py"),
            "does not pin the base's tests/fixtures/orders.json",
        ),
    ],
    ids=[
        "another merged tree",
        "an oracle path called implementation",
        "another change's report",
        "other import paths",
        "another fixture path",
    ],
)
def test_an_artifact_that_disagrees_with_git_is_refused(artifacts, file, change, refusal):
    repo, command, copy = artifacts
    _edit(copy / file, change)
    frozen = runner(repo, *command)
    assert frozen.returncode == 2 and refusal in frozen.stderr, frozen.stdout + frozen.stderr
    assert not (repo.root / command[command.index("--out") + 1]).exists()


def test_the_head_must_be_fetched(artifacts, tmp_path):
    repo, command, _ = artifacts
    clone = Repo(tmp_path / "clone")
    subprocess.run(
        ["git", "clone", "-q", "--single-branch", "--branch", "main", f"file://{repo.root}", str(clone.root)],
        check=True,
    )
    frozen = runner(clone, *command)
    head = json.loads(Path(command[command.index("--review") + 1], "review.json").read_text())["head"]
    assert frozen.returncode == 2 and f"git fetch origin {head}" in frozen.stderr, frozen.stderr


def test_a_witness_from_outside_the_suite_is_refused(artifacts, tmp_path):
    repo, command, copy = artifacts
    witness = Path(command[command.index("--witness") + 1])
    stray = tmp_path / "witnesses" / witness.name
    stray.parent.mkdir()
    shutil.copy(witness, stray)
    command[command.index("--witness") + 1] = str(stray)
    frozen = runner(repo, *command)
    assert frozen.returncode == 2 and "the suite's own witnesses" in frozen.stderr, frozen.stderr


def test_without_the_sandbox_nothing_of_the_pull_request_runs(artifacts, tmp_path):
    # A maintainer's machine without namespaces (a laptop): the head's implementation,
    # rebuilt from the pull request, must not run there at all, as it would under `review`.
    repo, command, _ = artifacts
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}
    done = subprocess.run(
        [*without_namespaces(tmp_path), sys.executable, "-m", "witness_gate", *command],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "freeze --review runs the code under test only inside kernel namespaces" in done.stderr
    assert "sandbox: off" not in done.stderr  # refused before anything ran, not run and reported
    assert not (repo.root / command[command.index("--out") + 1]).exists()
