"""Artifact I/O: schema-checked reads, and atomic writes (temp file, fsync, rename).

A reader never sees a torn artifact and a refusal never leaves one behind: a record
is validated before its first byte is written, and only a complete file is renamed
into place.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from witness_gate import canonical, schemas
from witness_gate.errors import WitnessGateError

_MAX_ARTIFACT_BYTES = 64 << 20


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
    schemas.validate(schema_name, record, str(path))
    return record


def save_artifact(path: Path, schema_name: str, record: dict[str, Any]) -> None:
    schemas.validate(schema_name, record, f"{path} (about to be written)")
    write_atomic(path, canonical.artifact_bytes(record))


def write_atomic(path: Path, data: bytes) -> None:
    directory = path.parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, temp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise WitnessGateError(f"{path}: cannot write: {error.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException as error:
        try:
            os.unlink(temp_name)
        except FileNotFoundError:
            pass
        if isinstance(error, OSError):
            raise WitnessGateError(f"{path}: cannot write: {error.strerror}") from None
        raise
    _fsync_directory(directory)


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_if_present(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


_AT_FDCWD, _RENAME_EXCHANGE = -100, 2


def _check_replaceable(out: Path, marker: str, what: str) -> None:
    try:
        info = os.lstat(out)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        raise WitnessGateError(f"{out}: {what} exists and is not a directory; give a new or empty directory")
    if any(out.iterdir()) and not (out / marker).is_file():
        raise WitnessGateError(f"{out}: {what} holds files that no earlier run wrote (no {marker}); give a new or empty directory")


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
        stage = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.staging-"))
    except OSError as error:
        raise WitnessGateError(f"{out}: cannot write {what}: {error.strerror}") from None
    try:
        yield stage
        try:
            os.chmod(stage, 0o777 & ~_umask())
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


def _umask() -> int:
    # Read, not set: os.umask() would change it for every thread while it looks.
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    raise RuntimeError("/proc/self/status has no Umask line (Linux 4.7 or newer is needed)")
