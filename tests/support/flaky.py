"""A realistic flake for tests: an A/B promotion drawn from the global `random` module.

Bucket B of the experiment takes a flat 5 off without flooring the total at zero, so a
small cart goes negative in about 40% of calls. The runner seeds `random` per call from
the lock's schedule, so the same lock replays it with the same counts on every machine.
"""

from __future__ import annotations

FLAKY_ASSERTION = "prop_sometimes"

_SOURCE = """
import random

from hypothesis import strategies as st

import witness_gate


def promoted_total(cart_total):
    if random.random() < 0.4:  # experiment bucket B: a flat discount, forgets the floor
        return cart_total - 5
    return max(cart_total - 5, 0)


@witness_gate.property(payloads=st.fixed_dictionaries({"n": st.integers(0, 100)}))
def prop_sometimes(payload):
    return promoted_total(payload["n"]) >= 0
"""


def flaky_property_source() -> str:
    """The source of a property module defining `prop_sometimes`."""
    return _SOURCE
