"""Stock reservations: a cart reserves what it holds; an abandoned cart gives it back."""

from __future__ import annotations

import weakref


class Inventory:
    def __init__(self, shelf: dict[str, int]) -> None:
        self.shelf = dict(shelf)
        self.reserved: dict[str, int] = {sku: 0 for sku in shelf}

    def available(self, sku: str) -> int:
        return self.shelf[sku] - self.reserved[sku]

    def reserve(self, sku: str, qty: int) -> None:
        if qty > self.available(sku):
            raise ValueError(f"only {self.available(sku)} of {sku} left")
        self.reserved[sku] += qty

    def release(self, sku: str, qty: int) -> None:
        self.reserved[sku] -= qty

    def sell(self, sku: str, qty: int) -> None:
        self.reserved[sku] -= qty
        self.shelf[sku] -= qty


class Line:
    def __init__(self, cart: Cart, sku: str, qty: int) -> None:
        self.cart = cart  # the line knows its cart (for the cart's totals): a reference cycle
        self.sku = sku
        self.qty = qty


class Cart:
    def __init__(self, inventory: Inventory) -> None:
        self.inventory = inventory
        self.lines: list[Line] = []

    def add(self, sku: str, qty: int) -> None:
        self.inventory.reserve(sku, qty)
        self.lines.append(Line(self, sku, qty))
        # An abandoned cart gives its stock back once it is collected.
        weakref.finalize(self, self.inventory.release, sku, qty)

    def checkout(self) -> None:
        # BUG: the finalizers stay attached: when the collector reclaims a checked-out cart
        # (a cycle, so only the cyclic collector does), it releases stock that was sold.
        for line in self.lines:
            self.inventory.sell(line.sku, line.qty)
