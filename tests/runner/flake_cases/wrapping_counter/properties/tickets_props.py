"""The tickets of one batch have distinct references, in opening order."""

from hypothesis import strategies as st

import witness_gate
from tickets import open_tickets

batches = st.fixed_dictionaries({"subject": st.sampled_from(["refund", "late parcel", "broken lamp"]), "tickets": st.integers(1, 80)})


@witness_gate.property(payloads=batches)
def prop_a_batch_gets_increasing_references(batch: dict) -> bool:
    references = open_tickets([batch["subject"]] * batch["tickets"])
    return references == sorted(set(references)) and len(references) == batch["tickets"]
