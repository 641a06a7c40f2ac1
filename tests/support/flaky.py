"""A deterministic flake for tests: it fails in every other process.

The first call in each process decides, from a counter kept in a file outside the
process, whether this process fails. A gate run's search process (count 0) fails and
retains a witness; its five replay forks (counts 1..5) fail on 2 and 4: 2 of 5.
"""

from __future__ import annotations

from pathlib import Path

_SOURCE = '''
import fcntl
from hypothesis import strategies as st
import witness_gate

_decision = None

def _this_process_fails():
    global _decision
    if _decision is None:
        with open({counter!r}, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            count = int(handle.read() or 0)
            handle.seek(0); handle.truncate(); handle.write(str(count + 1))
        _decision = count % 2 == 0
    return _decision

@witness_gate.property(payloads=st.fixed_dictionaries({{"n": st.integers(0, 100)}}))
def prop_sometimes(payload):
    return not (payload["n"] >= 7 and _this_process_fails())
'''


def flaky_property_source(counter: Path) -> str:
    """The source of a property module defining `prop_sometimes`, counting in `counter`."""
    return _SOURCE.format(counter=str(counter))
