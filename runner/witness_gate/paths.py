"""Repository paths: what one is, changed-file lists, and build-system globs (pure).

Which side owns a path is `ownership`'s.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from witness_gate.errors import WitnessGateError


def repo_path_problem(path: str) -> str | None:
    """Why `path` is not a normalized repository-relative POSIX path, or None."""
    if not path:
        return "empty path"
    if "\x00" in path:
        return "contains NUL"
    if "\r" in path:
        return "contains a carriage return (CRLF line endings?)"
    if "\\" in path:
        return "contains a backslash; use '/'"
    if path.startswith("/"):
        return "absolute path; give it relative to the repository root"
    if path != path.strip():
        return "leading or trailing whitespace"
    if any(part in ("", ".", "..") for part in path.split("/")):  # a trailing "/" too: a path names a file
        return "not normalized (empty, '.' or '..' segment)"
    return None


def listable(path: str) -> bool:
    """Whether the gate's changed-file list can carry `path` (one per line, UTF-8): a name
    with a line break, a backslash or unencodable bytes is judged by its owner only."""
    return repo_path_problem(path) is None and path.isprintable() and _utf8(path)


def gate_list(paths: Iterable[str]) -> bytes:
    """The changed-file list `review` hands each suite's gate: every path it can carry, one
    per line. Its sha256 is the report's `diff.paths_sha256`."""
    return "".join(f"{path}\n" for path in paths if listable(path)).encode("utf-8")


def _utf8(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_repo_path(path: str, source: str) -> str:
    problem = repo_path_problem(path.rstrip("/") if path.endswith("/") and len(path) > 1 else path)
    if problem:
        raise WitnessGateError(f"{source}: {path!r}: {problem}")
    return path


# Every character `str.isspace` accepts but the line break (and CR, refused apart), as an
# explicit class: far faster to scan for than the negated category [^\S\n].
_WHITESPACE_BUT_NEWLINE = re.compile(
    "[\u0009\u000b\u000c\u001c\u001d\u001e\u001f\u0020\u0085\u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000]"
)
_DOT_SEGMENT = re.compile(r"[/\n]\.\.?[/\n]")


def _maybe_refused(body: str) -> bool:
    """Whether some line might be refused by `repo_path_problem` (never a false "no").

    Whole-list scans run at C speed; the per-line check runs only when one of them fires,
    so a clean list of a million paths costs a few passes over its text."""
    framed = "\n" + body + "\n"
    if any(token in framed for token in ("\x00", "\r", "\\", "//", "\n\n", "\n/", "/\n")):
        return True
    # Only a segment that starts with "." can be "." or "..": look closer if one does.
    if ("/." in framed or "\n." in framed) and _DOT_SEGMENT.search(framed) is not None:
        return True
    if any(space in framed for space in (" ", "\t")):  # the common ones first, as plain scans
        return True
    return _WHITESPACE_BUT_NEWLINE.search(body) is not None


def parse_changed_paths(data: bytes, source: str) -> list[str]:
    """One repository path per line, exactly as a diff names it; anything else is refused."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WitnessGateError(f"{source}: not UTF-8 (byte {error.start})") from None
    body = text[:-1] if text.endswith("\n") else text
    lines = body.split("\n") if body else []
    if body and not _maybe_refused(body):
        return lines
    for number, line in enumerate(lines, start=1):
        problem = repo_path_problem(line)
        if problem:
            raise WitnessGateError(f"{source}: line {number}: {problem}")
    return lines


def glob_matches(path: str, pattern: str) -> bool:
    """Whether a repository path matches a build-system glob: `*` and `?` within one
    segment, `[...]` a character class, `**` any number of whole segments (Pants' syntax)."""
    return _glob_regex(pattern).fullmatch(path) is not None


@functools.lru_cache(maxsize=4096)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
            continue
        parts.append(_segment_regex(segment) + ("" if last else "/"))
    return re.compile("".join(parts), re.S)


def _segment_regex(segment: str) -> str:
    out, at = [], 0
    while at < len(segment):
        char = segment[at]
        close = segment.find("]", at + 2) if char == "[" else -1
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif close != -1:
            body = segment[at + 1 : close]
            negated, members = body[0] in "!^", body.replace("\\", "\\\\")
            out.append("[" + ("^" + members[1:] if negated else members) + "]")
            at = close
        else:
            out.append(re.escape(char))
        at += 1
    return "".join(out)


# Compiled code the interpreter loads instead of, or beside, a module's source: a patch
# that carries it would be tested on bytes the diff does not show.
_COMPILED_SUFFIXES = (".pyc", ".pyo", ".so", ".pyd")


def compiled_code(path: str) -> bool:
    """Whether a path is bytecode or an extension module (pure)."""
    name = path.rsplit("/", 1)[-1]
    return "__pycache__" in path.split("/") or name.endswith(_COMPILED_SUFFIXES) or ".so." in name


_START_UP_FILES = ("sitecustomize.py", "usercustomize.py")


def start_up_code(path: str) -> bool:
    """Whether a path is code an interpreter runs at start-up from its import path (pure)."""
    name = path.rsplit("/", 1)[-1]
    return name in _START_UP_FILES or name.endswith(".pth")
