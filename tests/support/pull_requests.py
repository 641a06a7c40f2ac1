"""Pull requests of a repository that copied witness-gate's job, as GitHub would run its
workflow on them.

The job (docs/ci/review-job.sh) and the workflow (docs/ci/github-workflow.yml) are copied
verbatim to where docs/adopt.md section 5 puts them. A bare repository stands in for
GitHub: the base branch is its `main`, each pull request's head its `refs/pull/N/head`. A
run checks out the base in the repository (as `actions/checkout` does), then runs the
workflow's own steps that fetch the head and run the job, their `${{ ... }}` expressions
given the values GitHub gives them; the reviews the workflow lists with `gh api` are the
test's, written where that step writes them. What a user then does (the freeze steps the
summary prints) runs in the same checkout of the base.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from support.expiry import ShiftedClock, expires_at, still_valid
from support.git_repo import Run

SOURCE = Path(__file__).resolve().parents[2]
WORKFLOW = ".github/workflows/witness-gate.yml"
JOB = ".ci/witness-gate-review.sh"
# Who commits and opens the pull requests: the author, whose own approval never counts.
IDENTITY = {name: "dave" for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME")} | {
    name: "dave@example.com" for name in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")
}
AUTHOR = "dave"


def copy_job(root: Path) -> None:
    """The workflow and the job, byte for byte, where the guide puts them."""
    for source, target in (("docs/ci/github-workflow.yml", WORKFLOW), ("docs/ci/review-job.sh", JOB)):
        (root / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(SOURCE / source, root / target)


def job_steps(workflow: str) -> list[tuple[str, dict[str, str]]]:
    """The workflow's steps that fetch the pull request's head and run the job on it: each
    one-line `run:` that names the fetched head, with its `env:`."""
    steps = []
    for match in re.finditer(r"^      - run: (.*)\n((?:        (?:env:|  [ #A-Z].*)\n)*)", workflow, re.M):
        run, block = match.groups()
        if "refs/remotes/pull/head" in run:
            steps.append((run, dict(re.findall(r"^          ([A-Z_]+): (.*)$", block, re.M))))
    assert [run.split()[0] for run, _ in steps] == ["git", JOB], steps
    return steps


def evaluate(text: str, context: dict[str, str]) -> str:
    """`text` with each `${{ name }}` replaced by GitHub's value for it (a name the test
    does not know fails: the workflow asks for something this stand-in does not give)."""
    return re.sub(r"\$\{\{ *([\w.]+) *\}\}", lambda m: context[m.group(1)], text)


class GitHub:
    """The pull requests of the repository at `root`, hosted in `work/hosting.git`."""

    def __init__(self, root: Path, work: Path, env: dict[str, str], index: str) -> None:
        self.root = root
        self.work = work
        self.env = {**env, **IDENTITY, "PIP_CONFIG_FILE": os.devnull}  # the index named is the only source
        self.index = index
        self.numbers: dict[str, int] = {}
        hosting = work / "hosting.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(hosting)], check=True)
        self.git("remote", "add", "origin", str(hosting))
        self.git("push", "-q", "origin", "main")

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=self.root, env=self.env, capture_output=True, text=True, check=True, timeout=120
        )
        return done.stdout.strip()

    def sh(self, command: str, env: dict[str, str] | None = None) -> Run:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", command],
            cwd=self.root,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=900,
        )
        return Run(done.returncode, done.stdout + done.stderr)

    def open(self, branch: str) -> str:
        """Opens the pull request of `branch` (or updates it, pushed again); its head."""
        number = self.numbers.setdefault(branch, len(self.numbers) + 1)
        self.git("push", "-q", "-f", "origin", f"{branch}:refs/pull/{number}/head")
        return self.git("rev-parse", branch)

    def merge(self, branch: str) -> None:
        """Merges the pull request of `branch` (a fast-forward of the base branch)."""
        self.git("push", "-q", "origin", f"{branch}:main")

    def checkout_base(self) -> str:
        """The repository as `actions/checkout` leaves it: the base branch's last commit."""
        self.git("fetch", "-q", "origin", "main")
        self.git("checkout", "-q", "-f", "-B", "main", "origin/main")
        return self.git("rev-parse", "HEAD")

    def review(
        self,
        branch: str,
        approvals: tuple[str, ...] = (),
        teams: dict[str, list[str]] | None = None,
    ) -> Run:
        """The workflow's run on the pull request of `branch`, whose reviews are approvals
        of its head by `approvals` (logins), with the members of `teams`."""
        number = self.numbers[branch]
        [head, _] = self.git("ls-remote", "origin", f"refs/pull/{number}/head").split()
        shutil.rmtree(self.root / ".artifacts", ignore_errors=True)  # a fresh workspace has no earlier run's
        temp = self.work / f"runner-temp-{number}"
        temp.mkdir(exist_ok=True)
        # What the workflow's `gh api --paginate --slurp` step writes: a list of pages.
        reviews = [{"user": {"login": login}, "state": "APPROVED", "commit_id": head} for login in approvals]
        (temp / "reviews.json").write_text(json.dumps([reviews]))
        (temp / "teams.json").write_text(json.dumps(teams or {}))
        context = {
            "github.sha": self.checkout_base(),
            "github.event.pull_request.number": str(number),
            "github.event.pull_request.user.login": AUTHOR,
            "vars.WITNESS_GATE_INDEX_URL": self.index,
            "runner.temp": str(temp),
        }
        outputs = []
        for run, step_env in job_steps((self.root / WORKFLOW).read_text()):
            values = {name: evaluate(value, context) for name, value in step_env.items()}
            done = self.sh(evaluate(run, context), values)
            outputs.append(done.output)
            if done.code != 0:
                break
        return Run(done.code, "".join(outputs))

    def summary(self) -> str:
        return (self.root / ".artifacts/review.md").read_text()

    def freeze(self, env: dict[str, str]) -> tuple[str, list[str]]:
        """Runs the freeze steps the last summary prints, as a user would in this checkout
        of the base with the job's artifacts in .artifacts/ and `env` (the user's HOME and
        index): every flake's freeze in the first one's branch, each step run once (the
        head's fetch, the base's suites, the job's runner). Returns the branch and the
        freezes it adds."""
        blocks = [block.split("```", 1)[0].splitlines() for block in self.summary().split("```bash\n")[1:]]
        assert blocks and all(block[0].startswith("git fetch origin ") for block in blocks), self.summary()
        ran: set[str] = set()
        for number, block in enumerate(blocks):
            for step in block:
                if step in ran or (number and step.startswith("git switch -c ")):
                    continue
                done = self.sh(step, env)
                assert done.code == 0, (step, done.output)
                ran.add(step)
        branch = self.git("rev-parse", "--abbrev-ref", "HEAD")
        assert branch.startswith("witness-gate-freeze-"), branch
        frozen = self.git("diff", "--name-only", "origin/main", branch).splitlines()
        assert len(frozen) == len(blocks), (frozen, blocks)
        return branch, frozen

    def freeze_merged_until_it_expires(
        self, freeze: str, frozen: list[str], teams: dict[str, list[str]], clock: ShiftedClock
    ) -> None:
        """The rest of a flake's story once its freeze pull request is open: exit 3 with only
        its author's approval, then `freeze_approved_and_merged`; with nothing changed but the
        clock moved past the freeze's expiry, the flaky pull request is red again."""
        waiting = self.review(freeze, approvals=(AUTHOR,), teams=teams)
        assert (
            waiting.code == 3 and f"unapproved: {frozen[0]}: no owner approved head" in waiting.output
        ), waiting.output
        self.freeze_approved_and_merged(freeze, frozen, teams)
        expiry = expires_at(self.root / frozen[0])
        clock.past(expiry)
        expired = self.review("flaky")
        assert expired.code == 1 and f"expired at {expiry:%Y-%m-%dT%H:%M:%SZ}" in expired.output, expired.output
        assert still_valid(expiry), "the machine's clock passed the expiry: the red run proves nothing about the shift"

    def freeze_approved_and_merged(self, freeze: str, frozen: list[str], teams: dict[str, list[str]]) -> None:
        """The freeze pull request is 0 once an owner approved its head; merged, the flaky pull
        request (branch `flaky`) passes under the freeze, the summary showing its expiry."""
        approved = self.review(freeze, approvals=("carol",), teams=teams)
        assert approved.code == 0 and f"approved: {frozen[0]} by @carol" in approved.output, approved.output
        assert f"{len(frozen)} of {len(frozen)} oracle paths approved by their owners: mergeable" in approved.output
        assert "### Oracle approvals" in self.summary()
        self.merge(freeze)

        self.git("rebase", "-q", "origin/main", "flaky")
        self.open("flaky")
        green = self.review("flaky")
        assert green.code == 0 and f"frozen by {frozen[0]}" in green.output, green.output
        expiry = expires_at(self.root / frozen[0])
        assert f"frozen by {frozen[0]} until {expiry:%Y-%m-%dT%H:%M:%SZ}" in self.summary()
