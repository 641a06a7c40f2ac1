"""Shipping quotes, memoized with functools.lru_cache.

A parcel is a frozen dataclass whose equality (and hash) looks at the destination only,
so that parcels to one place group together in reports; the quote's cache uses that same
equality, and a heavier parcel to a destination already quoted gets the lighter one's price.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Parcel:
    destination: str
    weight_grams: int = field(compare=False)  # the bug, for the cache: equal parcels of different weights


@functools.lru_cache(maxsize=256)
def quote_cents(parcel: Parcel) -> int:
    zone = {"DE": 1, "FR": 2, "US": 4}[parcel.destination]
    return 300 * zone + (parcel.weight_grams // 500) * 150 * zone
