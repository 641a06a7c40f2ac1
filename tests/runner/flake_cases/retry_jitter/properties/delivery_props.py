"""However the jitter falls, the retries of one delivery end within its deadline (or the
delivery is refused up front)."""

from hypothesis import strategies as st

import witness_gate
from delivery import DEADLINE_S, backoff_schedule

deliveries = st.fixed_dictionaries({"endpoint": st.sampled_from(["/hooks/orders", "/hooks/refunds", "/hooks/stock"]),
                                    "event": st.integers(1, 10**6), "attempts": st.integers(1, 8)})


@witness_gate.property(payloads=deliveries)
def prop_retries_end_within_the_deadline(delivery: dict) -> bool:
    try:
        waits = backoff_schedule(delivery["attempts"])
    except ValueError:
        return True  # refused before the first attempt: no deadline to miss
    return sum(waits) <= DEADLINE_S
