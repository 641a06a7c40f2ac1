"""Splitting an order into parcels: each worker process spreads its load over two carriers."""

from __future__ import annotations

import os
import random

# Each worker draws its own carrier sequence, so two workers do not hammer one carrier.
_carrier_draws = random.Random(os.getpid())

PARCEL_LIMIT_GRAMS = 2000


def parcels(weights: list[int]) -> list[list[int]]:
    """Items packed in order into parcels of at most PARCEL_LIMIT_GRAMS (an item over the
    limit travels alone)."""
    packed: list[list[int]] = []
    for weight in weights:
        if packed and sum(packed[-1]) + weight <= _limit():
            packed[-1].append(weight)
        else:
            packed.append([weight])
    return packed


def _limit() -> int:
    # BUG: the second carrier's limit (1500 g) was meant for its own parcels only, but the
    # draw changes the limit for every parcel of the order.
    return PARCEL_LIMIT_GRAMS if _carrier_draws.random() < 0.5 else 1500
