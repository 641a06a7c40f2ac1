"""The order API answers 201 for a valid order and 422 for an invalid one, never 503.

Catches the connection leak on the validation-error path of `order_store.save_order`:
after four rejected orders in one process every call gets 503; a payload that fails
there passes on its own.
"""

from hypothesis import strategies as st

import witness_gate
from order_store import post_order

_lines = st.lists(
    st.fixed_dictionaries(
        {"sku": st.sampled_from(["SKU-1001", "SKU-2040", "SKU-3300"]), "qty": st.integers(min_value=-1, max_value=5)}
    ),
    max_size=3,
)
bodies = st.fixed_dictionaries({"customer_id": st.sampled_from(["c1", "c2"]), "lines": _lines})


# No `examples`: each one would be history for the calls after it.
@witness_gate.property(payloads=bodies)
def prop_order_api_status(body: dict) -> bool:
    valid = bool(body["lines"]) and all(line["qty"] > 0 for line in body["lines"])
    status, _ = post_order(body)
    return status == (201 if valid else 422)
