"""Bulk discount: 10% off a line of ten or more units.

The threshold check is written `qty > BULK_MIN_QTY`, so a line of exactly ten units
pays full price. Deterministic: the boundary quantity is wrong every time.
"""

from __future__ import annotations

BULK_MIN_QTY = 10
BULK_DISCOUNT_PCT = 10


def line_price_cents(qty: int, unit_cents: int) -> int:
    amount = qty * unit_cents
    if qty > BULK_MIN_QTY:  # bug: off by one, the offer starts at ten units
        amount -= amount * BULK_DISCOUNT_PCT // 100
    return amount


def cart_total_cents(lines: list[dict]) -> int:
    return sum(line_price_cents(line["qty"], line["unit_cents"]) for line in lines)
