"""An order ships from the cheapest warehouse that holds it."""

from hypothesis import strategies as st

import witness_gate
from stock_check import WAREHOUSES, ship_from

levels = st.fixed_dictionaries({warehouse: st.fixed_dictionaries({"lamp": st.integers(0, 6)}) for warehouse in WAREHOUSES})
requests = st.fixed_dictionaries({"stock": levels, "qty": st.integers(1, 6)})


@witness_gate.property(payloads=requests)
def prop_ships_from_the_cheapest_warehouse_that_holds_it(request: dict) -> bool:
    holding = [warehouse for warehouse in WAREHOUSES if request["stock"][warehouse]["lamp"] >= request["qty"]]
    return ship_from(request["stock"], "lamp", request["qty"]) == (holding[0] if holding else None)
