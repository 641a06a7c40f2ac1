"""Welcome promotion: 20% off the first product a new customer put in the cart.

The implementation deduplicates the cart's SKUs with a set and takes the "first" one,
so which product gets the discount follows the string hash order (PYTHONHASHSEED) of
the SKUs, not the order they were added in.
"""

from __future__ import annotations

WELCOME_DISCOUNT_PCT = 20


def welcome_sku(lines: list[dict]) -> str | None:
    skus = {line["sku"] for line in lines}  # dedupe: a product counts once
    return next(iter(skus), None)  # bug: a set has no "first"


def price_welcome_cart(lines: list[dict]) -> dict:
    """Prices a new customer's cart; lines are {"sku", "qty", "unit_cents"}."""
    promoted = welcome_sku(lines)
    priced = []
    for line in lines:
        amount = line["qty"] * line["unit_cents"]
        discount = amount * WELCOME_DISCOUNT_PCT // 100 if line["sku"] == promoted else 0
        priced.append({"sku": line["sku"], "amount_cents": amount, "discount_cents": discount})
    return {"promoted_sku": promoted, "lines": priced, "total_cents": sum(p["amount_cents"] - p["discount_cents"] for p in priced)}
