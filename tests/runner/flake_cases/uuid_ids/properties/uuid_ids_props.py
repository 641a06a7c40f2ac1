"""The printed invoice must list the lines in the order the customer added them.

Catches `invoice_lines` sorting rows by `uuid4` line ids: with two different lines
the rows come out swapped on about half the calls.
"""

from hypothesis import strategies as st

import witness_gate
from invoice_lines import invoice_from_cart

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "sku": st.sampled_from(["SKU-1001", "SKU-2040", "SKU-3300"]),
            "qty": st.integers(min_value=1, max_value=5),
            "unit_cents": st.integers(min_value=1, max_value=5_000),
        }
    ),
    # Two lines: n distinct lines come out in cart order with probability 1/n!, so a
    # longer cart would fail on nearly every call instead of about half of them.
    max_size=2,
)
carts = st.fixed_dictionaries({"number": st.sampled_from(["INV-1", "INV-2"]), "lines": _lines})


@witness_gate.property(
    payloads=carts,
    examples=[{"number": "INV-1", "lines": [{"sku": "SKU-1001", "qty": 2, "unit_cents": 450}]}],
)
def prop_invoice_rows_follow_cart_order(cart: dict) -> bool:
    rows = invoice_from_cart(cart["number"], cart["lines"]).render_rows()
    expected = [f"{l['sku']} x{l['qty']} @ {l['unit_cents']} = {l['qty'] * l['unit_cents']}" for l in cart["lines"]]
    return rows == expected
