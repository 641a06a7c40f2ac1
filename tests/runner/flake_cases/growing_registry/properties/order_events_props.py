"""An order awards one point per whole euro, once."""

from hypothesis import strategies as st

import witness_gate
from order_events import place_order

orders = st.fixed_dictionaries({"customer": st.sampled_from(["c1", "c2"]), "total_cents": st.integers(0, 100_000)})


@witness_gate.property(payloads=orders)
def prop_points_are_awarded_once(order: dict) -> bool:
    return place_order(order) == {order["customer"]: order["total_cents"] // 100}
