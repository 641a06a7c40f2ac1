"""The invoice's per-category tax summary must add up to the sum of its lines.

Catches the unlocked read-modify-write in `parallel_invoice.tax_summary`: when two
lines of the same category are priced at the same time one of them is lost.
"""

from hypothesis import strategies as st

import witness_gate
from parallel_invoice import TAX_RATES_PCT, tax_summary

_lines = st.lists(
    st.fixed_dictionaries(
        {
            "category": st.sampled_from(sorted(TAX_RATES_PCT)),
            "qty": st.integers(min_value=1, max_value=5),
            "unit_cents": st.integers(min_value=1, max_value=5_000),
        }
    ),
    max_size=2,  # with three lines both workers are busy at once and nearly every call loses one
)
invoices = st.fixed_dictionaries({"lines": _lines})


@witness_gate.property(
    payloads=invoices,
    examples=[{"lines": [{"category": "food", "qty": 2, "unit_cents": 250}]}],
)
def prop_tax_summary_adds_up(invoice: dict) -> bool:
    expected: dict[str, int] = {}
    for line in invoice["lines"]:
        net = line["qty"] * line["unit_cents"]
        expected[line["category"]] = expected.get(line["category"], 0) + net + net * TAX_RATES_PCT[line["category"]] // 100
    return tax_summary(invoice["lines"]) == expected
