"""Checkout pricing under an A/B experiment: half the requests take the new coupon path.

The bucket is drawn per request with the global `random.choice` (no sticky bucketing),
and the new variant applies the coupon to each line's unit price instead of the line
amount, so a multi-unit line with a coupon is overcharged on about half the requests.
"""

from __future__ import annotations

import random

VARIANTS = ("control", "line_coupon_v2")


def _coupon_on_subtotal(lines: list[dict], coupon_pct: int) -> int:
    subtotal = sum(line["qty"] * line["unit_cents"] for line in lines)
    return subtotal - subtotal * coupon_pct // 100


def _coupon_per_line(lines: list[dict], coupon_pct: int) -> int:
    # v2: the coupon is applied line by line so the receipt can show it per line.
    total = 0
    for line in lines:
        amount = line["qty"] * line["unit_cents"]
        discount = line["unit_cents"] * coupon_pct // 100  # bug: the unit price, not `amount`
        total += amount - discount
    return total


def choose_variant() -> str:
    return random.choice(VARIANTS)


def checkout_total(cart: dict) -> dict:
    """Prices a cart {"lines": [{"sku", "qty", "unit_cents"}], "coupon_pct"}."""
    variant = choose_variant()
    if variant == "control":
        total = _coupon_on_subtotal(cart["lines"], cart["coupon_pct"])
    else:
        total = _coupon_per_line(cart["lines"], cart["coupon_pct"])
    return {"variant": variant, "total_cents": total}
