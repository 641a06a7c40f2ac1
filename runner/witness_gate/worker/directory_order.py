"""The order the code under test meets directories in, as the runner chose it (`seeds`).

`install` replaces `os.listdir` and `os.scandir` (and so what builds on them: `os.walk`,
`glob`, `pathlib.Path.iterdir` and `Path.glob`, `shutil`) before any user code, so a module
that took its own reference to them at import still lists through them. As listed
(`seeds.AS_LISTED`, the whole search and every ordinary replay of its witnesses) they hand
the file system's own listing through untouched: nothing changes and nothing is copied.
In a search leg's worker, and the replays of the witnesses it found (`start_in`), and in
the directory-order probe's forked children (`set_order`), they list a permutation of it
(`seeds.directory_positions`), the same for a directory that does not change, as a file
system's own order is; in a probe child, the names of a directory the worker listed in its
own order before the fork (at import, in collection) keep that order among themselves
(`_listed`).

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
# with the names as the process listed them. In a probe child, those names keep that order
# among themselves, and only a name new since takes its place in the probe's order: one
# process meets what it listed in one order, and an entry that comes or goes moves none of
# the others, as on any file system. A cache filled at import, found stale in a child that
# listed the directory another way, made a deterministic regression follow the order; so did
# one keyed by the listing without the caller's own lock file, once a child whose lock file
# changed the listing listed the rest in the probe's order (adversarial reviews).
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


def _arranged(path: Any, entries: list[Any], names: list[Any]) -> list[Any]:
    """`entries`, the file system's listing of `path` (`names`, theirs), in the order they go
    in now: the current order's, but in a probe child the names the process listed before the
    fork in the order it listed them (`_listed`)."""
    positions = list(range(len(entries)))
    if _order != seeds.AS_LISTED:
        positions = _in_order(positions, _order)
    if _listed is not None:
        try:
            found = _stat("." if path is None else path)
        except (OSError, TypeError, ValueError):  # listed already: a path that moved since, say
            found = None
        # Names as str whatever the path was: a directory listed by a bytes path is the same
        # directory (listed by one in a child, all of it took the probe's order: an adversarial review).
        decoded = [os.fsdecode(name) for name in names]
        if found is not None and _order == _own:
            _listed[(found.st_dev, found.st_ino)] = [decoded[position] for position in positions]
        elif found is not None:
            before = {name: rank for rank, name in enumerate(_listed.get((found.st_dev, found.st_ino), ()))}
            kept = iter(sorted((p for p in positions if decoded[p] in before), key=lambda p: before[decoded[p]]))
            positions = [next(kept) if decoded[position] in before else position for position in positions]
    return [entries[position] for position in positions]


def _passed_through() -> bool:
    """Whether listings go as the file system lists, with nothing to remember: no copy, no stat."""
    return _order == seeds.AS_LISTED and _listed is None


@functools.wraps(_listdir)
def _ordered_listdir(path: Any = None) -> list[Any]:
    listed = _listdir(path)
    if _passed_through():
        return listed
    return _arranged(path, listed, listed)


@functools.wraps(_scandir)
def _ordered_scandir(path: Any = None) -> Any:
    if _passed_through():
        return _scandir(path)
    with _scandir(path) as found:  # read whole, then closed: the entries outlive it, as os.walk's do
        entries = list(found)
    return _Listing(_arranged(path, entries, [entry.name for entry in entries]))


def install() -> None:
    """Puts the wrappers in `os`, as listed until `start_in` or `set_order`."""
    os.listdir, os.scandir = _ordered_listdir, _ordered_scandir
