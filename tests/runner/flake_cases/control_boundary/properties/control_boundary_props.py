"""Lines of ten or more units get the 10% bulk discount (a control: no flake).

Catches the off-by-one threshold in `bulk_discount`: a line of exactly ten units is
charged full price, on every call.
"""

from hypothesis import strategies as st

import witness_gate
from bulk_discount import cart_total_cents

_lines = st.lists(
    st.fixed_dictionaries({"qty": st.integers(min_value=1, max_value=12), "unit_cents": st.integers(min_value=1, max_value=5_000)}),
    max_size=4,
)
carts = st.fixed_dictionaries({"lines": _lines})


@witness_gate.property(
    payloads=carts,
    examples=[{"lines": [{"qty": 12, "unit_cents": 1_000}]}],
)
def prop_bulk_discount_from_ten_units(cart: dict) -> bool:
    expected = 0
    for line in cart["lines"]:
        amount = line["qty"] * line["unit_cents"]
        expected += amount - amount * 10 // 100 if line["qty"] >= 10 else amount
    return cart_total_cents(cart["lines"]) == expected
