"""CODEOWNERS for the oracle (spec: "Do not add a freeze command those owners cannot see").

Every path `review` treats as oracle (the suites' properties and fixtures, the oracle
prefixes, the freezes directory, the gate's controls and, for suites of a build graph,
the globs that add oracle files) gets a CODEOWNERS line, and
`uncovered` tells which of them an existing CODEOWNERS file leaves without an owner.
Pure functions of the configuration and the file's text.

Matching follows GitHub's CODEOWNERS rules, gitignore's for the patterns (the last
matching line wins; a line with no owner un-owns): a leading "/" anchors at the root, a
pattern with a "/" elsewhere is anchored too, one without matches a name at any depth; "*"
and "?" never cross a "/"; a leading "**/" matches in every directory, a middle "/**/"
zero or more directories, a trailing "/**" everything inside, a trailing "/*" a
directory's direct children only; a pattern that matches a directory owns what is in it,
and a trailing "/" matches directories only. The syntax
GitHub does not support ("!", "[ ]", a "\\" escape) is refused, never guessed at: GitHub
would skip that line, and a guess could hand a path to another line's owners.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

from witness_gate.config import GateConfig
from witness_gate.errors import WitnessGateError
from witness_gate.ownership import declares_gated_targets, is_build_file, oracle_entries


_PROBES = ("module.py", "freeze.json", "data", "nested/module.py")


def gated_build_files(root: Path) -> list[str]:
    """The build files under `root` that declare gated targets (hidden directories, such as
    .git, and symlinks are not walked)."""
    found = []
    for top, directories, files in os.walk(root):
        directories[:] = sorted(
            d for d in directories if not d.startswith(".") and not os.path.islink(os.path.join(top, d))
        )
        for name in sorted(files):
            path = Path(top, name)
            relative = path.relative_to(root).as_posix()
            if (
                is_build_file(relative)
                and not path.is_symlink()
                and path.is_file()
                and declares_gated_targets(relative, path.read_bytes())
            ):
                found.append(relative)
    return found


def required(config: GateConfig, gated_build_files: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(CODEOWNERS pattern, what it owns) for every oracle entry and every build file that
    declares gated targets (a control `review` judges as an oracle edit), in a stable order."""
    seen, found = set(), []
    entries = [
        *oracle_entries(config),
        *(
            (pattern, f"suite {suite.name} (a file its glob adds)")
            for suite in config.suites
            for pattern in suite.oracle_globs
        ),
        *((path, "gate controls (declares gated targets)") for path in sorted(gated_build_files)),
    ]
    for entry, who in entries:
        name = entry.rstrip("/")
        directory = entry.endswith("/") or (who.endswith("(properties)") and not name.endswith(".py"))
        pattern = f"/{name}/" if directory else f"/{name}"
        if pattern not in seen:
            seen.add(pattern)
            found.append((pattern, who))
    return found


def lines(config: GateConfig, owners: Sequence[str], gated_build_files: Sequence[str] = ()) -> list[str]:
    patterns = required(config, gated_build_files)
    width = max(len(pattern) for pattern, _ in patterns)
    return [f"{pattern.ljust(width)} {' '.join(owners)}  # witness-gate oracle: {who}" for pattern, who in patterns]


def _rules(text: str) -> list[tuple[str, list[str]]]:
    rules = []
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        pattern, *owners = line.split()
        rules.append((pattern, owners))
    return rules


def _matches(pattern: str, path: str) -> bool:
    """Whether a CODEOWNERS `pattern` owns the repository `path`."""
    return _regex(pattern).fullmatch(path) is not None


_UNSUPPORTED = re.compile(r"[!\[\]\\]")


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str]:
    if _UNSUPPORTED.search(pattern):
        raise WitnessGateError(
            f"CODEOWNERS pattern {pattern!r}: GitHub does not support '!', '[ ]' or '\\' escapes there "
            "(it skips such a line): write the path without them"
        )
    anchored = "/" in pattern.rstrip("/")  # at the beginning or in the middle
    directories_only = pattern.endswith("/")
    segments = pattern.strip("/").split("/")
    body = ""
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            body += ".*" if last else "(?:.*/)?"  # everything inside; zero or more directories
            continue
        body += "".join("[^/]*" if char == "*" else "[^/]" if char == "?" else re.escape(char) for char in segment)
        body += "" if last else "/"
    # A matched directory owns what is in it; but "dir/*" owns dir's direct children only (GitHub's rule).
    inside = "" if len(segments) > 1 and segments[-1] == "*" else "/.+" if directories_only else "(?:/.+)?"
    return re.compile(("" if anchored else "(?:.+/)?") + body + inside)


def owners_of(codeowners: str, path: str) -> list[str]:
    """Who a CODEOWNERS text says owns `path`: the owners of the last line that matches it
    (none when no line does, or that line names none)."""
    owners: list[str] = []
    for rule, rule_owners in _rules(codeowners):
        if _matches(rule, path):
            owners = rule_owners
    return owners


def uncovered(config: GateConfig, codeowners: str, gated_build_files: Sequence[str] = ()) -> list[str]:
    """The oracle patterns a CODEOWNERS text leaves without an owner; a directory counts as
    owned only when files of every kind the gate reads there are."""

    def owned(path: str) -> bool:
        return bool(owners_of(codeowners, path))

    missing = []
    for pattern, _ in required(config, gated_build_files):
        name = pattern.strip("/")
        probes = [f"{name}/{probe}" for probe in _PROBES] if pattern.endswith("/") else [name]
        if not all(owned(probe) for probe in probes):
            missing.append(pattern)
    return missing
