"""A user's writes embed before taking the user's lock (issue 45): two import batches of one user on
two workers embed side by side; the lock covers the checks, supersession and the upsert only."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.settings import Settings
from memory import ChromaLongTermStore, Embedder
from memory.embedding.base import Vectors
from memory.longterm.versions import LtmVersions
from memory.models import Message
from memory.write.policy import WritePipeline, WritePolicy
from tests.conftest import redis_of
from tests.integration.test_keyword_updates import store_for

pytestmark = pytest.mark.integration


class RecordingEmbedder:
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


async def test_a_write_embeds_while_another_write_of_the_user_holds_the_lock(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    store = store_for(settings, ChromaLongTermStore)
    recording = RecordingEmbedder(embedder)
    writer = WritePipeline(store, recording, redis, LtmVersions(redis), WritePolicy(lock_wait_seconds=60))
    messages = [
        Message("user", "I live in Lisbon now and work on the billing service", id="i1"),
        Message("user", "我现在住在杭州，在一家银行做数据分析", id="i2"),
    ]
    try:
        async with writer.user_lock("ivy"):  # another batch of the same user, mid-write
            task = asyncio.create_task(writer.write("ivy", "s1", messages))
            for _ in range(400):  # the embedding does not wait for the lock
                if len(recording.texts) >= 2:
                    break
                await asyncio.sleep(0.05)
            embedded_under_other_lock = list(recording.texts)
            assert len(embedded_under_other_lock) >= 2
            assert not task.done()  # the write itself waits for the lock
            assert await store.get("ivy") == []
        written = await asyncio.wait_for(task, timeout=60)
        assert sorted(m.source_message_ids for m in written) == [("i1",), ("i2",)]
        assert {m.id for m in await store.get("ivy")} == {m.id for m in written}
        # the vectors made before the lock are the ones stored: nothing embedded twice
        assert recording.texts == embedded_under_other_lock
        hits = await store.nearest("ivy", await embedder.embed(["where do I live 住在哪"]), n_results=2)
        assert {m.id for m, _ in hits[0]} == {m.id for m in written}
    finally:
        await redis.aclose()
