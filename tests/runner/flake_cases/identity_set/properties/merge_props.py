"""The first parcel scanned leads the merged shipment."""

from hypothesis import strategies as st

import witness_gate
from parcel_merge import shipment

scans = st.lists(
    st.fixed_dictionaries({"parcel_id": st.sampled_from(["P-1", "P-2", "P-3", "P-4"]), "grams": st.integers(100, 5000)}),
    min_size=1,
    max_size=6,
)


@witness_gate.property(payloads=scans)
def prop_the_first_parcel_scanned_leads(payload: list) -> bool:
    return shipment(payload)[0].parcel_id == payload[0]["parcel_id"]
