"""The checkout total of a freshly loaded order must be the sum of its lines.

Catches the `id(row)`-keyed memo in `order_totals`: every call builds a new order row,
which reuses the memory of the row the previous call freed, so a payload fails after a
payload with another total and passes in a fresh process.
"""

from hypothesis import strategies as st

import witness_gate
from order_totals import order_total, row_from_json

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "sku": st.sampled_from(["SKU-1001", "SKU-2040", "SKU-3300"]),
            "qty": st.integers(min_value=1, max_value=5),
            "unit_cents": st.integers(min_value=1, max_value=5_000),
        }
    ),
    max_size=4,
)
orders = st.fixed_dictionaries(
    {"order_id": st.sampled_from(["o-1", "o-2", "o-3"]), "customer_id": st.sampled_from(["c1", "c2"]), "lines": _lines}
)


# No `examples`: each one would be history for the calls after it.
@witness_gate.property(payloads=orders)
def prop_checkout_total_of_loaded_order(payload: dict) -> bool:
    row = row_from_json(payload)
    return order_total(row) == sum(line["qty"] * line["unit_cents"] for line in payload["lines"])
