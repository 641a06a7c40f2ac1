"""Of two jobs with the same priority, the one submitted first runs first."""

from hypothesis import strategies as st

import witness_gate
from job_queue import run_order

pairs = st.fixed_dictionaries({"first": st.integers(0, 2), "second": st.integers(0, 2)})


@witness_gate.property(payloads=pairs)
def prop_a_tie_runs_in_submission_order(payload: dict) -> bool:
    order = run_order([{"name": "first", "priority": payload["first"]}, {"name": "second", "priority": payload["second"]}])
    return payload["first"] != payload["second"] or order == ["first", "second"]
