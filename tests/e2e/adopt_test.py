"""Adopting witness-gate from another repository, following docs/adopt.md to the letter,
and `pants test` with the gate, for real.

The two wheels are this test's runtime packages (`./pants package runner:dist rules:dist`);
they go into `wheels/` of a separate git repository, a small ledger library whose files
are the guide's file blocks. Its own `./pants` installs the plugin by version and the
runner from its resolve; one pantsd serves the module. Its `pants test` goes through a
pass (then served from cache), a regression, a flake frozen with the
guide's command (and that freeze expiring with nothing else changed: the gate's clock
moved past it by libfaketime, not waited for), oracle edits under awkward names (a
space, an umlaut, a rename, a line break) and the refusals;
then the guide's CLI path (the runner wheel in a fresh venv) gates the same repository
and reviews a pull request.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.flaky import flaky_property_source
from support.expiry import ShiftedClock, expires_at, still_valid
from support.git_repo import GitRepo, Run
from support.guide import BUG, FLAKY, IMPL, commands, guide_blocks
from support.processes import mentioning
from witness_gate import schemas

SOURCE = Path(__file__).resolve().parents[2]
ORACLE = "tests/properties/ledger_props.py"
ARTIFACTS = Path("dist/test/tests.properties")
FIXTURE = "tests/fixtures/accounts.json"


class Adopter(GitRepo):
    def __init__(self, root: Path, caches: Path) -> None:
        super().__init__(root)
        # Pants caches the plugin-resolving process by its requirement string, not the
        # wheel's bytes: a store of this run's own keeps a rebuilt 0.4.0 wheel from meeting
        # a stale resolve (downloads, keyed by content, are shared).
        self.env = {**os.environ, "PANTS_LOCAL_STORE_DIR": str(caches / "store")}

    def sh(self, command: str, timeout: int = 900) -> Run:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.root, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def reset(self, ref: str = "main") -> None:
        self.git("checkout", "-q", "-f", ref)
        self.git("clean", "-fdq", "-e", ".venv")
        shutil.rmtree(self.root / "dist", ignore_errors=True)

    def pants_test(self, *options: str) -> Run:
        return self.sh(" ".join(["./pants --no-dynamic-ui test --test-output=all", *options, "::"]))

    def artifact(self, name: str) -> dict:
        return json.loads((self.root / ARTIFACTS / name).read_text())


@pytest.fixture(scope="module")
def adopter(tmp_path_factory) -> Iterator[Adopter]:
    work = tmp_path_factory.mktemp("adopt")
    root = work / "ledger"
    (root / "wheels").mkdir(parents=True)
    wheels = sorted(Path.cwd().glob("*.whl"))  # this test's runtime packages, in its sandbox
    assert {w.name.split("-")[0] for w in wheels} == {"witness_gate", "witness_gate_pants"}, wheels
    for wheel in wheels:
        shutil.copy2(wheel, root / "wheels")
    shutil.copy2(SOURCE / "pants", root / "pants")  # the guide: copy the launcher
    for path, text in guide_blocks("file").items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / ".gitignore").write_text(
        "/.pants-bootstrap/\n/.pants.d/\n/.pids/\n/dist/\n/.venv/\n/.artifacts/\n__pycache__/\n"
    )
    adopter = Adopter(root, work / "caches")
    adopter.git("init", "-q", "-b", "main")
    [lock, _] = commands("pants")
    locked = adopter.sh(lock)
    assert locked.code == 0, locked.output
    adopter.commit("the ledger, gated")
    yield adopter
    adopter.stop_pantsd()


def assert_artifacts_valid(adopter: Adopter) -> None:
    for name, schema in [("fixture.lock", "lock"), ("classification.json", "report"), ("gate.json", "gate")]:
        schemas.validate(schema, adopter.artifact(name), name)
    for row in adopter.artifact("gate.json")["witnesses"]:
        schemas.validate("witness", json.loads((adopter.root / ARTIFACTS / row["file"]).read_text()), row["file"])


def test_pants_test_passes_a_sound_library_and_serves_an_unchanged_rerun_from_cache(adopter):
    adopter.reset()
    [_, test] = commands("pants")
    result = adopter.sh(test)
    assert result.code == 0, result.output
    assert adopter.artifact("gate.json")["verdict"] == "pass"
    assert_artifacts_valid(adopter)
    again = adopter.pants_test()
    assert again.code == 0 and ("(memoized)" in again.output or "(cached locally)" in again.output), again.output


def test_pants_test_blocks_a_regression(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    red = adopter.pants_test()
    assert (
        red.code == 1 and "regression: prop_balance_is_credits_minus_debits failed 60/60 replays" in red.output
    ), red.output
    assert "Block the patch" in red.output
    assert_artifacts_valid(adopter)


@pytest.fixture(scope="module")
def flaky(adopter) -> tuple[Run, str, str]:
    """A branch with a property that fails on some replays: its red run, and the freeze the
    command its flake line prints writes from that run's artifacts (its text and path)."""
    adopter.reset()
    adopter.git("checkout", "-q", "-B", "flaky")
    (adopter.root / "tests/properties/flaky_props.py").write_text(flaky_property_source())
    adopter.commit("a property that fails on some replays")
    red = adopter.pants_test()
    [row] = adopter.artifact("gate.json")["witnesses"]
    # The command the flake's line prints, run as the guide says: through the runner target.
    [printed] = re.findall(
        r"to freeze it, in a pull request of its own that the oracle's owners review: witness-gate (freeze .*)",
        red.output,
    )
    [guide] = commands("freeze")
    filled = (
        guide.replace("<file from the output>", Path(row["file"]).name)
        .replace("<failures>", str(row["failures"]))
        .replace("<runs>", str(row["runs"]))
    )
    assert shlex.split(filled) == [
        "./pants",
        "run",
        ":witness-gate",
        "--",
        *shlex.split(printed),
    ]  # the guide shows what is printed
    written = adopter.sh(f"./pants run :witness-gate -- {printed}")
    assert written.code == 0, written.output
    freeze = f".witness-gate/freezes/{Path(row['file']).name}"
    return red, (adopter.root / freeze).read_text(), freeze


def start_frozen(adopter: Adopter, flaky: tuple[Run, str, str]) -> str:
    """The flaky branch with its freeze in place; returns the freeze's path."""
    adopter.reset("flaky")
    _, text, freeze = flaky
    (adopter.root / freeze).parent.mkdir(parents=True, exist_ok=True)
    (adopter.root / freeze).write_text(text)
    return freeze


def test_a_flake_is_red_until_the_guides_freeze_command_freezes_it_and_red_again_once_it_expires(
    adopter, flaky, tmp_path
):
    red, _, _ = flaky
    assert red.code == 1, red.output
    assert re.search(r"flake: prop_sometimes failed ([1-9]|[12][0-9])/30 replays", red.output), red.output
    assert "it follows the global random state" in red.output and "No valid freeze covers this witness" in red.output
    # The same options on both runs under the freeze (libfaketime in the gate's environment,
    # reading its offset from a file): only the file moves the gate's clock past the guide's
    # 24-hour freeze, and the red run is run, not served from a cache.
    freeze = start_frozen(adopter, flaky)
    clock = ShiftedClock(tmp_path)
    shifted = "--test-extra-env-vars=" + shlex.quote(
        "+" + json.dumps([f"{name}={value}" for name, value in clock.env().items()])
    )
    expiry = expires_at(adopter.root / freeze)
    green = adopter.pants_test(shifted)
    assert green.code == 0 and f"frozen by {freeze}" in green.output, green.output
    assert_artifacts_valid(adopter)
    clock.past(expiry)
    expired = adopter.pants_test(shifted)
    assert expired.code != 0 and f"expired at {expiry:%Y-%m-%dT%H:%M:%SZ}" in expired.output, expired.output
    assert re.search(r"^✕ tests:properties failed in [0-9.]+s\.$", expired.output, re.M), expired.output
    assert still_valid(expiry), "the machine's clock passed the expiry: the red run proves nothing about the shift"


def test_a_fixture_changed_in_the_same_diff_as_a_freeze_is_red(adopter, flaky):
    start_frozen(adopter, flaky)
    adopter.edit(
        FIXTURE, '{"kind": "debit", "amount": 40}', '{"kind": "debit", "amount": 40}, {"kind": "credit", "amount": 1}'
    )
    run = adopter.pants_test()
    assert run.code != 0 and "one patch may not refresh the pin and the silence together" in run.output, run.output


def test_with_the_gate_disabled_any_failure_is_red_and_no_freeze_applies(adopter, flaky):
    start_frozen(adopter, flaky)
    run = adopter.pants_test("--no-witness-gate-enabled")
    assert run.code != 0 and "mode check_only" in run.output, run.output
    assert adopter.artifact("gate.json")["mode"] == "check_only"


def test_editing_the_build_declaration_with_the_implementation_is_a_mixed_edit(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    adopter.edit("tests/BUILD", 'fixture=":accounts",', 'fixture=":accounts",\n    replays=1,')
    run = adopter.pants_test()
    assert (
        run.code != 0 and "mixed_edit: prop_balance_is_credits_minus_debits failed 12/12 replays" in run.output
    ), run.output


def test_code_under_test_that_exits_green_cannot_pass_the_target(adopter):
    # Forged output and the other hostile endings are the runner's tests (hostile_test.py);
    # here, that the target follows the gate's verdict and not the process's status.
    adopter.reset()
    adopter.edit(
        IMPL,
        "    return sum(",
        '    import os\n    if any(e["amount"] > 5000 for e in entries):\n        os._exit(0)\n    return sum(',
    )
    run = adopter.pants_test()
    assert (
        run.code != 0 and "regression: prop_balance_is_credits_minus_debits" in run.output and "crashed" in run.output
    ), run.output
    assert adopter.artifact("gate.json")["verdict"] == "blocked"


def test_skipping_the_gate_is_refused_not_reported_green(adopter):
    adopter.reset()
    adopter.edit(IMPL, *BUG)
    run = adopter.pants_test("--witness-gate-skip")
    assert run.code != 0 and "the gate has no off switch" in run.output, run.output


def test_the_cli_path_gates_and_reviews_the_same_repository(adopter):
    adopter.reset()
    for command in commands("cli"):
        done = adopter.sh(command)
        assert done.code == 0, (command, done.output)
    assert adopter.sh(".venv/bin/witness-gate --version").output.startswith("witness-gate 0.4.0")

    adopter.git("checkout", "-q", "-B", "patch")
    adopter.edit(IMPL, *BUG)
    adopter.commit("a bug")
    gate = [adopter.sh(command) for command in commands("cli-gate")][-1]
    assert gate.code == 1 and "regression: prop_balance_is_credits_minus_debits" in gate.output, gate.output

    # The suite is declared once, in tests/BUILD: the base's own Pants tells review about it.
    *prepare, review = commands("review")
    for command in prepare:
        done = adopter.sh(command)
        assert done.code == 0, (command, done.output)
    graph = json.loads((adopter.root / ".artifacts/suites.json").read_text())
    schemas.validate("suites", graph, "suites.json")
    assert graph["commit"] == adopter.git("rev-parse", "main") and [s["name"] for s in graph["suites"]] == [
        "tests.properties"
    ]
    reviewed = adopter.sh(review)
    assert reviewed.code == 1, reviewed.output
    assert "suites: tests.properties (declared in the base's build graph" in reviewed.output
    assert "tests.properties: regression: prop_balance_is_credits_minus_debits" in reviewed.output
    without_graph = adopter.sh(review.replace("--suites .artifacts/suites.json ", ""))
    assert without_graph.code == 2 and "tests/BUILD declare gated targets" in without_graph.output, without_graph.output


def extra_properties(name: str) -> str:
    return (
        "from hypothesis import strategies as st\n\nimport witness_gate\nfrom ledger.balance import balance\n\n\n"
        '@witness_gate.property(payloads=st.lists(st.fixed_dictionaries({"kind": st.just("credit"), "amount": '
        "st.integers(0, 9)}), max_size=3))\n"
        f'def prop_{name}(payload: list) -> bool:\n    return balance(payload) == sum(e["amount"] for e in payload)\n'
    )


def oracle_edit(path: str):
    def edit(adopter: Adopter) -> None:
        (adopter.root / path).write_text((adopter.root / path).read_text() + "# reworded\n")

    return edit


# Pants' own git helper split committed names at whitespace, quoted non-ASCII ones and listed
# a rename under its new name only: each of these oracle edits passed as an implementation edit.
@pytest.mark.parametrize(
    "edit",
    [
        pytest.param(oracle_edit("tests/properties/my props.py"), id="space"),
        pytest.param(oracle_edit("tests/properties/örders.py"), id="umlaut"),
        pytest.param(
            lambda adopter: adopter.git("mv", "tests/properties/plain_props.py", "tests/properties/renamed ö props.py"),
            id="rename",
        ),
    ],
)
def test_an_oracle_edit_under_any_name_makes_a_mixed_edit(adopter, edit):
    adopter.reset()
    adopter.git("checkout", "-q", "-B", "names")
    modules = {
        "tests/properties/my props.py": "spaced",
        "tests/properties/örders.py": "umlaut",
        "tests/properties/plain_props.py": "plain",
    }
    for path, name in modules.items():
        (adopter.root / path).write_text(extra_properties(name))
    adopter.commit("property modules under awkward names")
    adopter.git("checkout", "-q", "-B", "edit")
    (adopter.root / IMPL).write_text((adopter.root / IMPL).read_text() + "# reworded\n")  # harmless
    edit(adopter)
    adopter.commit("a harmless implementation edit and an oracle edit")
    run = adopter.pants_test("--witness-gate-base=names")  # the branch's commits since `names`
    assert run.code == 1 and "mixed_edit: the diff changes implementation and oracle paths" in run.output, run.output


def test_a_changed_name_the_list_cannot_carry_fails_the_run(adopter):
    adopter.reset()
    (adopter.root / "tests/properties/notes\nof the oracle.txt").write_text("an oracle edit the list cannot carry\n")
    run = adopter.pants_test()  # base = "HEAD": the untracked file
    assert run.code != 0 and "the changed-file list cannot carry" in run.output, run.output
    assert r"'tests/properties/notes\nof the oracle.txt'" in run.output, run.output


def test_the_copied_ci_job_reviews_a_pull_request_verbatim_from_the_base(adopter):
    from xml.etree import ElementTree

    adopter.reset()
    job = adopter.root / ".ci/witness-gate-review.sh"
    job.parent.mkdir(exist_ok=True)
    shutil.copy2(SOURCE / "docs/ci/review-job.sh", job)
    adopter.commit("the pull-request job, copied from witness-gate's docs/ci")
    adopter.git("checkout", "-q", "-B", "ci-patch")
    adopter.edit(IMPL, *BUG)
    adopter.commit("a bug")
    from_head = adopter.sh(".ci/witness-gate-review.sh main ci-patch")
    assert from_head.code == 2 and "never from the head's" in from_head.output, from_head.output

    adopter.git("checkout", "-q", "main")
    already = mentioning(adopter.root)  # this module's own pantsd serves `pants test`
    # pip finds the runner wheel here as it would find the release on PyPI.
    run = adopter.sh(
        f"PIP_FIND_LINKS={shlex.quote(str(adopter.root / 'wheels'))} .ci/witness-gate-review.sh main ci-patch"
    )
    assert run.code == 1, run.output
    # The job stops what it started: no Pants daemon, no pip, no worker is left running.
    [work] = re.findall(r"declared in the base's build graph \((\S+)/suites\.json\)", run.output)
    left = {pid: command for pid, command in mentioning(adopter.root, work).items() if pid not in already}
    assert not left, f"the job left these running: {left}"
    assert re.search(r"^job: the base's Pants printed the suites in [0-9.]+ s$", run.output, re.M), run.output
    assert "tests.properties: regression: prop_balance_is_credits_minus_debits" in run.output
    artifacts = adopter.root / ".artifacts"
    schemas.validate("review", json.loads((artifacts / "review/review.json").read_text()), "review.json")
    junit = ElementTree.parse(artifacts / "review.xml").getroot()
    failed = [case.get("name") for case in junit.iter("testcase") if case.find("failure") is not None]
    assert any(name.startswith("prop_balance_is_credits_minus_debits[") for name in failed), failed
    [result, *_] = json.loads((artifacts / "review.sarif").read_text())["runs"][0]["results"]
    assert result["ruleId"] == "regression" and "Failing input:" in result["message"]["text"]
    summary = (artifacts / "review.md").read_text()
    assert summary.startswith("## witness-gate review: blocked (exit 1)") and "**regression**" in summary, summary

    # The review note, rendered from the suite's artifacts, agrees with them; a drafted one
    # that quotes another witness hash is refused, naming it.
    suite = ".artifacts/review/tests.properties"
    rendered = adopter.sh(f"./pants run :witness-gate -- note --out {suite} > note.md")
    assert rendered.code == 0, rendered.output
    note = (adopter.root / "note.md").read_text()
    [hash12] = {
        row["witness_hash"][:12] for row in json.loads((adopter.root / suite / "gate.json").read_text())["witnesses"]
    }
    assert hash12 in note, note
    agrees = adopter.sh(f"./pants run :witness-gate -- note --out {suite} --check note.md")
    assert agrees.code == 0 and "note: agrees with" in agrees.output, agrees.output
    forged = "0" * 12 if hash12 != "0" * 12 else "1" * 12
    (adopter.root / "note.md").write_text(note.replace(hash12, forged))
    refused = adopter.sh(f"./pants run :witness-gate -- note --out {suite} --check note.md")
    assert refused.code == 1 and "disagrees:" in refused.output and forged in refused.output, refused.output


def test_the_jobs_flake_is_frozen_from_the_base_and_merges_once_its_owners_approved(adopter, tmp_path):
    """The whole freeze flow through the copied job, under Pants: the flaky pull request is
    red; the steps its summary prints, run in the checkout of the base, write the freeze and
    its branch; the freeze's own pull request, an oracle review, is 0 once an owner approved
    its head; merged, the flaky pull request passes under the freeze."""
    adopter.reset()
    job = adopter.root / ".ci/witness-gate-review.sh"
    job.parent.mkdir(exist_ok=True)
    shutil.copy2(SOURCE / "docs/ci/review-job.sh", job)
    (adopter.root / ".github").mkdir(exist_ok=True)
    (adopter.root / ".github/CODEOWNERS").write_text(
        "/.witness-gate/freezes/ @org/spec-owners\n/tests/ @org/spec-owners\n"
    )
    adopter.commit("the pull-request job, and the oracle's owners")
    base = adopter.git("rev-parse", "HEAD").strip()
    adopter.git("checkout", "-q", "-B", "ci-flaky")
    adopter.edit(IMPL, *FLAKY)
    adopter.commit("an experiment in the balance")
    adopter.git("checkout", "-q", "main")
    wheels = f"PIP_FIND_LINKS={shlex.quote(str(adopter.root / 'wheels'))}"

    red = adopter.sh(f"{wheels} .ci/witness-gate-review.sh main ci-flaky")
    assert red.code == 1 and "tests.properties: flake: prop_balance_is_credits_minus_debits" in red.output, red.output
    summary = (adopter.root / ".artifacts/review.md").read_text()
    # One block of steps per flake (the change may make more than one property flaky).
    blocks = [block.split("```", 1)[0].splitlines() for block in summary.split("```bash\n")[1:]]
    steps = blocks[0]
    assert steps[0].startswith("git fetch origin ")  # this repository is its own origin: the head is here already
    assert (
        steps[1]
        == "./pants witness-gate-suites --output-file=.artifacts/suites.json ::  # the base's suites, printed by the "
        "base"
    )
    # The job's own runner, by its pins: the lock pins the job's Hypothesis, which this
    # repository's resolve (and so `./pants run :witness-gate`) need not hold.
    assert steps[5].startswith('"$HOME/.cache/witness-gate/job-runner/bin/witness-gate" freeze --review '), steps
    identity = (
        f"GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@ledger GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@ledger "
        f"PIP_FIND_LINKS={shlex.quote(str(adopter.root / 'wheels'))}"
    )
    for index, block in enumerate(blocks):
        for step in block[1:]:
            if index and step.startswith(("./pants witness-gate-suites", "git switch -c")):
                continue  # every freeze in the first one's pull request, with the base's suites printed once
            done = adopter.sh(f"export {identity}; {step}")
            assert done.code == 0, (step, done.output)
    branch = adopter.git("rev-parse", "--abbrev-ref", "HEAD").strip()
    assert branch.startswith("witness-gate-freeze-") and adopter.git("rev-parse", f"HEAD~{len(blocks)}").strip() == base

    adopter.git("checkout", "-q", "main")
    reviews, teams = tmp_path / "reviews.json", tmp_path / "teams.json"
    teams.write_text('{"@org/spec-owners": ["carol"]}')
    approvals = f"WITNESS_GATE_REVIEWS={reviews} WITNESS_GATE_TEAM_MEMBERS={teams} WITNESS_GATE_AUTHOR=dave"
    head = adopter.git("rev-parse", branch).strip()
    # The approvals step runs only on an oracle review (exit 3): its line shows the freeze's
    # pull request was one. That no owner's approval keeps it at 3 is the same step on any
    # base (the pytest-only and Bazel stories, tests/support/pull_requests.py).
    reviews.write_text(json.dumps([{"user": {"login": "carol"}, "state": "APPROVED", "commit_id": head}]))
    approved = adopter.sh(f"{wheels} {approvals} .ci/witness-gate-review.sh main {branch}")
    assert (
        approved.code == 0
        and f"approvals: {len(blocks)} of {len(blocks)} oracle paths approved by their owners: mergeable"
        in approved.output
    ), approved.output

    adopter.git("merge", "-q", "--ff-only", branch)
    adopter.git("rebase", "-q", "main", "ci-flaky")
    adopter.git("checkout", "-q", "main")
    green = adopter.sh(f"{wheels} .ci/witness-gate-review.sh main ci-flaky")
    assert green.code == 0 and "frozen by .witness-gate/freezes/" in green.output, green.output
    assert " until " in (adopter.root / ".artifacts/review.md").read_text()
