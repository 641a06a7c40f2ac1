"""The pull-request job of docs/ci/review-job.sh, copied as docs/adopt.md says into the
guide's repository (support/adopter.py, its own Pants daemon for this module): a pull
request reviewed from a checkout of the base, and a flake's whole freeze flow through the
job, under Pants. adopt_test.py is `pants test` and the CLI path in the same repository."""

from __future__ import annotations

import json
import re
import shlex
import shutil
from collections.abc import Iterator

import pytest

from support.adopter import SOURCE, Adopter, adopted
from support.guide import BUG, FLAKY, IMPL
from support.processes import mentioning
from witness_gate import schemas


@pytest.fixture(scope="module")
def adopter(tmp_path_factory) -> Iterator[Adopter]:
    yield from adopted(tmp_path_factory.mktemp("adopt"))


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
