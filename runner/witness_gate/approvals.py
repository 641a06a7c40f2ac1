"""When an oracle review may merge: once the owners of every edited oracle path approved.

`review` answers a pull request that edits the oracle (and nothing else) with exit 3: it
judges, it cannot approve. This is the other half, for a required check: the review's
verdict, the base's CODEOWNERS (the lines `codeowners` prints), the pull request's reviews
and the members of each owning team go in; whether it may merge comes out, with a line per
oracle path. Pure: values in, a decision out; the CLI reads the files.

What counts, and what never does:
- Only the verdicts `pass` (nothing to approve) and `oracle_review` can end mergeable; a
  blocked or incomplete review stays so whoever approves it.
- A reviewer's latest approving or blocking review counts (GitHub's own rule: a comment
  changes nothing, a dismissal takes the reviewer's word back); an approval only when it
  approved the reviewed head commit (a push after it needs a new one), a request for
  changes on whatever commit it was made (a push does not withdraw it).
- The pull request's author never approves their own change, and a path no CODEOWNERS line
  owns (or that a line un-owns) cannot be approved at all.
- An owner's request for changes on a path holds it back whoever else approved it.
There is no switch that overrides a decision.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from witness_gate.canonical import parse_json
from witness_gate.codeowners import owners_of
from witness_gate.errors import WitnessGateError

_COUNTED = ("APPROVED", "CHANGES_REQUESTED", "DISMISSED")


@dataclass(frozen=True)
class Review:
    """One review of the pull request, as GitHub's API lists it."""

    login: str
    state: str  # APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
    commit: str  # the commit it reviewed


@dataclass(frozen=True)
class Decision:
    mergeable: bool
    lines: list[str]


def standing(reviews: Sequence[Review], head: str, author: str) -> dict[str, str]:
    """Each reviewer's word on the head commit: the state of their latest counted review,
    reviews of other commits and the author's own left out (pure)."""
    latest: dict[str, str] = {}
    for review in reviews:  # in the order GitHub lists them: oldest first
        if review.state in _COUNTED and review.login.lower() != author.lower():
            # A request for changes stands, whatever commit it was on, until the reviewer's later word.
            latest[review.login.lower()] = (
                review.state if review.commit == head or review.state == "CHANGES_REQUESTED" else "STALE"
            )
    return latest


def _is_owner(login: str, owners: Sequence[str], members: Mapping[str, Sequence[str]]) -> bool:
    for owner in owners:
        if owner.lower() == f"@{login}":
            return True
        if "/" in owner and login in {member.lower() for member in members.get(owner.lower(), ())}:
            return True
    return False


def decide(
    verdict: str,
    oracle_paths: Sequence[str],
    codeowners: str,
    reviews: Sequence[Review],
    members: Mapping[str, Sequence[str]],
    head: str,
    author: str,
) -> Decision:
    """Whether a reviewed pull request may merge (pure). `members`: each owning team
    (`@org/team`, lower case) with its members' logins."""
    members = {team.lower(): list(logins) for team, logins in members.items()}
    if verdict == "pass":
        return Decision(True, ["approvals: the review passed; no oracle path needs its owners"])
    if verdict != "oracle_review":
        return Decision(False, [f"approvals: the review is {verdict}: no approval makes it mergeable"])
    if not oracle_paths:
        return Decision(False, ["approvals: an oracle review that names no oracle path: nothing can approve it"])
    words = standing(reviews, head, author)
    lines, mergeable = [], True
    for path in oracle_paths:
        owners = owners_of(codeowners, path)
        if not owners:
            mergeable = False
            lines.append(
                f"unapproved: {path}: no CODEOWNERS line of the base owns it, so no one can approve it; add one "
                "(witness-gate codeowners)"
            )
            continue
        said = {login: state for login, state in words.items() if _is_owner(login, owners, members)}
        blocking = sorted(login for login, state in said.items() if state == "CHANGES_REQUESTED")
        approving = sorted(login for login, state in said.items() if state == "APPROVED")
        if blocking:
            mergeable = False
            requesters = ", ".join("@" + login for login in blocking)
            lines.append(f"unapproved: {path}: {requesters} requested changes (owners: {' '.join(owners)})")
        elif not approving:
            mergeable = False
            stale = sorted(login for login, state in said.items() if state == "STALE")
            why = f"; {', '.join('@' + login for login in stale)} approved an earlier commit" if stale else ""
            lines.append(f"unapproved: {path}: no owner approved head {head[:12]} (owners: {' '.join(owners)}){why}")
        else:
            lines.append(f"approved: {path} by {', '.join('@' + login for login in approving)}")
    done = sum(1 for line in lines if line.startswith("approved: "))
    lines.append(
        f"approvals: {done} of {len(oracle_paths)} oracle paths approved by their owners: "
        + ("mergeable" if mergeable else "not mergeable yet")
    )
    return Decision(mergeable, lines)


def parse_reviews(data: bytes, source: str) -> list[Review]:
    """GitHub's list of a pull request's reviews, oldest first: one page (a JSON array of
    reviews) or every page (`gh api --paginate --slurp`: an array of such arrays)."""
    listed = parse_json(data, source)
    if not isinstance(listed, list):
        raise WitnessGateError(f"{source}: not GitHub's list of reviews (a JSON array)")
    pages = listed if listed and all(isinstance(page, list) for page in listed) else [listed]
    found = []
    for index, item in enumerate(entry for page in pages for entry in page):
        user = item.get("user") if isinstance(item, dict) else None
        login = user.get("login") if isinstance(user, dict) else None
        state, commit = (item.get("state"), item.get("commit_id")) if isinstance(item, dict) else (None, None)
        if not (isinstance(login, str) and isinstance(state, str) and isinstance(commit, str)):
            raise WitnessGateError(
                f"{source}: review {index}: needs user.login, state and commit_id, as GitHub lists them"
            )
        found.append(Review(login, state, commit))
    return found


def parse_members(data: bytes, source: str) -> dict[str, list[str]]:
    """{"@org/team": ["login", ...]}: who each owning team holds."""
    members = parse_json(data, source)
    if not isinstance(members, dict) or not all(
        isinstance(team, str)
        and team.startswith("@")
        and "/" in team
        and isinstance(logins, list)
        and all(isinstance(login, str) for login in logins)
        for team, logins in members.items()
    ):
        raise WitnessGateError(
            f'{source}: not a JSON object of teams and their members ({{"@org/team": ["login", ...]}})'
        )
    return {team.lower(): [login.lower() for login in logins] for team, logins in members.items()}
