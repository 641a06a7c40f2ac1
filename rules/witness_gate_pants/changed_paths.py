"""The changed-file list a gated target is classified against: from a file
(`[witness-gate].changed_files`) or from git against `[witness-gate].base`.

Every path is a repository path the runner accepts, or the whole list is refused: a path
dropped here would never reach the runner, which would have blocked on it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from pants.base.build_environment import get_buildroot
from pants.base.glob_match_error_behavior import GlobMatchErrorBehavior
from pants.engine.fs import DigestContents, PathGlobs
from pants.engine.rules import Get, MultiGet, collect_rules, rule
from pants.util.logging import LogLevel

from witness_gate_pants import git
from witness_gate_pants.errors import WitnessGateError
from witness_gate_pants.git import GitRequest, GitResult, nul_separated_paths
from witness_gate_pants.subsystem import WitnessGate


@dataclass(frozen=True)
class ChangedPaths:
    paths: tuple[str, ...]


@dataclass(frozen=True)
class ChangedPathsRequest:
    pass


def parse_changed_list(text: str, source: str) -> tuple[str, ...]:
    """One repository path per line; blank lines and malformed paths are refused."""
    paths = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line == "" and number == text.count("\n") + 1:
            continue  # the final newline
        problem = repo_path_problem(line)
        if problem:
            raise WitnessGateError(f"{source}: line {number}: {problem}")
        paths.append(line)
    return tuple(sorted(set(paths)))


def repo_path_problem(path: str) -> str | None:
    # The runner's rule (witness_gate.paths.repo_path_problem), restated: this runs on Pants'
    # interpreter, which cannot import the runner, and a line it let through unowned would
    # be dropped before the runner could refuse it. Both run tests/paths/cases.json, which
    # holds them to the same verdicts and words.
    if not path:
        return "blank line: an empty path"
    if "\0" in path:
        return f"{path!r} contains NUL"
    if "\r" in path:
        return "carriage return (CRLF line endings?)"
    if "\\" in path:
        return f"{path!r} contains a backslash; use '/'"
    if path.startswith("/"):
        return f"{path!r} is an absolute path; give it relative to the repository root"
    if path != path.strip():
        return f"{path!r} has leading or trailing whitespace"
    if any(part in ("", ".", "..") for part in path.split("/")):
        return f"{path!r} is not normalized (empty, '.' or '..' segment)"
    return None


def unlistable_paths(paths: Iterable[str]) -> list[str]:
    """Changed paths the changed-file list (one path per line) cannot carry: the ones
    `witness-gate review` refuses to list too (it blocks on them). A name that is not UTF-8
    holds surrogates, which are not printable."""
    return [path for path in paths if repo_path_problem(path) is not None or not path.isprintable()]


# Paths relative to the build root, NUL-separated, no rename detection (a rename is both
# its sides), whatever the repository's config says about renames or relative output.
_DIFF = ("diff", "-z", "--name-only", "--no-renames", "--relative", "--no-ext-diff", "--no-textconv")


@rule(desc="Read the changed-file list", level=LogLevel.DEBUG)
async def read_changed_paths(_: ChangedPathsRequest, gate: WitnessGate) -> ChangedPaths:
    if gate.changed_files:
        contents = await Get(
            DigestContents,
            PathGlobs(
                [gate.changed_files],
                GlobMatchErrorBehavior.error,
                description_of_origin="the option `[witness-gate].changed_files`",
            ),
        )
        try:
            text = contents[0].content.decode("utf-8")
        except UnicodeDecodeError as error:
            raise WitnessGateError(f"{gate.changed_files}: not UTF-8 (byte {error.start})") from None
        return ChangedPaths(parse_changed_list(text, gate.changed_files))
    if not gate.base:
        raise WitnessGateError(
            "[witness-gate].enabled needs the changed-file list: set [witness-gate].base (a git ref such as main) "
            "or [witness-gate].changed_files (a file of paths from the review diff)"
        )
    if gate.base.startswith("-"):
        raise WitnessGateError(f"[witness-gate].base is {gate.base!r}: not a git ref")
    toplevel = await Get(GitResult, GitRequest(("rev-parse", "--show-toplevel")))
    if toplevel.exit_code != 0:
        raise WitnessGateError(
            f"[witness-gate].base is {gate.base!r}, but {get_buildroot()} is not in a git repository "
            f"({toplevel.message()})"
        )
    # What the branch changed since its merge base with the base, what is uncommitted
    # (staged or not) and what is untracked; as Pants' `--changed-since` reads it, but from
    # git's NUL-separated output, so no name is split at a space or quoted.
    committed, uncommitted, untracked = await MultiGet(
        Get(GitResult, GitRequest((*_DIFF, f"{gate.base}...HEAD", "--"))),
        Get(GitResult, GitRequest((*_DIFF, "HEAD", "--"))),
        Get(GitResult, GitRequest(("ls-files", "-z", "--others", "--exclude-standard"))),
    )
    for done in (committed, uncommitted, untracked):
        if done.exit_code != 0:  # git's own message (an unknown ref, say) is the useful part
            raise WitnessGateError(f"git could not diff against [witness-gate].base {gate.base!r}: {done.message()}")
    # ls-files names an untracked nested repository as "dir/"; Pants' helper listed "dir".
    paths = {path.rstrip("/") for path in nul_separated_paths(untracked.stdout)}
    paths.update(nul_separated_paths(committed.stdout), nul_separated_paths(uncommitted.stdout))
    refused = sorted(unlistable_paths(paths))
    if refused:
        shown = ", ".join(repr(path) for path in refused[:5]) + (
            f" and {len(refused) - 5} more" if len(refused) > 5 else ""
        )
        raise WitnessGateError(
            f"[witness-gate].base {gate.base!r}: {len(refused)} changed path(s) the changed-file list cannot carry "
            f"(a line break, a control character, surrounding whitespace, a backslash or bytes that are not UTF-8 "
            f"in the name): {shown}. The gate fails closed rather than drop them, as `witness-gate review` blocks "
            f"on them; rename them"
        )
    return ChangedPaths(tuple(sorted(paths)))


def rules():
    return [*collect_rules(), *git.rules()]
