"""Git in the build root's repository: the changed-file list and the suites goal ask it.

The repository is outside the sandbox, so a git process is never served from a cache."""

from __future__ import annotations

from dataclasses import dataclass

from pants.base.build_environment import get_buildroot
from pants.core.util_rules.system_binaries import SEARCH_PATHS, BinaryPathRequest, BinaryPaths, BinaryPathTest
from pants.engine.process import FallibleProcessResult, Process, ProcessCacheScope
from pants.engine.rules import Get, collect_rules, rule
from pants.util.logging import LogLevel


@dataclass(frozen=True)
class GitRequest:
    """One git command in the build root's repository, run afresh in every session."""

    args: tuple[str, ...]


@dataclass(frozen=True)
class GitResult:
    exit_code: int
    stdout: bytes
    stderr: bytes

    def message(self) -> str:
        lines = self.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[0] if lines else f"exit {self.exit_code}"


def nul_separated_paths(output: bytes) -> list[str]:
    """Git's `-z` output: one path per NUL, unquoted; bytes that are not UTF-8 are kept as
    surrogates (and refused by `unlistable_paths`), never replaced."""
    return [field.decode("utf-8", "surrogateescape") for field in output.split(b"\0") if field]


@rule(desc="Run git", level=LogLevel.DEBUG)
async def run_git(request: GitRequest) -> GitResult:
    search = BinaryPathRequest(binary_name="git", search_path=SEARCH_PATHS, test=BinaryPathTest(["--version"]))
    found = await Get(BinaryPaths, BinaryPathRequest, search)
    git = found.first_path_or_raise(search, rationale="read the changed-file list for [witness-gate].base")
    # The repository is outside the sandbox, so the process must never be served from a
    # cache: PER_SESSION runs it once per `pants` run, like Pants' own uncacheable git reads.
    # Its environment is empty: no GIT_DIR or GIT_INDEX_FILE of the caller redirects it.
    result = await Get(
        FallibleProcessResult,
        Process(
            (git.path, "-C", get_buildroot(), *request.args),
            description=f"git {' '.join(request.args[:2])}",
            level=LogLevel.DEBUG,
            cache_scope=ProcessCacheScope.PER_SESSION,
        ),
    )
    return GitResult(result.exit_code, result.stdout, result.stderr)


def rules():
    return collect_rules()
