"""Invoice tax summary priced on a thread pool, with an unlocked shared accumulator.

Each line's tax rate comes from a rate service (I/O), so lines are priced in parallel.
Workers add their gross amount to a shared per-category dict with a read-modify-write
around the rate lookup and no lock: two lines of one category lose an update when the
second worker reads before the first one's lookup returns. Whether it does is a race
between a thread's start-up and the service's latency, which is long-tailed.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

TAX_RATES_PCT = {"food": 7, "books": 7, "standard": 19}
RATE_SERVICE_CONCURRENCY = 2  # the rate service allows two in-flight requests per client
# The rate sidecar's round trip, in seconds: from 10 us (p1) to 5 ms (p99), log-uniform.
RATE_SERVICE_LATENCY_DECADES = (-5.0, -2.3)
_network = random.SystemRandom()  # the OS's entropy, as unseeded as a real network's timing


def lookup_rate(category: str) -> int:
    """The rate-service call: a socket round trip in production, which releases the GIL.

    The stand-in waits as long as a round trip takes, with the latency spread of the real
    sidecar, so the race does not hinge on one machine's thread start-up time (tens of
    microseconds on an idle core, milliseconds on a busy one)."""
    time.sleep(10 ** _network.uniform(*RATE_SERVICE_LATENCY_DECADES))
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
