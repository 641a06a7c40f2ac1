"""An oracle review merges once the owners of every edited oracle path approved its head,
and in no other way: each case below is a way around that, and each must fail."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from support.review_repo import ORACLE, Repo, buggy, review_repo
from witness_gate.approvals import Review, decide, parse_members, parse_reviews
from witness_gate.errors import WitnessGateError

HEAD, OLD = "a" * 40, "b" * 40
CODEOWNERS = """\
*                             @org/everyone
/tests/properties/            @org/spec-owners
/.witness-gate/freezes/       @carol
/tests/properties/generated/
"""
TEAMS = {"@org/spec-owners": ["alice", "bob"], "@org/everyone": ["mallory", "alice", "bob", "carol", "dave"]}
PROPS = "tests/properties/orders_props.py"
FREEZE = ".witness-gate/freezes/flake.json"


def mergeable(paths, reviews, verdict="oracle_review", author="dave", codeowners=CODEOWNERS, teams=TEAMS) -> bool:
    return decide(verdict, paths, codeowners, [Review(*r) for r in reviews], teams, HEAD, author).mergeable


def test_an_owner_on_the_team_approving_the_head_makes_it_mergeable():
    assert mergeable([PROPS], [("alice", "APPROVED", HEAD)])
    assert mergeable([FREEZE], [("carol", "APPROVED", HEAD)])  # an owner named as a user


@pytest.mark.parametrize(
    "paths, reviews, why",
    [
        ([PROPS], [], "no review at all"),
        ([PROPS], [("mallory", "APPROVED", HEAD)], "an approval by someone who owns other paths only"),
        ([PROPS], [("alice", "APPROVED", OLD)], "an approval of an earlier commit"),
        ([PROPS], [("dave", "APPROVED", HEAD)], "the author's own approval (dave is no owner anyway)"),
        ([PROPS, FREEZE], [("alice", "APPROVED", HEAD)], "one path approved, the other not"),
        ([PROPS], [("alice", "APPROVED", HEAD), ("bob", "CHANGES_REQUESTED", HEAD)], "another owner asked for changes"),
        (
            [PROPS],
            [("bob", "CHANGES_REQUESTED", OLD), ("alice", "APPROVED", HEAD)],
            "an owner's request for changes, then a push",
        ),
        ([PROPS], [("alice", "APPROVED", HEAD), ("alice", "DISMISSED", HEAD)], "the approval was dismissed"),
        (["tests/properties/generated/strategies.py"], [("alice", "APPROVED", HEAD)], "a path a later line un-owns"),
    ],
)
def test_what_does_not_make_an_oracle_review_mergeable(paths, reviews, why):
    assert not mergeable(paths, reviews), why


def test_the_author_cannot_approve_even_as_an_owner():
    assert not mergeable([PROPS], [("alice", "APPROVED", HEAD)], author="alice")
    assert not mergeable([PROPS], [("Alice", "APPROVED", HEAD)], author="alice")  # logins are case-insensitive


def test_a_comment_after_an_approval_keeps_it_and_a_new_approval_after_changes_counts():
    assert mergeable([PROPS], [("alice", "APPROVED", HEAD), ("alice", "COMMENTED", HEAD)])
    assert mergeable([PROPS], [("alice", "CHANGES_REQUESTED", HEAD), ("alice", "APPROVED", HEAD)])


@pytest.mark.parametrize("verdict", ["blocked", "incomplete"])
def test_no_approval_makes_a_blocked_or_incomplete_review_mergeable(verdict):
    assert not mergeable([PROPS], [("alice", "APPROVED", HEAD)], verdict=verdict)


def test_a_passing_review_needs_no_approval_and_an_oracle_review_without_paths_is_refused():
    assert mergeable([], [], verdict="pass")
    assert not mergeable([], [("alice", "APPROVED", HEAD)])


def test_inputs_as_github_gives_them_and_nothing_else():
    page = [{"user": {"login": "alice"}, "state": "APPROVED", "commit_id": HEAD, "body": "][ fine"}]
    assert parse_reviews(json.dumps(page).encode(), "r") == [Review("alice", "APPROVED", HEAD)]
    assert parse_reviews(json.dumps([page, page]).encode(), "r") == [Review("alice", "APPROVED", HEAD)] * 2  # --slurp
    with pytest.raises(WitnessGateError, match="needs user.login"):
        parse_reviews(json.dumps([{"user": None, "state": "APPROVED", "commit_id": HEAD}]).encode(), "r")
    assert parse_members(b'{"@Org/Spec-Owners": ["Alice"]}', "t") == {"@org/spec-owners": ["alice"]}
    with pytest.raises(WitnessGateError):
        parse_members(b'{"spec-owners": ["alice"]}', "t")


# --- the command, on a real review -------------------------------------------------------


def runner(repo: Repo, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(os.path.abspath(p) for p in sys.path)}
    return subprocess.run(
        [sys.executable, "-m", "witness_gate", *args],
        cwd=repo.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture
def oracle_review(tmp_path) -> tuple[Repo, dict]:
    """A base whose CODEOWNERS is what `codeowners` prints, and a pull request that rewords
    the property (an oracle review, exit 3) and also makes its author an owner in its own
    CODEOWNERS."""
    repo = review_repo(tmp_path)
    repo.git("checkout", "-q", "main")
    printed = runner(repo, "codeowners", "--owner", "@org/spec-owners")
    assert printed.returncode == 0, printed.stderr
    (repo.root / ".github").mkdir()
    (repo.root / ".github/CODEOWNERS").write_text(printed.stdout)
    repo.commit("base: CODEOWNERS from witness-gate codeowners")
    repo.branch("patch")
    repo.edit(ORACLE, '"""The oracle:', '"""The oracle (reworded):')
    (repo.root / ".github/CODEOWNERS").write_text("* @dave\n")
    repo.commit("reword the oracle, and own everything")
    result = repo.review()
    assert result.returncode == 3, result.stdout + result.stderr
    return repo, repo.review_json()


def approvals(repo: Repo, reviews: list, tmp_path: Path) -> subprocess.CompletedProcess:
    (tmp_path / "reviews.json").write_text(json.dumps(reviews))
    (tmp_path / "teams.json").write_text(json.dumps(TEAMS))
    return runner(
        repo,
        "approvals",
        "--review",
        str(repo.root.parent / "out"),
        "--reviews",
        str(tmp_path / "reviews.json"),
        "--team-members",
        str(tmp_path / "teams.json"),
        "--author",
        "dave",
    )


def test_the_owners_approval_of_the_head_turns_exit_3_mergeable(oracle_review, tmp_path):
    repo, record = oracle_review
    assert set(record["oracle_paths"]) == {ORACLE, ".github/CODEOWNERS"}
    waiting = approvals(repo, [{"user": {"login": "dave"}, "state": "APPROVED", "commit_id": record["head"]}], tmp_path)
    # The head's CODEOWNERS names dave everywhere; the base's decides, and the author never approves.
    assert waiting.returncode == 1, waiting.stdout + waiting.stderr
    assert f"unapproved: {ORACLE}: no owner approved head" in waiting.stdout
    stale = approvals(repo, [{"user": {"login": "alice"}, "state": "APPROVED", "commit_id": record["base"]}], tmp_path)
    assert stale.returncode == 1 and "@alice approved an earlier commit" in stale.stdout, stale.stdout
    approved = approvals(
        repo, [{"user": {"login": "alice"}, "state": "APPROVED", "commit_id": record["head"]}], tmp_path
    )
    assert approved.returncode == 0, approved.stdout + approved.stderr
    assert approved.stdout.splitlines()[-1] == "approvals: 2 of 2 oracle paths approved by their owners: mergeable"


def test_a_blocked_review_stays_blocked_whoever_approves(tmp_path):
    repo = review_repo(tmp_path)
    buggy(repo)
    repo.commit("bug")
    assert repo.review().returncode == 1
    head = repo.review_json()["head"]
    result = approvals(repo, [{"user": {"login": "alice"}, "state": "APPROVED", "commit_id": head}], tmp_path)
    assert (
        result.returncode == 1 and "the review is blocked: no approval makes it mergeable" in result.stdout
    ), result.stdout
