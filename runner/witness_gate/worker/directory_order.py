"""The order the code under test meets directories in, as the runner chose it (`seeds`).

`install` replaces `os.listdir` and `os.scandir` (and so what builds on them: `os.walk`,
`glob`, `pathlib.Path.iterdir` and `Path.glob`, `shutil`) before any user code, so a module
that took its own reference to them at import still lists through them. As listed
(`seeds.AS_LISTED`, the whole search and every ordinary replay of its witnesses) they hand
the file system's own listing through untouched: nothing changes and nothing is copied.
In a search leg's worker, and the replays of the witnesses it found (`start_in`), and in
the directory-order probe's forked children (`set_order`), they list a permutation of it
(`seeds.directory_positions`), the same for a directory that does not change, as a file
system's own order is; in a probe child, a directory the worker listed in its own order
before the fork (at import, in collection) and whose listing is the same since lists as it
did then (`_listed`).

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

# The order listings go in now, and the process's own (`start_in`, before any user code: as
# the file system lists, unless a search leg's or its witness's replays say otherwise).
_order = _own = seeds.AS_LISTED
_listdir, _scandir, _stat = os.listdir, os.scandir, os.stat
# In the directory-order probe's worker (`remember_listings`): the directories listed in the
# process's own order (by its import and collection, before any fork), by (device, inode),
# with what the file system listed then. A probe child lists one whose listing is the same
# now as it was then in the process's order: one process meets an unchanged directory in one
# order, as on any file system (a cache filled at import, found stale in a child that listed
# the directory another way, made a deterministic regression follow the order). The listing
# itself, not the directory's modification time: a lock file the call made and removed
# changed the time, not the listing, and the order then followed the probe's setting.
_listed: dict[tuple[int, int], list[Any]] | None = None


def remember_listings() -> None:
    """Keeps what the process lists in its own order, for its probe children (before any user code)."""
    global _listed
    _listed = {}


def start_in(order: int) -> None:
    """The process's own order, for every listing from now on (set before any user code)."""
    global _order, _own
    _order = _own = order


def set_order(order: int) -> None:
    """Lists every directory in `order` from now on (a probe's setting, in its forked child)."""
    global _order
    _order = order


def _in_order(entries: list[Any], order: int) -> list[Any]:
    listed = list(entries)
    for entry, position in zip(entries, seeds.directory_positions(order, len(entries))):
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


def _order_for(path: Any, listed: list[Any]) -> int:
    """The order a listing of `path` (the file system's `listed`) goes in now: the current
    one, but, in a probe child, the process's own for a directory it listed the same way
    before the fork (`_listed`)."""
    if _listed is None:
        return _order
    try:
        found = _stat("." if path is None else path)
    except (OSError, TypeError, ValueError):  # listed already: a path that moved since, say
        return _order
    key = (found.st_dev, found.st_ino)
    if _order == _own:
        _listed[key] = listed
        return _order
    return _own if _listed.get(key) == listed else _order


def _passed_through() -> bool:
    """Whether listings go as the file system lists, with nothing to remember: no copy, no stat."""
    return _order == seeds.AS_LISTED and _listed is None


@functools.wraps(_listdir)
def _ordered_listdir(path: Any = None) -> list[Any]:
    listed = _listdir(path)
    if _passed_through():
        return listed
    order = _order_for(path, listed)
    return listed if order == seeds.AS_LISTED else _in_order(listed, order)


@functools.wraps(_scandir)
def _ordered_scandir(path: Any = None) -> Any:
    if _passed_through():
        return _scandir(path)
    with _scandir(path) as found:  # read whole, then closed: the entries outlive it, as os.walk's do
        entries = list(found)
    order = _order_for(path, [entry.name for entry in entries])
    return _Listing(entries if order == seeds.AS_LISTED else _in_order(entries, order))


def install() -> None:
    """Puts the wrappers in `os`, as listed until `start_in` or `set_order`."""
    os.listdir, os.scandir = _ordered_listdir, _ordered_scandir
