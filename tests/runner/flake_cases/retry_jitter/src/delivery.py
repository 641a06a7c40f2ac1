"""Webhook delivery with retries: exponential backoff with full jitter, under a deadline."""

from __future__ import annotations

import random

BASE_DELAY_S = 0.5
DEADLINE_S = 20.0


def backoff_schedule(attempts: int) -> list[float]:
    """The waits before each retry: full jitter over an exponential ceiling, and never past
    the delivery deadline in total."""
    waits = []
    for attempt in range(attempts):
        waits.append(random.uniform(0, BASE_DELAY_S * 2 ** attempt))
    # BUG: the deadline is checked on the waits' expected total (half of each ceiling), not
    # on the waits drawn: a run of long jitter draws overshoots it.
    if sum(BASE_DELAY_S * 2 ** attempt / 2 for attempt in range(attempts)) > DEADLINE_S:
        raise ValueError("too many attempts for the deadline")
    return waits
