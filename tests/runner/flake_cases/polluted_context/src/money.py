"""Money arithmetic on Decimal: conversion for display, and loan interest."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal, getcontext

RATES = {"EUR": Decimal("1"), "USD": Decimal("1.0843"), "JPY": Decimal("162.37")}


def display_amount(cents: int, currency: str) -> str:
    """An EUR amount converted for display, to six significant digits."""
    # BUG: sets the precision for the whole thread instead of a local context, so every
    # later Decimal computation in the process is rounded to six digits too.
    getcontext().prec = 6
    return str(Decimal(cents) / 100 * RATES[currency])


def interest_cents(principal_cents: int, rate_ppm: int, days: int) -> int:
    """Simple interest over `days`, exact to the cent (a 365-day year)."""
    interest = Decimal(principal_cents) * rate_ppm * days / (Decimal(1_000_000) * 365)
    return int(interest.quantize(Decimal(1), rounding=ROUND_HALF_EVEN))
