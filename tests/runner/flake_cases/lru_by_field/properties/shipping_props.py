"""A parcel's quote follows its zone and its weight."""

from hypothesis import strategies as st

import witness_gate
from shipping import Parcel, quote_cents

parcels = st.fixed_dictionaries({"destination": st.sampled_from(["DE", "FR", "US"]), "weight_grams": st.integers(0, 5_000)})


@witness_gate.property(payloads=parcels)
def prop_quote_follows_zone_and_weight(parcel: dict) -> bool:
    zone = {"DE": 1, "FR": 2, "US": 4}[parcel["destination"]]
    expected = 300 * zone + (parcel["weight_grams"] // 500) * 150 * zone
    return quote_cents(Parcel(parcel["destination"], parcel["weight_grams"])) == expected
