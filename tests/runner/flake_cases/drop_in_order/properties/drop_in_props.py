"""The newest settings update wins.

Catches `drop_in_settings` reading its drop-in directory newest first, as a tmpfs lists it:
wherever a directory lists in another order (ext4, overlayfs on ext4), an older update of
the same setting wins on about half the calls with two updates.
"""

from hypothesis import strategies as st

import witness_gate
from drop_in_settings import effective_settings

DEFAULTS = {"timeout_s": 30, "retries": 3, "region": "eu-west-1"}
_updates = st.lists(
    st.dictionaries(st.sampled_from(sorted(DEFAULTS)), st.integers(min_value=1, max_value=9), min_size=1),
    max_size=2,
)


@witness_gate.property(payloads=_updates)
def prop_the_newest_update_wins(updates: list) -> bool:
    expected = dict(DEFAULTS)
    for update in updates:
        expected.update(update)
    return effective_settings(DEFAULTS, updates) == expected
