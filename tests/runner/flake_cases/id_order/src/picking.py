"""Warehouse picking lists: the lines of a batch of orders, grouped by bin."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(eq=False)
class Pick:
    order: int
    sku: str
    qty: int


@dataclass
class Bin:
    name: str
    picks: list[Pick] = field(default_factory=list)


def picking_list(orders: list[list[str]]) -> list[tuple[int, str]]:
    """(order number, sku) in the order a picker walks them: bins in name order, and within
    a bin the earlier order first."""
    bins: dict[str, Bin] = {}
    for number, skus in enumerate(orders):
        for sku in skus:
            bins.setdefault(sku[0], Bin(sku[0])).picks.append(Pick(number, sku, 1))
    walk = []
    for name in sorted(bins):
        # BUG: meant to drop duplicate picks and keep the first, but a set of objects that
        # hash by identity, sorted by id(), follows where they landed in memory, not the order.
        for pick in sorted(set(bins[name].picks), key=id):
            walk.append((pick.order, pick.sku))
    return walk
