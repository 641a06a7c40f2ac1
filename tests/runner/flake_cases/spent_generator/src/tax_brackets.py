"""Income tax brackets, read lazily from the published table.

The table is exposed as a module-level generator so it is parsed only when first needed;
a generator can be iterated once, so each lookup resumes where the previous one stopped
and never sees the brackets before it.
"""

from __future__ import annotations

_TABLE = """0 10000 0
10000 40000 20
40000 100000 30
100000 1000000000 45"""


def _parse():
    for row in _TABLE.splitlines():
        low, high, rate = (int(field) for field in row.split())
        yield low, high, rate


_brackets = _parse()  # the bug: a one-shot iterator shared by every lookup


def marginal_rate(income: int) -> int:
    for low, high, rate in _brackets:
        if low <= income < high:
            return rate
    return 0
