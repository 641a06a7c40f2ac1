"""A capture charges what the cart costs after its discount, whenever it is made.

Catches `card_capture` rebuilding a capture held during the nightly settlement window from
the lines' list prices: a discounted cart captured in those six hours is overcharged.
"""

from hypothesis import strategies as st

import witness_gate
from card_capture import DISCOUNTS, amount_due, capture

lines = st.lists(
    st.fixed_dictionaries({"cents": st.integers(min_value=1, max_value=50_000), "quantity": st.integers(1, 5)}),
    min_size=1,
    max_size=4,
)
carts = st.fixed_dictionaries({"lines": lines, "code": st.sampled_from([None, *sorted(DISCOUNTS)])})


@witness_gate.property(payloads=carts, examples=[{"lines": [{"cents": 1999, "quantity": 1}], "code": None}])
def prop_capture_charges_the_discounted_total(cart: dict) -> bool:
    return capture(cart["lines"], cart["code"])["cents"] == amount_due(cart["lines"], cart["code"])
