"""Recall's query vector is reused by the writer that stores the same text: one inference, not two."""

from __future__ import annotations

import base64
from collections.abc import Sequence

import numpy as np
import pytest

from app.composition import build_memory_service, build_store
from app.settings import Settings
from memory import Embedder, keys
from memory.embedding.base import Vectors
from memory.models import Message
from tests.conftest import redis_of

pytestmark = pytest.mark.integration


class CountingEmbedder:
    """The real model, recording every text it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.texts: list[str] = []

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return await self._inner.embed(texts)


@pytest.mark.parametrize(
    "said", ["我对花生过敏，海鲜也不能吃。", "My sister Anna is a nurse in Porto."], ids=["zh", "en"]
)
async def test_the_writer_takes_the_vector_recall_computed(
    settings: Settings, embedder: Embedder, said: str
) -> None:
    redis = redis_of(settings)
    counting = CountingEmbedder(embedder)
    service = build_memory_service(settings, build_store(settings, redis), counting, redis)
    try:
        await service.ingest("kim", "s1", [Message("user", "我住在杭州 I live in Hangzhou", id="m0")])
        await service.search("kim", said, top_k=3)  # the chat turn's recall
        assert counting.texts.count(said) == 1
        written = await service.ingest("kim", "s2", [Message("user", said, id="m1")])
        assert counting.texts.count(said) == 1  # the writer did not embed it again
        _, stored = await service._store.get_with_vectors("kim", [written[0].id])
        fresh = await embedder.embed([said])
        assert float(stored[0] @ fresh[0]) > 0.9999
    finally:
        await redis.aclose()


async def test_text_with_pii_is_never_published(settings: Settings, embedder: Embedder) -> None:
    redis = redis_of(settings)
    counting = CountingEmbedder(embedder)
    service = build_memory_service(settings, build_store(settings, redis), counting, redis)
    try:
        await service.ingest("lee", "s1", [Message("user", "我住在杭州 I live in Hangzhou", id="m0")])
        for query in ("我的手机是13812345678", "mail me at lee@example.com", "where do I live?"):
            await service.search("lee", query, top_k=3)
        published = [k async for k in redis.scan_iter(match=f"{keys.user_prefix('lee')}:vec:*")]
        assert len(published) == 1  # only the query without PII
        raw = await redis.get(published[0])
        assert raw is not None
        assert np.frombuffer(base64.b64decode(raw), dtype=np.float32).shape == (384,)
        assert 0 < await redis.ttl(published[0]) <= 300
    finally:
        await redis.aclose()
