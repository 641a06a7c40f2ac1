"""A SKU's price in a currency is its base price converted at that currency's rate."""

from hypothesis import strategies as st

import witness_gate
from price_list import _BASE_CENTS, _RATE_PERCENT, PriceList

requests = st.fixed_dictionaries({"currency": st.sampled_from(sorted(_RATE_PERCENT)), "sku": st.sampled_from(sorted(_BASE_CENTS))})


@witness_gate.property(payloads=requests)
def prop_price_is_converted_at_the_currency_rate(request: dict) -> bool:
    expected = _BASE_CENTS[request["sku"]] * _RATE_PERCENT[request["currency"]] // 100
    return PriceList(request["currency"]).price_cents(request["sku"]) == expected
