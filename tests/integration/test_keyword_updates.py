"""Keyword indexes follow writes through the version change log instead of being rebuilt."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import redis.asyncio as aredis

from app.lifespan import chroma_client_factory
from app.settings import Settings
from memory import ChromaLongTermStore, Embedder, keys
from memory.embeddings import Vectors
from memory.keyword_index import KeywordIndexCache
from memory.models import Memory, Message
from memory.retrieval import HybridRetriever
from memory.service import MemoryService
from memory.tombstones import Tombstones
from memory.versions import LtmVersions
from memory.write_policy import WritePipeline

pytestmark = pytest.mark.integration


class CountingStore(ChromaLongTermStore):
    """The real store, recording which ids each index load asked for (None: everything)."""

    loads: list[list[str] | None]

    async def get_with_vectors(
        self, user_id: str, ids: Sequence[str] | None = None
    ) -> tuple[list[Memory], Vectors]:
        self.loads.append(None if ids is None else list(ids))
        return await super().get_with_vectors(user_id, ids)


async def test_versions_log_what_changed(settings: Settings) -> None:
    redis = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    versions = LtmVersions(redis)
    try:
        v1 = await versions.bump("ann", upserted=["a", "b"])
        v2 = await versions.bump("ann", deleted=["a"])
        v3 = await versions.bump("ann", upserted=["c", "a"])
        assert 0 < v1 < v2 < v3 == await versions.get("ann")
        whole = await versions.changes("ann", 0, v3)
        assert whole is not None
        assert whole.upserted == {"a", "b", "c"}
        assert not whole.deleted
        tail = await versions.changes("ann", v1, v2)
        assert tail is not None
        assert not tail.upserted
        assert tail.deleted == {"a"}
        assert await versions.changes("ann", v1 + 1, v3) is None  # not a version we logged
        # an erase deletes the counter and the log; later versions still exceed every old one
        await redis.delete(keys.ltm_version("ann"), keys.ltm_changes("ann"))
        v4 = await versions.bump("ann", upserted=["z"])
        assert v4 > v3
        assert await versions.changes("ann", v3, v4) is None  # the chain is broken: rebuild
    finally:
        await redis.aclose()


async def test_two_workers_update_their_indexes_from_the_log(settings: Settings, embedder: Embedder) -> None:
    redis = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
    store = CountingStore(
        chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
    )
    store.loads = []
    versions = LtmVersions(redis)
    writer = WritePipeline(store, embedder, redis, versions)

    def worker() -> MemoryService:
        retriever = HybridRetriever(store, embedder, versions, KeywordIndexCache())
        return MemoryService(
            store,
            embedder,
            writer=writer,
            retriever=retriever,
            versions=versions,
            tombstones=Tombstones(redis),
        )

    a, b = worker(), worker()
    try:
        await a.ingest("gus", "s1", [Message("user", "我住在杭州，在银行上班", id="1")])
        for w in (a, b):
            assert (await w.search("gus", "杭州", top_k=3))[0].memory.content.startswith("我住在杭州")
        assert store.loads == [None, None]  # each worker built its index once

        store.loads.clear()
        new = await b.ingest("gus", "s1", [Message("user", "My sister Anna lives in Porto", id="2")])
        for w in (a, b):
            hits = await w.search("gus", "Where does Anna live?", top_k=3)
            assert hits[0].memory.id == new[0].id
        assert store.loads == [[new[0].id], [new[0].id]]  # only the new memory was fetched

        store.loads.clear()
        await a.delete("gus", new[0].id)  # a drops its own cache; b follows the log
        for w in (a, b):
            hits = await w.search("gus", "Where does Anna live?", top_k=3)
            assert new[0].id not in [h.memory.id for h in hits]
        assert store.loads == [None, []]  # a rebuilt after its own delete; b fetched nothing
    finally:
        await redis.aclose()
