"""Invoice tax summary priced on a thread pool, with an unlocked shared accumulator.

Each line's tax rate comes from a rate service (I/O), so lines are priced in parallel.
Workers add their gross amount to a shared per-category dict with a read-modify-write
around the rate lookup and no lock: two lines of one category can lose an update.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

TAX_RATES_PCT = {"food": 7, "books": 7, "standard": 19}
RATE_SERVICE_CONCURRENCY = 2  # the rate service allows two in-flight requests per client
RATE_SERVICE_ROUND_TRIP = 270e-6  # p50 of the local rate sidecar, in seconds


def lookup_rate(category: str) -> int:
    """The rate-service call (a socket round trip in production; it releases the GIL)."""
    time.sleep(RATE_SERVICE_ROUND_TRIP)
    return TAX_RATES_PCT[category]


def tax_summary(lines: list[dict], workers: int = RATE_SERVICE_CONCURRENCY) -> dict[str, int]:
    """Gross cents per tax category for lines {"category", "qty", "unit_cents"}."""
    totals: dict[str, int] = {}

    def price(line: dict) -> None:
        net = line["qty"] * line["unit_cents"]
        running = totals.get(line["category"], 0)  # read ...
        rate = lookup_rate(line["category"])
        totals[line["category"]] = running + net + net * rate // 100  # ... write: no lock held in between

    with ThreadPoolExecutor(max_workers=workers) as pool:
        for future in [pool.submit(price, line) for line in lines]:
            future.result()
    return totals
