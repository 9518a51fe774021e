"""What a request with an Idempotency-Key answered, so that a client's retry is not done twice.

A client that lost an answer (a timeout, a 5xx, a dropped connection) retries with the same key and
gets the recorded answer instead of a second turn. A record holds the request's fingerprint (a digest
of what was asked, so the same key with another request is refused) and a JSON payload the caller
chose, under `mnemo:{user}:idem:<digest of the key>` for `ttl_seconds`. The chat turn writes its record
in the transaction that commits the turn, so a turn is recorded exactly when it is committed. Records
hold only what Redis may hold anyway (redacted text); an erase deletes them with the user's other keys.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from memory import keys
from memory.errors import IdempotencyConflict
from memory.redis_client import RedisClient

log = logging.getLogger(__name__)
MAX_KEY_LENGTH = 255


@dataclass(frozen=True, slots=True)
class IdempotencyKey:
    key: str  # the client's Idempotency-Key
    fingerprint: str  # a digest of the request it was sent with

    @property
    def digest(self) -> str:
        return hashlib.blake2b(self.key.encode(), digest_size=16).hexdigest()


def fingerprint(*parts: object) -> str:
    """A stable digest of a request's parts (JSON-encodable values)."""
    canonical = json.dumps(parts, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.blake2b(canonical.encode(), digest_size=20).hexdigest()


class IdempotencyRecords:
    def __init__(self, redis: RedisClient, *, ttl_seconds: int = 3600) -> None:
        self._redis = redis
        self.ttl_seconds = ttl_seconds

    def redis_key(self, user_id: str, idem: IdempotencyKey) -> str:
        return keys.idempotency(user_id, idem.digest)

    def encode(self, idem: IdempotencyKey, payload: dict[str, Any]) -> str:
        return json.dumps({"fp": idem.fingerprint, "payload": payload}, ensure_ascii=False)

    async def get(self, user_id: str, idem: IdempotencyKey) -> dict[str, Any] | None:
        """The recorded payload, None when nothing is recorded; IdempotencyConflict when the key was
        recorded for a different request."""
        raw = await self._redis.get(self.redis_key(user_id, idem))
        if raw is None:
            return None
        try:
            record = json.loads(raw)
            recorded_fp, payload = str(record["fp"]), record["payload"]
        except (ValueError, KeyError, TypeError):
            log.warning("unreadable idempotency record ignored")
            return None
        if recorded_fp != idem.fingerprint:
            raise IdempotencyConflict()
        return payload if isinstance(payload, dict) else None

    async def put(self, user_id: str, idem: IdempotencyKey, payload: dict[str, Any]) -> None:
        """Record, unless a record is there already (the first answer stays the answer)."""
        await self._redis.set(
            self.redis_key(user_id, idem), self.encode(idem, payload), ex=self.ttl_seconds, nx=True
        )
