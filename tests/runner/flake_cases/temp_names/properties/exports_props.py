"""Published files are numbered in title order."""

from hypothesis import strategies as st

import witness_gate
from exports import render

titles = st.lists(st.sampled_from(["margins", "orders", "refunds", "stock"]), min_size=2, max_size=4, unique=True)


@witness_gate.property(payloads=titles)
def prop_exports_are_numbered_in_title_order(titles: list) -> bool:
    published = render({title: f"{title}\n" for title in titles})
    return [published[title] for title in sorted(titles)] == sorted(published.values())
