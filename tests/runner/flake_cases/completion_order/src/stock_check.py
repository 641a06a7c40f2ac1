"""Availability for a cart, asked of every warehouse at once on a thread pool.

Each warehouse answers over the network, so the requests run in parallel and the answers
are taken as they arrive (`as_completed`). The warehouse stand-in waits as long as a round
trip does, with the long-tailed spread of the real service (10 us to 5 ms, log-uniform,
drawn from the OS's entropy), so which answer comes first is decided on an idle core, a
busy one or a single CPU alike.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

WAREHOUSES = ("north", "south", "east")
ROUND_TRIP_DECADES = (-5.0, -2.3)
_network = random.SystemRandom()


def ask(warehouse: str, stock: dict[str, dict[str, int]], sku: str) -> tuple[str, int]:
    time.sleep(10 ** _network.uniform(*ROUND_TRIP_DECADES))
    return warehouse, stock[warehouse].get(sku, 0)


def ship_from(stock: dict[str, dict[str, int]], sku: str, qty: int) -> str | None:
    """The warehouse to ship from: the first in WAREHOUSES order (the cheapest route) that
    holds `qty`, or None."""
    with ThreadPoolExecutor(max_workers=len(WAREHOUSES)) as pool:
        answers = [pool.submit(ask, warehouse, stock, sku) for warehouse in WAREHOUSES]
        # BUG: meant to stop at the cheapest warehouse that can ship, but takes the first
        # answer to arrive that can.
        for answer in as_completed(answers):
            warehouse, held = answer.result()
            if held >= qty:
                return warehouse
    return None
