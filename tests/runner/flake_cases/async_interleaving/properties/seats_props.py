"""No seat is promised to two customers."""

from hypothesis import strategies as st

import witness_gate
from seats import book_all

requests = st.lists(st.lists(st.sampled_from(["12A", "12B", "14C"]), min_size=1, max_size=1), min_size=2, max_size=5)


@witness_gate.property(payloads=requests)
def prop_a_seat_is_promised_once(requests: list) -> bool:
    pairs = [(seat, f"customer-{index}") for index, [seat] in enumerate(requests)]
    seats, confirmed = book_all(pairs)
    promised = [seat for (seat, _), ok in zip(pairs, confirmed) if ok]
    return len(promised) == len(set(promised))
