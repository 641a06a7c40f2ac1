"""The oracle: the spec's order-total property, with an explicit negative payload."""

from hypothesis import strategies as st

import witness_gate
from orders_app.pricing import order_total

lines = st.lists(
    st.fixed_dictionaries({"qty": st.integers(min_value=0, max_value=50), "price": st.integers(min_value=0, max_value=10_000)}),
    max_size=5,
)
orders = lines.map(lambda ls: {"lines": ls, "claimed_total": sum(line["qty"] * line["price"] for line in ls)})


@witness_gate.property(
    payloads=orders,
    examples=[{"lines": [], "claimed_total": 0}],
    # The generator emits only valid orders; this payload keeps the rejecting branch honest.
    rejects=[{"lines": [{"qty": -1, "price": 5}], "claimed_total": -5}],
    fixture_payloads=True,
)
def prop_order_total_non_negative(order: dict) -> bool:
    total = order_total(order)
    if total < 0:
        return False
    return total == order["claimed_total"]
