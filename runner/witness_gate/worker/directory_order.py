"""The order the code under test meets directories in, as the runner chose it (`seeds`).

`install` replaces `os.listdir` and `os.scandir` (and so what builds on them: `os.walk`,
`glob`, `pathlib.Path.iterdir` and `Path.glob`, `shutil`) before any user code, so a module
that took its own reference to them at import still lists through them. As listed
(`seeds.AS_LISTED`, the search and every ordinary replay) they hand the file system's own
listing through untouched: nothing changes and nothing is copied. In the directory-order
probe's forked children (`set_order`) they list a permutation of it (`seeds.directory_positions`),
the same for a directory that does not change, as a file system's own order is; a directory
the worker listed as the file system lists before the fork (at import, in collection) and
that has not changed since lists as it did then (`_listed`).

A wrapper rather than an LD_PRELOAD shim of readdir: it needs no compiler on the machine
that runs the gate, and a shim's order would have to be a function of what readdir returns
one entry at a time. What the code under test can reach through it (its globals, the
originals in `__wrapped__`) is the order's number and `seeds`, which derives from the lock,
nothing the runner keeps from it (no channel key, no request). Not covered: `posix.listdir`
called directly, and programs the code under test runs.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from witness_gate import seeds

_order = seeds.AS_LISTED
_listdir, _scandir, _stat = os.listdir, os.scandir, os.stat
# The directories listed as the file system lists them (by the worker's import and collection,
# before any fork), by (device, inode), with their modification time then. A probe child lists
# one that has not changed since as it was listed then: one process meets an unchanged directory
# in one order, as on any file system (a cache filled at import, found stale in a child that
# listed the directory another way, made a deterministic regression follow the order).
_listed: dict[tuple[int, int], int] = {}


def set_order(order: int) -> None:
    """Lists every directory in `order` from now on (a probe's setting, in its forked child)."""
    global _order
    _order = order


def _in_order(entries: list[Any]) -> list[Any]:
    listed = list(entries)
    for entry, position in zip(entries, seeds.directory_positions(_order, len(entries))):
        listed[position] = entry
    return listed


class _Listing:
    """What `os.scandir` returns: an iterator of entries that is also its own context manager."""

    def __init__(self, entries: list[os.DirEntry[Any]]) -> None:
        self._entries: Iterator[os.DirEntry[Any]] = iter(entries)

    def __iter__(self) -> _Listing:
        return self

    def __next__(self) -> os.DirEntry[Any]:
        return next(self._entries)

    def __enter__(self) -> _Listing:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._entries = iter(())


def _as_listed(path: Any) -> bool:
    """Whether a listing of `path` now goes as the file system lists: outside a probe's order,
    and, in one, for a directory listed so before and unchanged since (`_listed`)."""
    try:
        found = _stat("." if path is None else path)
    except (OSError, TypeError, ValueError):  # the listing itself raises what it must
        return _order == seeds.AS_LISTED
    key = (found.st_dev, found.st_ino)
    if _order == seeds.AS_LISTED:
        _listed[key] = found.st_mtime_ns
        return True
    return _listed.get(key) == found.st_mtime_ns


@functools.wraps(_listdir)
def _ordered_listdir(path: Any = None) -> list[Any]:
    if _as_listed(path):
        return _listdir(path)
    return _in_order(_listdir(path))


@functools.wraps(_scandir)
def _ordered_scandir(path: Any = None) -> Any:
    if _as_listed(path):
        return _scandir(path)
    with _scandir(path) as entries:  # read whole, then closed: the entries outlive it, as os.walk's do
        return _Listing(_in_order(list(entries)))


def install() -> None:
    """Puts the wrappers in `os`, as listed until `set_order`."""
    os.listdir, os.scandir = _ordered_listdir, _ordered_scandir
