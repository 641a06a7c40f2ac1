"""Git objects, never a working tree: what `review` reads of the base and the head.

Everything here asks git for committed objects (`rev-parse`, `merge-tree`, `diff-tree`,
`ls-tree`, `cat-file`), so nothing an agent leaves in the working tree, the index
(`--skip-worktree`, `.git/info/exclude`) or the environment changes what is reviewed.
Nor does the repository's own local state: refs are resolved only as full names
(`refs/heads/`, `refs/remotes/`, `refs/tags/`, never a file in `.git/` or an ambiguous
short name), grafts and replace refs are off, and trees are written from raw blobs, so no
attribute (`export-ignore`, a smudge filter, an encoding) from `.gitattributes` or
`.git/info/attributes` touches them. Paths travel NUL-separated and undecoded by git, so
any byte in a name arrives as it is committed.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from witness_gate.errors import WitnessGateError

# A ref that names "wherever the checkout is now" cannot be a review base.
_MOVING = re.compile(r"^(@|HEAD|[A-Z_]*_HEAD)($|[~^@:])|^@")
# Git reads these from the environment; none may redirect what a review reads.
_GIT_ENV_DROPPED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_GLOBAL",
    "GIT_CONFIG_SYSTEM",
    "GIT_CONFIG_COUNT",
    "GIT_NAMESPACE",
    "GIT_REPLACE_REF_BASE",
)


@dataclass(frozen=True)
class Change:
    """One path the diff names, with its mode and blob on each side (None where absent)."""

    path: str
    base_mode: str | None
    head_mode: str | None


def _run(repo: Path, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED and not k.startswith("GIT_CONFIG_")}
    env["GIT_NO_REPLACE_OBJECTS"] = "1"  # `git replace` could swap the objects a review reads
    env["GIT_GRAFT_FILE"] = os.devnull  # `.git/info/grafts` could rewrite the history it walks
    return subprocess.run(
        ["git", "-c", "core.quotePath=false", "-C", str(repo), *args],
        input=stdin,
        capture_output=True,
        env=env,
        check=False,
    )


def _failure(args: tuple[str, ...], done: subprocess.CompletedProcess[bytes]) -> WitnessGateError:
    message = done.stderr.decode("utf-8", "replace").strip().splitlines()
    return WitnessGateError(f"git {' '.join(args[:2])}: {message[0] if message else f'exit {done.returncode}'}")


def _git(repo: Path, *args: str, stdin: bytes | None = None) -> bytes:
    done = _run(repo, *args, stdin=stdin)
    if done.returncode != 0:
        raise _failure(args, done)
    return done.stdout


_OBJECT_ID = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")
_REF_NAMESPACES = ("refs/heads/", "refs/remotes/", "refs/tags/")


def commit(repo: Path, ref: str, role: str) -> str:
    """The commit `ref` names. The head is the patch, whatever names it. The base decides,
    so it must be a full object id, a full ref (`refs/...`), or a short name that exactly
    one of `refs/heads/`, `refs/remotes/` and `refs/tags/` holds: a moving ref (HEAD and
    the like) is refused, and so is an ambiguous name (a pushed tag called `origin/main`
    must not stand in for the branch, nor a file in `.git/` for a ref)."""
    if ref.startswith("-") or not ref:
        raise WitnessGateError(f"--{role} {ref!r} is not a ref")
    if role != "base" or _OBJECT_ID.match(ref) or ref.startswith("refs/"):
        full = ref
    elif _MOVING.search(ref):
        raise WitnessGateError(
            f"--base {ref!r} moves with the checkout under review; name the branch or commit it was reviewed against"
        )
    else:
        found = [
            namespace + ref
            for namespace in _REF_NAMESPACES
            if _run(repo, "show-ref", "--verify", "--quiet", namespace + ref).returncode == 0
        ]
        if len(found) != 1:
            why = f"names {' and '.join(found)}" if found else "is no branch, remote branch or tag"
            raise WitnessGateError(
                f"--{role} {ref!r} {why}: give a full ref (e.g. refs/remotes/origin/main) or a commit id"
            )
        [full] = found
    return _git(repo, "rev-parse", "--verify", "--end-of-options", f"{full}^{{commit}}").decode().strip()


def merge_base(repo: Path, base: str, head: str) -> str | None:
    """Where `head` forked from `base`, or None when they share no history (git says so
    with exit status 1 and nothing on standard output)."""
    done = _run(repo, "merge-base", base, head)
    if done.returncode == 1 and not done.stdout.strip():
        return None
    if done.returncode != 0:
        raise _failure(("merge-base", base), done)
    return done.stdout.decode().strip()


@dataclass(frozen=True)
class Merge:
    """What landing the head on the base would give: the tree, or the conflicting paths."""

    tree: str | None
    conflicts: tuple[str, ...]


def merge(repo: Path, base: str, head: str) -> Merge:
    """The head merged into the base, as git would (`merge-tree --write-tree`, git 2.38+):
    a head forked before the base moved is reviewed as what it would land as, not as its
    own files over the base's."""
    args = ("merge-tree", "--write-tree", "-z", "--name-only", "--no-messages", base, head)
    done = _run(repo, *args)
    if done.returncode not in (0, 1) or not done.stdout:
        if b"--write-tree" in done.stderr or b"usage:" in done.stderr:
            raise WitnessGateError("git merge-tree --write-tree is missing: review needs git 2.38 or newer")
        raise _failure(args, done)
    fields = done.stdout.split(b"\0")
    tree = fields[0].decode()
    if done.returncode == 0:
        return Merge(tree, ())
    conflicted = tuple(sorted({field.decode("utf-8", "surrogateescape") for field in fields[1:] if field}))
    return Merge(None, conflicted)


def changes(repo: Path, old: str, new: str) -> list[Change]:
    """Every path that differs between two trees (or commits): no rename detection, so a
    rename is both its sides; deletions and symlinks are paths like any other."""
    out = _git(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", old, new)
    fields = out.split(b"\0")
    found = []
    for index in range(0, len(fields) - 1, 2):
        meta, raw_path = fields[index], fields[index + 1]
        old_mode, new_mode = meta.lstrip(b":").split(b" ")[:2]
        path = raw_path.decode("utf-8", "surrogateescape")
        found.append(
            Change(
                path,
                None if old_mode == b"000000" else old_mode.decode(),
                None if new_mode == b"000000" else new_mode.decode(),
            )
        )
    return found


def _entry(repo: Path, revision: str, path: str) -> tuple[bytes, bytes, str] | None:
    """(mode, kind, object id) of `path` in `revision`, or None when it has no such path."""
    listing = _git(repo, "ls-tree", "-z", revision, "--", path)
    if not listing:
        return None
    mode, kind, obj = listing.split(b"\t", 1)[0].split(b" ")
    return mode, kind, obj.decode()


def read_file(repo: Path, revision: str, path: str) -> bytes | None:
    """A committed file's bytes, or None when the revision has no such file."""
    entry = _entry(repo, revision, path)
    if entry is None or entry[1] != b"blob":
        return None
    return _git(repo, "cat-file", "blob", entry[2])


def _tree_entries(repo: Path, revision: str) -> list[tuple[bytes, bytes, bytes, str]]:
    """(mode, kind, object id, path) of every entry of a tree, recursively."""
    listing = _git(repo, "ls-tree", "-r", "-z", "--full-tree", revision)
    entries = []
    for record in listing.split(b"\0"):
        if record:
            meta, raw_path = record.split(b"\t", 1)
            mode, kind, obj = meta.split(b" ")
            entries.append((mode, kind, obj, raw_path.decode("utf-8", "surrogateescape")))
    return entries


def files_where(repo: Path, revision: str, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """The committed files of a revision whose path `wanted` accepts, with their bytes."""
    files = [(obj, path) for _, kind, obj, path in _tree_entries(repo, revision) if kind == b"blob" and wanted(path)]
    return dict(zip([path for _, path in files], _blobs(repo, [obj for obj, _ in files])))


def _blobs(repo: Path, object_ids: list[bytes]) -> list[bytes]:
    """The raw bytes of many blobs in one `cat-file --batch` (no filter, no attribute)."""
    out = _git(repo, "cat-file", "--batch", stdin=b"".join(obj + b"\n" for obj in object_ids))
    contents, at = [], 0
    for _ in object_ids:
        header_end = out.index(b"\n", at)
        size = int(out[at:header_end].rsplit(b" ", 1)[1])
        contents.append(out[header_end + 1 : header_end + 1 + size])
        at = header_end + 1 + size + 1
    return contents


def export(repo: Path, revision: str, target: Path, wanted: Callable[[str], bool] | None = None) -> None:
    """The revision's tree (or the paths of it `wanted` accepts), written blob by blob
    under `target` (a submodule is an empty directory; a symlink that leaves the tree is
    refused)."""
    target.mkdir(parents=True, exist_ok=True)
    target.chmod(_DIRECTORY_MODE)
    entries = [entry for entry in _tree_entries(repo, revision) if wanted is None or wanted(entry[3])]
    files = [entry for entry in entries if entry[1] == b"blob"]
    for (mode, _, _, path), data in zip(files, _blobs(repo, [obj for _, _, obj, _ in files])):
        _write(target, path, mode, data)
    for _, kind, _, path in entries:
        if kind == b"commit":
            _inside(target, path)
            _directories(target, f"{path}/")


def write_blob(repo: Path, revision: str, path: str, tree: Path) -> None:
    """Puts `path` as committed in `revision` into `tree` (a symlink stays a symlink, and
    one that leaves the tree is refused)."""
    entry = _entry(repo, revision, path)
    if entry is None or entry[1] != b"blob":
        raise WitnessGateError(f"{path}: not a file in {revision[:12]}")
    mode, _, obj = entry
    _write(tree, path, mode, _git(repo, "cat-file", "blob", obj))


def _inside(tree: Path, path: str) -> Path:
    """`tree / path`, refused unless every directory on the way is a real one inside the
    tree: a write must never pass through a symlink (a base's link into the oracle, say)."""
    parts = path.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise WitnessGateError(f"{path!r}: not a plain path inside the tree")
    directory = tree
    for part in parts[:-1]:
        directory = directory / part
        if directory.is_symlink():
            raise WitnessGateError(
                f"{path}: its directory {directory.relative_to(tree)} is a symlink; a path through a link is refused"
            )
        if directory.exists() and not directory.is_dir():
            raise WitnessGateError(f"{path}: {directory.relative_to(tree)} is a file in the tree")
    return tree / path


# Exported trees get these modes whatever the umask: a root runner's workers read them as
# another user (`launcher`), and nothing in them is secret (they are the repository's blobs).
_DIRECTORY_MODE, _FILE_MODE, _EXECUTABLE_MODE = 0o755, 0o644, 0o755


def _directories(tree: Path, path: str) -> None:
    """Makes the directories of `path` inside `tree` that are missing, each with `_DIRECTORY_MODE`."""
    directory = tree
    for part in path.split("/")[:-1]:
        directory = directory / part
        if not directory.is_dir():
            directory.mkdir()
            directory.chmod(_DIRECTORY_MODE)


def _write(tree: Path, path: str, mode: bytes, data: bytes) -> None:
    target = _inside(tree, path)
    _directories(tree, path)
    if target.is_symlink() or target.exists():
        target.unlink()
    if mode == b"120000":
        os.symlink(data.decode("utf-8", "surrogateescape"), target)
        try:
            inside = target.resolve().is_relative_to(tree.resolve())
        except (RuntimeError, OSError):  # Python 3.11 raises RuntimeError on a loop
            target.unlink()
            raise WitnessGateError(f"{path}: a committed symlink loop is refused") from None
        if not inside:
            target.unlink()
            raise WitnessGateError(f"{path}: a committed symlink that leaves the tree is refused")
    else:
        target.write_bytes(data)
        target.chmod(_EXECUTABLE_MODE if mode == b"100755" else _FILE_MODE)
