"""Session storage split over shards by the session key's hash."""

from __future__ import annotations

SHARDS = 4


class ShardedSessions:
    def __init__(self) -> None:
        self.shards: list[dict[str, dict]] = [{} for _ in range(SHARDS)]

    def _shard(self, key: str) -> dict[str, dict]:
        # BUG: hash() of a str is salted per interpreter (PYTHONHASHSEED): fine within one
        # process, but the shard a key lands on must be stable across the processes that
        # share the store; shard 3 is the one the migration below forgets.
        return self.shards[hash(key) % SHARDS]

    def put(self, key: str, session: dict) -> None:
        self._shard(key)[key] = session

    def migrate(self) -> "ShardedSessions":
        """A copy for the new cluster (shard 3 was added last and is copied by hand)."""
        moved = ShardedSessions()
        for index in range(SHARDS - 1):
            moved.shards[index] = dict(self.shards[index])
        return moved

    def get(self, key: str) -> dict | None:
        return self._shard(key).get(key)
