"""The welcome discount goes to the product the customer added first.

Catches `welcome_promo` taking the "first" SKU of a set: with two or more distinct
SKUs the promoted one depends on the interpreter's string hash seed.
"""

from hypothesis import strategies as st

import witness_gate
from welcome_promo import WELCOME_DISCOUNT_PCT, price_welcome_cart

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "sku": st.sampled_from(["SKU-1001", "SKU-1002", "SKU-2040", "SKU-3300", "SKU-4711"]),
            "qty": st.integers(min_value=1, max_value=3),
            "unit_cents": st.integers(min_value=100, max_value=5_000),
        }
    ),
    min_size=1,
    # Up to three lines: with k distinct SKUs about 1 - 1/k of hash seeds fail.
    max_size=3,
)
carts = st.fixed_dictionaries({"lines": _lines})


@witness_gate.property(
    payloads=carts,
    examples=[{"lines": [{"sku": "SKU-1001", "qty": 1, "unit_cents": 1_000}, {"sku": "SKU-1001", "qty": 2, "unit_cents": 1_000}]}],
)
def prop_welcome_discount_on_first_added_sku(cart: dict) -> bool:
    lines = cart["lines"]
    first = lines[0]["sku"]
    priced = price_welcome_cart(lines)
    if priced["promoted_sku"] != first:
        return False
    expected = sum(
        l["qty"] * l["unit_cents"] - (l["qty"] * l["unit_cents"] * WELCOME_DISCOUNT_PCT // 100 if l["sku"] == first else 0)
        for l in lines
    )
    return priced["total_cents"] == expected
