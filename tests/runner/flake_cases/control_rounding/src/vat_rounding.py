"""VAT per invoice line, rounded to the cent.

Finance rounds half to even (banker's rounding) and the ledger expects it; this module
was written with ROUND_HALF_DOWN, so an exact half cent whose cent below is odd is
rounded down instead of up. Deterministic: the same line is wrong every time.
"""

from __future__ import annotations

from decimal import ROUND_HALF_DOWN, Decimal


def line_vat_cents(net_cents: int, rate_pct: int) -> int:
    vat = Decimal(net_cents) * Decimal(rate_pct) / Decimal(100)
    return int(vat.quantize(Decimal(1), rounding=ROUND_HALF_DOWN))  # bug: should be ROUND_HALF_EVEN


def invoice_vat_cents(lines: list[dict]) -> int:
    return sum(line_vat_cents(line["qty"] * line["unit_cents"], line["vat_pct"]) for line in lines)
