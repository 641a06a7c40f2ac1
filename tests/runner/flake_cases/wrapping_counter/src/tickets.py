"""Support tickets: numbered per process, shown to customers as three digits."""

from __future__ import annotations

import itertools

_next_number = itertools.count(1)
DIGITS = 3


def open_tickets(subjects: list[str]) -> list[str]:
    """One ticket reference per subject, e.g. "T-042"."""
    # BUG: the reference keeps the last three digits only, so once the process has opened
    # 999 tickets the numbers start again at T-000 and collide with earlier ones.
    return [f"T-{next(_next_number) % 10 ** DIGITS:0{DIGITS}d}" for _ in subjects]
