"""Invoice VAT is the sum of per-line VAT rounded half to even (a control: no flake).

Catches `vat_rounding` using ROUND_HALF_DOWN: a line whose VAT is an exact half cent
with an odd cent below it is one cent short, on every call.
"""

from hypothesis import strategies as st

import witness_gate
from vat_rounding import invoice_vat_cents


def _half_even(numerator: int, denominator: int) -> int:
    quotient, remainder = divmod(numerator, denominator)
    if 2 * remainder > denominator or (2 * remainder == denominator and quotient % 2 == 1):
        quotient += 1
    return quotient


_lines = st.lists(
    st.fixed_dictionaries(
        {
            "qty": st.integers(min_value=1, max_value=5),
            "unit_cents": st.integers(min_value=1, max_value=2_000),
            "vat_pct": st.sampled_from([5, 10, 25]),
        }
    ),
    min_size=1,
    max_size=4,
)
invoices = st.fixed_dictionaries({"lines": _lines})


@witness_gate.property(
    payloads=invoices,
    examples=[{"lines": [{"qty": 1, "unit_cents": 1_000, "vat_pct": 25}]}],
)
def prop_vat_rounds_half_to_even(invoice: dict) -> bool:
    expected = sum(_half_even(l["qty"] * l["unit_cents"] * l["vat_pct"], 100) for l in invoice["lines"])
    return invoice_vat_cents(invoice["lines"]) == expected
