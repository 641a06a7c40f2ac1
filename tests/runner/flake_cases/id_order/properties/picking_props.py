"""Within a bin the picker serves earlier orders first."""

from hypothesis import strategies as st

import witness_gate
from picking import picking_list

skus = st.sampled_from(["a1", "a2", "b1", "b2", "c1"])
orders = st.lists(st.lists(skus, min_size=1, max_size=4), min_size=1, max_size=8)


@witness_gate.property(payloads=orders)
def prop_earlier_orders_are_picked_first_within_a_bin(orders: list) -> bool:
    walk = picking_list(orders)
    by_bin: dict = {}
    for order, sku in walk:
        by_bin.setdefault(sku[0], []).append(order)
    return all(numbers == sorted(numbers) for numbers in by_bin.values())
