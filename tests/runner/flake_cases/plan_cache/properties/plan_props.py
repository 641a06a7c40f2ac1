"""An order gets its plan's limit, or its promotion's lower cap for that order alone."""

from hypothesis import strategies as st

import witness_gate
from plan_limits import accepted_items

LIMITS = {"basic": 5, "plus": 20, "pro": 100}
orders = st.fixed_dictionaries(
    {
        "plan": st.sampled_from(sorted(LIMITS)),
        "items": st.integers(min_value=0, max_value=120),
        "promo_cap": st.none() | st.integers(min_value=1, max_value=120),
    }
)


@witness_gate.property(payloads=orders)
def prop_an_order_gets_its_plan_s_limit_or_its_promotion_s(order: dict) -> bool:
    cap = LIMITS[order["plan"]]
    if order["promo_cap"] is not None:
        cap = min(cap, order["promo_cap"])
    return accepted_items(order["plan"], order["items"], order["promo_cap"]) == min(order["items"], cap)
