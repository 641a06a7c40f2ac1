"""The memory layout a forked replay starts from: where the call's small objects land.

CPython serves objects of up to 512 bytes from pools of one size class each, aligned to
the pool size, and hands out a pool's free blocks last freed, first served. A replay
child inherits its worker's heap as the worker's own work between forks left it, so
code that orders or hashes objects by identity (`sorted(key=id)`, a set of objects
without `__hash__`) would see another order from one slot to the next. A `Layout` gives
every size class a pool of its own at the front of the allocator's list whose free
blocks are handed out in an order drawn from a seed: the call's first objects of each
size (up to a pool's worth) land at the same addresses relative to their pool, in the
same order, in every replay of one process, and elsewhere under another seed.

Not arranged: objects over 512 bytes or past a pool's worth of one size, and objects
CPython's own free lists (tuples, lists, dicts, floats) hand back. The worker's full
collection before each fork empties those lists, and freeing the arranged floats refills
the float list with the first hundred of them, so they too come back the same way in every
replay. Under another allocator (PYTHONMALLOC=malloc) nothing is arranged.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from itertools import repeat

_POOL_HEADER = 48  # bytes before a pool's first block (obmalloc's POOL_OVERHEAD on 64-bit)
_POOL_SIZE = 16 * 1024  # obmalloc's pools since CPython 3.10 (the radix-tree allocator)
_BLOCK_SIZES = range(16, 513, 16)
# Holes in pools already in use are filled first: at most this many bytes of blocks per
# size class are made looking for a pool of their own.
_MOST_BYTES_PER_SIZE = 1 << 20


def _blocks(size: int, count: int) -> list[object]:
    """`count` new objects of `size` bytes (so from that size class), none tracked by the
    collector, made with no temporary of another size in between."""
    if size == 16:
        return [object() for _ in repeat(None, count)]
    if size == 32:  # floats (24 bytes); an int would need a counter of the same size class
        return [half + 0.25 for half in repeat(0.5, count)]
    return [bytes(size - sys.getsizeof(b"")) for _ in repeat(None, count)]


def _own_pool(size: int) -> list[object] | None:
    """Objects that fill one whole pool of blocks of `size` bytes, or None when no pool
    filled by them alone shows up (not pymalloc, or a pool size other than expected)."""
    per_pool = (_POOL_SIZE - _POOL_HEADER) // size
    made: list[object] = []
    while len(made) * size < _MOST_BYTES_PER_SIZE:
        made += _blocks(size, per_pool)
        pool = _filled_pool(made, per_pool)
        if pool is not None:
            return pool
    return None


def _filled_pool(made: list[object], per_pool: int) -> list[object] | None:
    # Counted afresh each time, and nothing kept between: an int key kept alive would hold a
    # block of the pool being filled (pool addresses are 32-byte ints).
    per_base = Counter(id(o) & -_POOL_SIZE for o in made)
    filled = [base for base, count in per_base.items() if count == per_pool]
    return [o for o in made if id(o) & -_POOL_SIZE == filled[0]] if filled else None


class Layout:
    """A pool of every size class, filled in the worker before it forks and held there, and
    the order its blocks are to be handed out in, drawn from `seed`: a forked replay frees
    them in that order (`take_effect`) before it calls anything. Filled once, so each
    replay pays for the frees alone; the worker never frees them, so nothing it does
    between forks reaches them."""

    def __init__(self, seed: int) -> None:
        self._anchors, self._arranged = _drawn(
            random.Random(seed)
        )  # a generator of its own: the global `random` state is the call's

    def take_effect(self) -> None:
        """In a forked child, before the replay: one C loop frees the arranged blocks from the
        last to the first, with no allocation in between, so in each pool the first is freed
        last and handed out first, and each pool, full until then, goes to the front of its
        size class's list at its first free block. The anchors (one block per pool) stay, so
        no pool is given back."""
        self._arranged.clear()


def _drawn(draw: random.Random) -> tuple[list[object], list[object]]:
    """(one kept block per pool of its own, the others in the order they are to be handed
    out), the lists the only references to them."""
    anchors: list[object] = []
    arranged: list[object] = []
    for size in _BLOCK_SIZES:
        pool = _own_pool(size)
        if pool is None:
            if size == _BLOCK_SIZES[0]:  # not CPython's small-object allocator: nothing to arrange
                break
            continue
        pool.sort(key=lambda o: id(o) & (_POOL_SIZE - 1))  # by position in the pool, whatever order they were made in
        draw.shuffle(pool)
        anchors.append(pool.pop())
        arranged.extend(pool)
    return anchors, arranged
