"""Price lists per currency, with prices cached on the class to spare the pricing database.

The cache is a class attribute, shared by every `PriceList`, and keyed by SKU alone: once
one currency's list priced a SKU, every other currency's list returns that price.
"""

from __future__ import annotations

_BASE_CENTS = {"A-1": 1_000, "B-2": 2_500, "C-3": 9_900}
_RATE_PERCENT = {"EUR": 100, "USD": 108, "GBP": 86}


class PriceList:
    _cache: dict[str, int] = {}  # the bug: shared across currencies, keyed by SKU only

    def __init__(self, currency: str) -> None:
        self.currency = currency

    def price_cents(self, sku: str) -> int:
        if sku not in self._cache:
            self._cache[sku] = _BASE_CENTS[sku] * _RATE_PERCENT[self.currency] // 100
        return self._cache[sku]
