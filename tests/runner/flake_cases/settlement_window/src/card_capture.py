"""Card captures: a capture made during the nightly settlement window loses the cart's discount.

The acquirer settles once a day, for six hours from `SETTLEMENT_FROM_HOUR` (UTC). A capture
made then cannot be posted at once: it is held and rebuilt from the cart when settlement
ends. The hold path, added later, rebuilds the amount from the lines' list prices and never
applies the discount code, so a discounted cart captured in the window is overcharged.
"""

from __future__ import annotations

import datetime

SETTLEMENT_FROM_HOUR = 22
SETTLEMENT_HOURS = 6
DISCOUNTS = {"WELCOME10": 10, "SPRING25": 25}  # percent off the cart


def in_settlement(now: datetime.datetime) -> bool:
    return (now.hour - SETTLEMENT_FROM_HOUR) % 24 < SETTLEMENT_HOURS


def amount_due(lines: list[dict], code: str | None) -> int:
    """What the cart costs, in cents, after its discount (rounded down to the cent)."""
    subtotal = sum(line["cents"] * line["quantity"] for line in lines)
    return subtotal - subtotal * DISCOUNTS.get(code or "", 0) // 100


def _held(lines: list[dict]) -> dict:
    # Rebuilt when settlement ends: from the lines alone.
    return {"status": "held", "cents": sum(line["cents"] * line["quantity"] for line in lines)}


def capture(lines: list[dict], code: str | None) -> dict:
    now = datetime.datetime.now(datetime.timezone.utc)
    if in_settlement(now):
        return _held(lines)
    return {"status": "captured", "cents": amount_due(lines, code)}
