"""Display conversion is readable; interest is exact to the cent."""

from fractions import Fraction

from hypothesis import strategies as st

import witness_gate
from money import RATES, display_amount, interest_cents


@witness_gate.property(payloads=st.fixed_dictionaries({"cents": st.integers(0, 10**9), "currency": st.sampled_from(sorted(RATES))}))
def prop_display_amount_is_a_number(request: dict) -> bool:
    return float(display_amount(request["cents"], request["currency"])) >= 0


loans = st.fixed_dictionaries({"principal_cents": st.integers(1, 10**12), "rate_ppm": st.integers(1, 200_000), "days": st.integers(1, 3650)})


@witness_gate.property(payloads=loans)
def prop_interest_is_exact_to_the_cent(loan: dict) -> bool:
    exact = Fraction(loan["principal_cents"] * loan["rate_ppm"] * loan["days"], 1_000_000 * 365)
    return abs(interest_cents(loan["principal_cents"], loan["rate_ppm"], loan["days"]) - exact) <= Fraction(1, 2)
