"""A cart built from a form holds that form's lines and nothing else."""

from hypothesis import strategies as st

import witness_gate
from cart_builder import build_cart

lines = st.lists(st.fixed_dictionaries({"sku": st.sampled_from(["A-1", "B-2", "C-3"]), "qty": st.integers(0, 3)}), max_size=4)


@witness_gate.property(payloads=lines)
def prop_cart_holds_only_the_posted_lines(posted: list) -> bool:
    return build_cart(posted) == [{"sku": line["sku"], "qty": line["qty"]} for line in posted if line["qty"] > 0]
