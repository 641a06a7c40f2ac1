"""The marginal rate of an income is its bracket's, whatever was looked up before."""

from hypothesis import strategies as st

import witness_gate
from tax_brackets import marginal_rate


def expected(income: int) -> int:
    return 0 if income < 10_000 else 20 if income < 40_000 else 30 if income < 100_000 else 45


@witness_gate.property(payloads=st.integers(0, 500_000))
def prop_marginal_rate_follows_the_table(income: int) -> bool:
    return marginal_rate(income) == expected(income)
