"""A month-end close with one closing balance per cost centre always reconciles.

Catches `trial_balance.reconcile` comparing float sums taken in set order and in
posting order with ==: with three or more cost centres it reports "unbalanced" under
some string hash seeds only.
"""

from hypothesis import strategies as st

import witness_gate
from trial_balance import reconcile

_postings = st.lists(
    st.fixed_dictionaries(
        {
            "cost_centre": st.sampled_from(["CC-100", "CC-200", "CC-300", "CC-400", "CC-500", "CC-600"]),
            "amount": st.integers(min_value=1, max_value=99_999).map(lambda cents: cents / 100),
        }
    ),
    # Exactly three cost centres: two float sums always agree, and with three a third or
    # two thirds of the summation orders differ from the posting order (with more, nearly all).
    min_size=3,
    max_size=3,
    unique_by=lambda posting: posting["cost_centre"],  # one closing balance per cost centre
)
closes = st.fixed_dictionaries({"period": st.sampled_from(["2024-01", "2024-02"]), "postings": _postings})


@witness_gate.property(
    payloads=closes,
    # Binary fractions add exactly in any order: this close reconciles under every hash seed.
    examples=[
        {
            "period": "2024-01",
            "postings": [{"cost_centre": "CC-100", "amount": 0.5}, {"cost_centre": "CC-200", "amount": 0.25}, {"cost_centre": "CC-300", "amount": 12.0}],
        }
    ],
)
def prop_month_end_close_reconciles(close: dict) -> bool:
    return reconcile(close["postings"])["balanced"] is True
