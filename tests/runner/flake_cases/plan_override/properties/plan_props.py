"""An order gets its plan's limit."""

from hypothesis import strategies as st

import witness_gate
from plan_limits import accepted_items

LIMITS = {"basic": 5, "plus": 20, "pro": 100}
orders = st.fixed_dictionaries({"plan": st.sampled_from(sorted(LIMITS)), "items": st.integers(min_value=0, max_value=120)})


@witness_gate.property(payloads=orders)
def prop_an_order_gets_its_plan_s_limit(order: dict) -> bool:
    return accepted_items(order["plan"], order["items"]) == min(order["items"], LIMITS[order["plan"]])
