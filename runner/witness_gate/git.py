"""Git objects, never a working tree: what `review` reads of the base and the head.

Everything here asks git for committed objects (`rev-parse`, `merge-base`, `diff-tree`
between two commits, `archive`, `cat-file`), so nothing an agent leaves in the working
tree, the index (`--skip-worktree`, `.git/info/exclude`) or the environment changes what
is reviewed. Paths travel NUL-separated and undecoded by git, so any byte in a name
arrives as it is committed.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from witness_gate.errors import WitnessGateError

# A ref that names "wherever the checkout is now" cannot be a review base.
_MOVING = re.compile(r"^(@|HEAD|[A-Z_]*_HEAD)($|[~^@:])|^@")
# Git reads these from the environment; none may redirect what a review reads.
_GIT_ENV_DROPPED = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                    "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_NAMESPACE", "GIT_REPLACE_REF_BASE")


@dataclass(frozen=True)
class Change:
    """One path the diff names, with its mode and blob on each side (None where absent)."""

    path: str
    base_mode: str | None
    head_mode: str | None


def _git(repo: Path, *args: str, data: bool = False) -> bytes:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_DROPPED and not k.startswith("GIT_CONFIG_")}
    env["GIT_NO_REPLACE_OBJECTS"] = "1"  # `git replace` could swap the objects a review reads
    done = subprocess.run(["git", "-c", "core.quotePath=false", "-C", str(repo), *args], capture_output=True, env=env, check=False)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise WitnessGateError(f"git {' '.join(args[:2])}: {message[0] if message else f'exit {done.returncode}'}")
    return done.stdout


def commit(repo: Path, ref: str, role: str) -> str:
    """The commit `ref` names; a moving ref (HEAD and the like) is refused as a base."""
    if role == "base" and _MOVING.search(ref):
        raise WitnessGateError(f"--base {ref!r} moves with the checkout under review; name the branch or commit it was reviewed against")
    if ref.startswith("-"):
        raise WitnessGateError(f"--{role} {ref!r} is not a ref")
    return _git(repo, "rev-parse", "--verify", "--end-of-options", f"{ref}^{{commit}}").decode().strip()


def merge_base(repo: Path, base: str, head: str) -> str:
    return _git(repo, "merge-base", base, head).decode().strip()


def changes(repo: Path, old: str, new: str) -> list[Change]:
    """Every path that differs between two commits: no rename detection, so a rename is
    both its sides; deletions and symlinks are paths like any other."""
    out = _git(repo, "diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", old, new)
    fields = out.split(b"\0")
    found = []
    for index in range(0, len(fields) - 1, 2):
        meta, raw_path = fields[index], fields[index + 1]
        old_mode, new_mode = meta.lstrip(b":").split(b" ")[:2]
        path = raw_path.decode("utf-8", "surrogateescape")
        found.append(Change(path, None if old_mode == b"000000" else old_mode.decode(), None if new_mode == b"000000" else new_mode.decode()))
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


def export(repo: Path, revision: str, target: Path) -> None:
    """The revision's tree, written under `target` (symlinks that leave it are refused)."""
    archive = _git(repo, "archive", "--format=tar", revision)
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        try:
            tar.extractall(target, filter="data")
        except tarfile.FilterError as error:
            raise WitnessGateError(f"{revision[:12]}: {error}: a committed link that leaves the tree is refused") from None


def write_blob(repo: Path, revision: str, path: str, tree: Path) -> None:
    """Puts `path` as committed in `revision` into `tree` (a symlink stays a symlink, and
    one that leaves the tree is refused)."""
    entry = _entry(repo, revision, path)
    if entry is None or entry[1] != b"blob":
        raise WitnessGateError(f"{path}: not a file in {revision[:12]}")
    mode, _, obj = entry
    data = _git(repo, "cat-file", "blob", obj)
    target = tree / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or target.exists():
        target.unlink()
    if mode == b"120000":
        os.symlink(data.decode("utf-8", "surrogateescape"), target)
        if not target.resolve().is_relative_to(tree.resolve()):
            target.unlink()
            raise WitnessGateError(f"{path}: a committed symlink that leaves the tree is refused")
    else:
        target.write_bytes(data)
        if mode == b"100755":
            target.chmod(0o755)
