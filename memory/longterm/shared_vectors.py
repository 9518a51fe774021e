"""Embeddings computed on the chat path, handed to the long-term writer through Redis.

A chat turn embeds the user's message to recall memories; a moment later the writer embeds the same
message to store it. On 2 cores that second inference was the writer's largest cost per turn. Recall
now publishes its query vector under the user's prefix (`mnemo:{user}:vec:<model>:<digest>`, a few
minutes' TTL) and the writer takes it from there when the text it is about to embed is exactly the
text recall embedded; anything else is embedded as before. Correct by construction: the key is a
digest of the exact text, and of the embedding model.

Only text that long-term memory would store unchanged is published (no PII found, nothing cleaned
away): a vector of text containing PII never reaches Redis. Redis failures only cost the shortcut.
"""

from __future__ import annotations

import base64
import hashlib
import logging
from collections.abc import Sequence

import numpy as np
from redis.exceptions import RedisError

from memory import keys
from memory.embedding.base import Vectors
from memory.redis_client import RedisClient
from memory.text.privacy import sanitize

log = logging.getLogger(__name__)


class SharedVectors:
    def __init__(self, redis: RedisClient, model: str, *, ttl_seconds: int = 300) -> None:
        """`model` names the embedding model (backend and file): vectors of another model never match."""
        self._redis = redis
        self._model = hashlib.blake2b(model.encode(), digest_size=6).hexdigest()
        self.model_tag = self._model  # names the model (an index snapshot's fingerprint)
        self._ttl = ttl_seconds

    def _key(self, user_id: str, text: str) -> str:
        digest = hashlib.blake2b(text.encode(), digest_size=16).hexdigest()
        return keys.shared_vector(user_id, self._model, digest)

    async def publish(self, user_id: str, text: str, vector: Vectors) -> None:
        """Publish only text long-term memory stores unchanged: nothing else could match, and a
        vector of text with PII must not reach Redis."""
        if sanitize(text) != text:
            return
        try:
            raw = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()
            await self._redis.set(self._key(user_id, text), raw, ex=self._ttl)
        except (RedisError, OSError) as exc:
            log.debug("shared vector not published", extra={"reason": str(exc)})

    async def publish_many(self, user_id: str, texts: Sequence[str], vectors: Vectors) -> None:
        """`publish` for several texts of one user in one round trip (the writer hands the bridge
        vectors it computed to the readers that will rank those memories next)."""
        rows = [(t, v) for t, v in zip(texts, vectors, strict=True) if sanitize(t) == t]
        if not rows:
            return
        try:
            async with self._redis.pipeline(transaction=False) as pipe:
                for text, vector in rows:
                    raw = base64.b64encode(np.asarray(vector, dtype=np.float32).tobytes()).decode()
                    pipe.set(self._key(user_id, text), raw, ex=self._ttl)
                await pipe.execute()
        except (RedisError, OSError) as exc:
            log.debug("shared vectors not published", extra={"reason": str(exc)})

    async def fetch(self, user_id: str, texts: Sequence[str], dimension: int) -> dict[int, Vectors]:
        """Positions of `texts` with a published vector of this model, and those vectors."""
        if not texts:
            return {}
        try:
            raws = await self._redis.mget([self._key(user_id, t) for t in texts])
        except (RedisError, OSError) as exc:
            log.debug("shared vectors not fetched", extra={"reason": str(exc)})
            return {}
        out: dict[int, Vectors] = {}
        for i, raw in enumerate(raws):
            if raw:
                vector = np.frombuffer(base64.b64decode(raw), dtype=np.float32)
                if vector.shape == (dimension,):
                    out[i] = vector
        return out
