"""The order the code under test meets directories in, as the runner chose it (`seeds`).

`install` replaces `os.listdir` and `os.scandir` (and so what builds on them: `os.walk`,
`glob`, `pathlib.Path.iterdir` and `Path.glob`, `shutil`) before any user code, so a module
that took its own reference to them at import still lists through them. Outside a call, and
in a call that meets the file system's order, they hand its listing through untouched:
nothing changes and nothing is copied. Inside `listing(order, on_top)` they list a
permutation of it (`seeds.directory_positions`), the same for a directory that does not
change, as a file system's own order is: the call's own order (`seeds.call_directory_order`,
from its `random` seed: every call of the search, and every replay of a witness that follows
its seed, `follow_seeds`), then in the directory-order probe's forked children a setting of
the probe's on top of it.

A wrapper rather than an LD_PRELOAD shim of readdir: it needs no compiler on the machine
that runs the gate, and a shim's order would have to be a function of what readdir returns
one entry at a time. What the code under test can reach through it (its globals, the
originals in `__wrapped__`) is the orders' numbers and `seeds`, which derives from the lock,
nothing the runner keeps from it (no channel key, no request). Not covered: `posix.listdir`
called directly, and programs the code under test runs.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from witness_gate import seeds

# The order of the call running now, and the probe's setting on top of it.
_order = (seeds.AS_LISTED, seeds.AS_LISTED)
_LISTED = _order
_follows_seeds = True  # check's calls do; a replay's, as its witness says
_listdir, _scandir = os.listdir, os.scandir


def follow_seeds(follows: bool) -> None:
    """Whether a call meets the order its `random` seed derives (`of_call`), or the file
    system's: a witness of version 4 on was found under the first (`witness.ORDERS_FOLLOW_SEEDS`)."""
    global _follows_seeds
    _follows_seeds = follows


def of_call(random_seed: int) -> int:
    """The order a call recorded under `random_seed` meets."""
    return seeds.call_directory_order(random_seed) if _follows_seeds else seeds.AS_LISTED


@contextlib.contextmanager
def listing(order: int, on_top: int = seeds.AS_LISTED) -> Iterator[None]:
    """Directories list in `order`, then permuted by `on_top` (a probe's setting), while the
    block runs; as before after it."""
    global _order
    before, _order = _order, (order, on_top)
    try:
        yield
    finally:
        _order = before


def _in_order(entries: list[Any]) -> list[Any]:
    listed = list(entries)
    for order in _order:
        if order != seeds.AS_LISTED:
            permuted = list(listed)
            for entry, position in zip(listed, seeds.directory_positions(order, len(listed))):
                permuted[position] = entry
            listed = permuted
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


@functools.wraps(_listdir)
def _ordered_listdir(path: Any = None) -> list[Any]:
    if _order == _LISTED:
        return _listdir(path)
    return _in_order(_listdir(path))


@functools.wraps(_scandir)
def _ordered_scandir(path: Any = None) -> Any:
    if _order == _LISTED:
        return _scandir(path)
    with _scandir(path) as entries:  # read whole, then closed: the entries outlive it, as os.walk's do
        return _Listing(_in_order(list(entries)))


def install() -> None:
    """Puts the wrappers in `os`, listing as the file system does outside `listing`."""
    os.listdir, os.scandir = _ordered_listdir, _ordered_scandir
