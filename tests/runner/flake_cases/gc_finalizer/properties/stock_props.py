"""Whatever orders were placed, the stock on offer is the shelf minus what was sold."""

from hypothesis import strategies as st

import witness_gate
from stock import Cart, Inventory

SHELF = {"lamp": 400, "desk": 400, "chair": 400}
orders = st.lists(st.lists(st.sampled_from(sorted(SHELF)), min_size=1, max_size=5), max_size=12)


@witness_gate.property(payloads=orders)
def prop_stock_on_offer_is_shelf_minus_sold(orders: list) -> bool:
    inventory = Inventory(SHELF)
    sold = {sku: 0 for sku in SHELF}
    for order in orders:
        cart = Cart(inventory)
        for sku in order:
            cart.add(sku, 1)
            sold[sku] += 1
        cart.checkout()
    return all(inventory.available(sku) == SHELF[sku] - sold[sku] for sku in SHELF)
