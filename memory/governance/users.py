"""Finding users by id prefix (admins): mnemo keeps no user table, so a user is known by the Redis keys
held under their prefix (`memory/keys.py`): session state, long-term bookkeeping (every user with
long-term memories has `ltm:version`), rate-limit log, records of retried requests.

One SCAN over the keyspace with a pattern naming the prefix, never KEYS: on a Redis Cluster the client
scans every master in turn (`scan_iter`), and a user's keys share one slot, so each user is met on one
node only. The scan reads the whole keyspace (cost grows with the number of keys, not of users found);
it stops early once `cap` distinct users were seen.
"""

from __future__ import annotations

from dataclasses import dataclass

from memory import keys
from memory.redis_client import RedisClient

SCAN_PAGE = 1000
FIND_CAP = 1000


@dataclass(frozen=True, slots=True)
class FoundUsers:
    users: list[str]  # sorted, at most the limit asked for
    more: bool  # more users have this prefix than were returned


class UserDirectory:
    def __init__(self, redis: RedisClient, *, cap: int = FIND_CAP) -> None:
        self._redis = redis
        self._cap = cap

    async def find(self, prefix: str, limit: int) -> FoundUsers:
        """Users whose id starts with `prefix` (case-sensitive, as ids are), first `limit` in id order."""
        seen: set[str] = set()
        async for raw in self._redis.scan_iter(match=keys.users_pattern(prefix), count=SCAN_PAGE):
            user = keys.user_of(raw.decode() if isinstance(raw, bytes) else str(raw))
            if user is not None and user.startswith(prefix):
                seen.add(user)
                if len(seen) >= self._cap:
                    break
        ordered = sorted(seen)
        return FoundUsers(users=ordered[:limit], more=len(ordered) > limit)
