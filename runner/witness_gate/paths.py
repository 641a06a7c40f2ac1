"""Changed-file lists and the implementation / oracle split (spec section 5).

`split_paths` and `owner` are pure: they take the paths and the ownership lists as
plain values. Prefixes are local convention: a prefix ending in "/" owns a directory,
any other entry owns that exact path (or the directory of that name). When entries
nest (impl "src/", oracle "src/properties/"), the longest match owns the path.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from witness_gate.errors import WitnessGateError

Owner = Literal["impl", "oracle"]


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
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts[:-1]) or parts[-1] in (".", ".."):
        return "not normalized (empty, '.' or '..' segment)"
    return None


def check_repo_path(path: str, source: str) -> str:
    problem = repo_path_problem(path.rstrip("/") if path.endswith("/") and len(path) > 1 else path)
    if problem:
        raise WitnessGateError(f"{source}: {path!r}: {problem}")
    return path


def parse_changed_paths(data: bytes, source: str) -> list[str]:
    """One repository path per line, exactly as a diff names it; anything else is refused."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise WitnessGateError(f"{source}: not UTF-8 (byte {error.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for number, line in enumerate(lines, start=1):
        problem = repo_path_problem(line)
        if problem:
            raise WitnessGateError(f"{source}: line {number}: {problem}")
    return lines


def _matches(path: str, entry: str) -> bool:
    if entry.endswith("/"):
        return path.startswith(entry)
    return path == entry or path.startswith(entry + "/")


def owner(
    path: str,
    impl_prefixes: Sequence[str],
    oracle_prefixes: Sequence[str],
    generated_oracle: Sequence[str] = (),
) -> Owner | None:
    best: tuple[int, Owner] | None = None
    for side, entries in (("impl", impl_prefixes), ("oracle", oracle_prefixes), ("oracle", generated_oracle)):
        for entry in entries:
            if _matches(path, entry) and (best is None or len(entry) > best[0]):
                best = (len(entry), side)  # type: ignore[assignment]
    return None if best is None else best[1]


def split_paths(
    paths: Iterable[str],
    impl_prefixes: Sequence[str],
    oracle_prefixes: Sequence[str],
    generated_oracle: Sequence[str] = (),
) -> tuple[bool, bool]:
    """(implementation changed, oracle changed) for a changed-file list."""
    impl = oracle = False
    for path in paths:
        side = owner(path, impl_prefixes, oracle_prefixes, generated_oracle)
        if side == "impl":
            impl = True
        elif side == "oracle":
            oracle = True
        if impl and oracle:
            break
    return impl, oracle
