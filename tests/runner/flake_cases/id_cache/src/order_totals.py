"""Checkout totals memoized by `id(row)`.

Checkout passes orders around as the plain tuples the orders query returns, and the page
asks for an order's total many times while rendering, so totals are memoized in a
module-level dict keyed by id(row) and never evicted. Once a row is freed, CPython's
tuple free list hands its memory to the next row of the same width, which then gets the
freed order's total.
"""

from __future__ import annotations

ORDER_COLUMNS = ("order_id", "customer_id", "currency", "status", "channel", "placed_at", "shipping_cents", "coupon_code", "lines")
SHIPPING_CENTS = ORDER_COLUMNS.index("shipping_cents")
LINES = ORDER_COLUMNS.index("lines")


def row_from_json(data: dict) -> tuple:
    """The order as an `orders` query row (lines as (sku, qty, unit_cents) tuples)."""
    lines = tuple((line["sku"], line["qty"], line["unit_cents"]) for line in data["lines"])
    return (data["order_id"], data["customer_id"], "EUR", "open", "web", None, data.get("shipping_cents", 0), data.get("coupon"), lines)


_totals_by_order: dict[int, int] = {}


def order_total(row: tuple) -> int:
    key = id(row)  # bug: an id is unique only among live objects; key by order_id (or use the row itself)
    if key not in _totals_by_order:
        _totals_by_order[key] = row[SHIPPING_CENTS] + sum(qty * unit_cents for _, qty, unit_cents in row[LINES])
    return _totals_by_order[key]
