"""Checkout total must not depend on the A/B bucket the request lands in.

Catches the `line_coupon_v2` variant of `checkout_experiment`, which the global
`random.choice` picks for about half the requests: a coupon on a multi-unit line
is under-applied there.
"""

from hypothesis import strategies as st

import witness_gate
from checkout_experiment import checkout_total

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "sku": st.sampled_from(["SKU-1001", "SKU-2040", "SKU-3300"]),
            "qty": st.integers(min_value=1, max_value=5),
            "unit_cents": st.integers(min_value=0, max_value=5_000),
        }
    ),
    max_size=4,
)
carts = st.fixed_dictionaries({"lines": _lines, "coupon_pct": st.sampled_from([0, 10, 25])})


@witness_gate.property(
    payloads=carts,
    examples=[{"lines": [{"sku": "SKU-1001", "qty": 3, "unit_cents": 1_000}], "coupon_pct": 0}],
)
def prop_checkout_total_ignores_ab_bucket(cart: dict) -> bool:
    subtotal = sum(line["qty"] * line["unit_cents"] for line in cart["lines"])
    expected = subtotal - subtotal * cart["coupon_pct"] // 100
    return checkout_total(cart)["total_cents"] == expected
