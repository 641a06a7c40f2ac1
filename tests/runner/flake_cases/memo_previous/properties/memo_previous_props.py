"""A quote must price the cart it was asked for.

Catches the customer-keyed "last quote" memo in `quote_service`: it fails exactly
when the previous call was for the same customer with a cart of another total, and
passes when the payload is called on its own.
"""

from hypothesis import strategies as st

import witness_gate
from quote_service import FREE_SHIPPING_FROM_CENTS, SHIPPING_CENTS, quote

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
requests = st.fixed_dictionaries({"customer_id": st.sampled_from(["c1", "c2"]), "lines": _lines})


# No `examples`: each one would be history for the calls after it.
@witness_gate.property(payloads=requests)
def prop_quote_prices_requested_cart(request: dict) -> bool:
    subtotal = sum(line["qty"] * line["unit_cents"] for line in request["lines"])
    shipping = 0 if subtotal >= FREE_SHIPPING_FROM_CENTS or not request["lines"] else SHIPPING_CENTS
    return quote(request["customer_id"], request["lines"]).total_cents == subtotal + shipping
