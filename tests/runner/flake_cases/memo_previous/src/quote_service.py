"""Quote service with a "last quote" memo to absorb double-submitted quote requests.

The memo remembers the previous quote and hands it out again when the same customer
asks twice in a row, but it is keyed by customer id only: a customer who changes the
cart between two requests is quoted for the previous cart.
"""

from __future__ import annotations

from dataclasses import dataclass

SHIPPING_CENTS = 495
FREE_SHIPPING_FROM_CENTS = 5_000


@dataclass(frozen=True)
class Quote:
    customer_id: str
    subtotal_cents: int
    shipping_cents: int

    @property
    def total_cents(self) -> int:
        return self.subtotal_cents + self.shipping_cents


_last_quote: Quote | None = None


def _price(customer_id: str, lines: list[dict]) -> Quote:
    subtotal = sum(line["qty"] * line["unit_cents"] for line in lines)
    shipping = 0 if subtotal >= FREE_SHIPPING_FROM_CENTS or not lines else SHIPPING_CENTS
    return Quote(customer_id, subtotal, shipping)


def quote(customer_id: str, lines: list[dict]) -> Quote:
    global _last_quote
    if _last_quote is not None and _last_quote.customer_id == customer_id:
        return _last_quote  # double submit: same customer, same quote (bug: the cart is not compared)
    _last_quote = _price(customer_id, lines)
    return _last_quote
