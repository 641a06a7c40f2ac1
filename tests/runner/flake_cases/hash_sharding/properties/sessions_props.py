"""Every session survives a migration."""

from hypothesis import strategies as st

import witness_gate
from sessions import ShardedSessions

keys = st.lists(st.sampled_from(["sess-a1", "sess-b7", "sess-c3", "sess-d9", "sess-e2"]), min_size=1, max_size=3, unique=True)


@witness_gate.property(payloads=keys)
def prop_sessions_survive_migration(keys: list) -> bool:
    store = ShardedSessions()
    for key in keys:
        store.put(key, {"user": key.upper()})
    moved = store.migrate()
    return all(moved.get(key) == {"user": key.upper()} for key in keys)
