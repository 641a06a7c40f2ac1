"""Artifact I/O: schema-checked reads, and atomic writes (temp file, fsync, rename).

A reader never sees a torn artifact and a refusal never leaves one behind: a record
is validated before its first byte is written, and only a complete file is renamed
into place. Only a regular file is ever replaced: an output path that names a
symlink, a directory, a FIFO, a device or a socket is refused, never renamed over or
unlinked (`--out /dev/null` run as root must not take the machine's /dev/null).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from witness_gate import canonical, schemas
from witness_gate.errors import WitnessGateError

_MAX_ARTIFACT_BYTES = 64 << 20
# The one key of the record that takes a stale artifact's place (see `mark_stale`).
STALE_KEY = "stale"
_KINDS = (
    (stat.S_ISREG, "regular file"),
    (stat.S_ISDIR, "directory"),
    (stat.S_ISLNK, "symlink"),
    (stat.S_ISFIFO, "FIFO"),
    (stat.S_ISCHR, "character device"),
    (stat.S_ISBLK, "block device"),
    (stat.S_ISSOCK, "socket"),
)


def file_kind(mode: int) -> str:
    """What an lstat mode is, in the words of a refusal."""
    return next((name for test, name in _KINDS if test(mode)), "special file")


def _kind_at(path: Path, what: str) -> str | None:
    """The kind of what `path` itself names (a symlink is not followed), or None if nothing."""
    try:
        return file_kind(os.lstat(path).st_mode)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise WitnessGateError(f"{path}: cannot inspect {what}: {error.strerror}") from None


def check_output_file(path: Path, what: str) -> None:
    """Refuses an output file path that exists and is not a regular file."""
    kind = _kind_at(path, what)
    if kind not in (None, "regular file"):
        raise WitnessGateError(f"{path}: {what} is a {kind}, not a regular file; remove it or give another path")


def check_output_dir(path: Path, what: str) -> None:
    """Refuses an output directory path that exists and is not a directory (a symlink to one included)."""
    kind = _kind_at(path, what)
    if kind not in (None, "directory"):
        raise WitnessGateError(f"{path}: {what} is a {kind}, not a directory; remove it or give another path")


def check_regular_file(path: Path, what: str) -> os.stat_result:
    """Refuses a missing path, a symlink, a directory or a device with one line."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        raise WitnessGateError(f"{path}: {what} not found") from None
    except OSError as error:
        raise WitnessGateError(f"{path}: cannot read {what}: {error.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        raise WitnessGateError(f"{path}: {what} is a symlink; give the file itself")
    if not stat.S_ISREG(info.st_mode):
        raise WitnessGateError(f"{path}: {what} is not a regular file")
    return info


def read_regular_file(path: Path, what: str, limit: int | None = None) -> bytes:
    info = check_regular_file(path, what)
    if limit is not None and info.st_size > limit:
        raise WitnessGateError(f"{path}: {what} is {info.st_size} bytes, over the {limit}-byte limit")
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as error:
        raise WitnessGateError(f"{path}: cannot read {what}: {error.strerror}") from None


def load_artifact(path: Path, schema_name: str) -> dict[str, Any]:
    data = read_regular_file(path, schema_name, limit=_MAX_ARTIFACT_BYTES)
    record = canonical.parse_json(data, str(path))
    if isinstance(record, dict) and list(record) == [STALE_KEY]:
        raise WitnessGateError(f"{path}: no {schema_name} here: {record[STALE_KEY]}")
    schemas.validate(schema_name, record, str(path))
    return cast(dict[str, Any], record)  # the schema's every artifact is an object


def save_artifact(path: Path, schema_name: str, record: dict[str, Any]) -> None:
    schemas.validate(schema_name, record, f"{path} (about to be written)")
    write_atomic(path, canonical.artifact_bytes(record))


def write_atomic(path: Path, data: bytes) -> None:
    directory = path.parent
    # A random name, created exclusively with mode 0666: the kernel applies the umask
    # (and any default ACL) as to any file the user writes, where mkstemp's 0600 would
    # hide the artifacts from whoever the umask lets read them.
    temp = directory / f".{path.name}.{secrets.token_hex(8)}.tmp"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        raise WitnessGateError(f"{path}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        move_into_place(temp, path)
    except BaseException as error:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError):
            raise WitnessGateError(f"{path}: cannot write: {error.strerror}") from None
        raise
    _fsync_directory(directory)


def move_into_place(source: Path, target: Path) -> None:
    """`os.replace`, but only over a regular file or nothing: a rename takes a device node's
    place as readily as a report's. Checked right before the rename, whatever was checked
    before the run."""
    check_output_file(target, "output")
    os.replace(source, target)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def mark_stale(path: Path, why: str) -> None:
    """Replaces a regular file at `path` with a record that says why it no longer stands,
    so that an artifact an earlier run left cannot vouch for this one. Nothing is deleted:
    unlinking by path would remove whatever the path names by then. Nothing at `path`
    stays nothing; anything but a regular file is refused (by `write_atomic`)."""
    if _kind_at(path, "output") is not None:
        write_atomic(path, canonical.artifact_bytes({STALE_KEY: why}))


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _check_replaceable(out: Path, marker: str, what: str) -> None:
    check_output_dir(out, what)
    if out.is_dir() and any(out.iterdir()) and not (out / marker).is_file():
        raise WitnessGateError(
            f"{out}: {what} holds files that no earlier run wrote (no {marker}); give a new or empty directory"
        )


@contextlib.contextmanager
def staged_directory(out: Path, marker: str, what: str) -> Iterator[Path]:
    """A fresh directory beside `out` for one run's outputs, renamed into place when the
    block completes: a reader sees a whole run or the previous one, never a mix, and a
    refusal leaves `out` as it was. An existing `out` must be a directory that is empty or
    holds `marker` (a previous run's output, swapped out in one step and then removed);
    anything else is refused before the run begins."""
    _check_replaceable(out, marker, what)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = out.parent / f".{out.name}.staging-{secrets.token_hex(8)}"
        os.mkdir(stage, 0o777)  # the umask applies, as to every output
    except OSError as error:
        raise WitnessGateError(f"{out}: cannot write {what}: {error.strerror}") from None
    try:
        yield stage
        try:
            _check_replaceable(out, marker, what)
            if out.exists():
                _exchange(stage, out)  # `stage` now holds the previous run's output
            else:
                os.rename(stage, out)
        except OSError as error:
            raise WitnessGateError(f"{out}: cannot write {what}: {error.strerror}") from None
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _exchange(first: Path, second: Path) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE) != 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error), str(second))
