"""Order events and the handlers that react to them.

`place_order` registers the loyalty-points handler each time it runs (it used to run once,
at start-up); the registry is a module-level list, so every earlier order adds another
copy, and each copy awards the points again.
"""

from __future__ import annotations

_handlers: list = []


def _award_points(order: dict, ledger: dict) -> None:
    ledger[order["customer"]] = ledger.get(order["customer"], 0) + order["total_cents"] // 100


def place_order(order: dict) -> dict:
    _handlers.append(_award_points)  # the bug: registration belongs at start-up, once
    ledger: dict = {}
    for handler in _handlers:
        handler(order, ledger)
    return ledger
