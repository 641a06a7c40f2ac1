"""Packing never opens a parcel while the current one still has room for the next item."""

from hypothesis import strategies as st

import witness_gate
from shipping_split import PARCEL_LIMIT_GRAMS, parcels

weights = st.lists(st.integers(100, 1900), min_size=2, max_size=8)


@witness_gate.property(payloads=weights)
def prop_a_new_parcel_only_when_the_item_does_not_fit(weights: list) -> bool:
    packed = parcels(weights)
    return all(sum(before) + after[0] > PARCEL_LIMIT_GRAMS for before, after in zip(packed, packed[1:]))
