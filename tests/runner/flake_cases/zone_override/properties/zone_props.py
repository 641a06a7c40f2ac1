"""Each parcel pays its zone's flat fee."""

from hypothesis import strategies as st

import witness_gate
from shipping_zones import shipping_fee_cents

FEES = {"domestic": 490, "europe": 1290, "world": 2990}
shipments = st.fixed_dictionaries({"zone": st.sampled_from(sorted(FEES)), "parcels": st.integers(0, 20)})


@witness_gate.property(payloads=shipments)
def prop_each_parcel_pays_its_zone_s_fee(shipment: dict) -> bool:
    return shipping_fee_cents(shipment["zone"], shipment["parcels"]) == FEES[shipment["zone"]] * shipment["parcels"]
