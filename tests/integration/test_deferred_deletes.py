"""Deletes answer before Chroma applies them: hidden from every read at once, purged right after, and
finished by a writer's sweep when the purge could not run (Chroma down, the API worker gone)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from app.composition import build_memory_service, chroma_client_factory
from app.settings import Settings
from memory import ChromaLongTermStore, Embedder, keys
from memory.errors import MemoryNotFound, StoreUnavailable
from memory.governance.export import UserExport
from memory.longterm.deferred_deletes import DeferredDeleteStore, PurgeSweeper
from memory.longterm.purges import Purges
from memory.models import Memory, Message, SearchFilters
from memory.outbox.stream import Outbox
from memory.session.store import SessionLimits, SessionStore
from tests.conftest import redis_of

pytestmark = pytest.mark.integration

FACTS = [
    Message("user", "我对花生过敏，记住这个。", id="d1", timestamp=1000),
    Message("user", "My sister Anna lives in Porto.", id="d2", timestamp=1001),
]


class GatedStore(ChromaLongTermStore):
    """The real store whose deletes wait for the test to open `gate` (a Chroma server busy with the
    writers' upserts), or fail while `down` is set (a Chroma outage)."""

    gate: asyncio.Event
    down: bool
    deletes: int
    gets: int

    async def get(
        self, user_id: str, *, ids: Sequence[str] | None = None, include_content: bool = True
    ) -> list[Memory]:
        self.gets += 1
        return await super().get(user_id, ids=ids, include_content=include_content)

    async def delete(self, user_id: str, ids: Sequence[str]) -> None:
        if self.down:
            raise StoreUnavailable("chroma", "down for the test")
        await self.gate.wait()
        self.deletes += 1
        await super().delete(user_id, ids)


def gated(settings: Settings) -> GatedStore:
    store = GatedStore(
        chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
    )
    store.gate, store.down, store.deletes, store.gets = asyncio.Event(), False, 0, 0
    return store


async def test_a_delete_answers_before_chroma_and_every_read_hides_it(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    inner = gated(settings)
    store = DeferredDeleteStore(inner, Purges(redis))
    service = build_memory_service(settings, store, embedder, redis)
    user = "dora"
    try:
        allergy, sister = await service.ingest(user, "s1", FACTS)
        await service.search(user, "我对什么过敏？", top_k=3)  # a warm index, as in a serving worker
        gets = inner.gets
        await asyncio.wait_for(service.delete(user, allergy.id), timeout=5)  # Chroma has not deleted
        assert inner.gets == gets  # the worker's current index knew the memory: no store read either
        assert {m.id for m in await inner.get(user)} == {allergy.id, sister.id}

        # every read path of the services
        assert [m.id for m in (await service.list(user, limit=10, offset=0, sort="recent")).items] == [
            sister.id
        ]
        assert await service.get(user, [allergy.id, sister.id]) == [sister]
        for query in ("我对什么过敏？", "What am I allergic to?"):
            assert allergy.id not in [h.memory.id for h in await service.search(user, query, top_k=3)]
        cold = build_memory_service(settings, store, embedder, redis)  # another worker, index built now
        assert allergy.id not in [h.memory.id for h in await cold.search(user, "花生", top_k=3)]
        assert [m.id for m in await store.get(user, include_content=False)] == [sister.id]
        assert await store.count(user) == 1
        memories, vectors = await store.get_with_vectors(user)
        assert [m.id for m in memories] == [sister.id]
        assert len(vectors) == 1
        assert set(await store.embeddings(user, [allergy.id, sister.id])) == {sister.id}
        assert await store.find_by_hashes(user, [allergy.content_hash]) == []
        [near] = await store.nearest(user, await embedder.embed([allergy.content]), n_results=1)
        assert [m.id for m, _ in near] == [sister.id]
        [qvec] = await embedder.embed(["peanut 花生"])
        hits = await store.query(user, qvec.tolist(), n_results=2, filters=SearchFilters())
        assert [m.id for m, _ in hits] == [sister.id]
        sessions = SessionStore(redis, SessionLimits())
        export = UserExport(store, sessions, Outbox(redis))
        exported = [m.id async for page in export.memories(user) for m in page]
        assert exported == [sister.id]
        with pytest.raises(MemoryNotFound):  # deleting it again is a 404
            await service.delete(user, allergy.id)

        inner.gate.set()  # Chroma gets to the delete
        await store.settle()
        assert [m.id for m in await inner.get(user)] == [sister.id]
        assert await store.purges.hidden(user) == frozenset()
        assert await redis.zscore(keys.purge_queue_of(user), user) is None
    finally:
        inner.gate.set()
        await store.settle()
        await redis.aclose()


async def test_a_purge_chroma_refused_is_finished_by_the_sweep(
    settings: Settings, embedder: Embedder
) -> None:
    """Chroma down when the delete is asked: the delete still answers (the memory is hidden), the
    purge is left queued, and the sweep of a writer holding the user's partition finishes it once Chroma
    is back: not before the grace period, and not for partitions it does not hold."""
    redis = redis_of(settings)
    inner = gated(settings)
    inner.gate.set()
    store = DeferredDeleteStore(inner, Purges(redis))
    service = build_memory_service(settings, store, embedder, redis)
    user = "dino"
    try:
        allergy, sister = await service.ingest(user, "s1", FACTS)
        inner.down = True
        await service.delete(user, allergy.id)
        await store.settle()
        assert inner.deletes == 0
        assert [m.id for m in (await service.list(user, limit=10, offset=0, sort="recent")).items] == [
            sister.id
        ]
        assert await redis.zscore(keys.purge_queue_of(user), user) is not None

        mine = keys.partition_of(user)
        other = (mine + 1) % keys.partitions()
        assert await PurgeSweeper(store, lambda: [mine], grace_seconds=0).sweep() == 0  # still down
        inner.down = False
        assert await PurgeSweeper(store, lambda: [mine], grace_seconds=600).sweep() == 0  # too recent
        assert await PurgeSweeper(store, lambda: [other], grace_seconds=0).sweep() == 0  # not its partition
        assert inner.deletes == 0
        assert await PurgeSweeper(store, lambda: [mine], grace_seconds=0).sweep() == 1
        assert [m.id for m in await inner.get(user)] == [sister.id]
        assert await store.purges.hidden(user) == frozenset()
        assert await redis.zscore(keys.purge_queue_of(user), user) is None
    finally:
        await redis.aclose()


async def test_a_crashed_worker_leaves_the_purge_to_a_writer(settings: Settings, embedder: Embedder) -> None:
    """The API worker hid the ids and died before its purge ran: another process's sweep deletes them,
    and ids hidden after the sweep read its list stay queued for the next pass."""
    redis = redis_of(settings)
    plain = ChromaLongTermStore(
        chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
    )
    service = build_memory_service(settings, plain, embedder, redis)
    user = "dirk"
    try:
        allergy, sister = await service.ingest(user, "s1", FACTS)
        purges = Purges(redis)
        await purges.hide(user, [allergy.id])  # what the dead worker got done
        writer_side = DeferredDeleteStore(plain, purges)
        assert (
            await PurgeSweeper(writer_side, lambda: [keys.partition_of(user)], grace_seconds=0).sweep() == 1
        )
        assert [m.id for m in await plain.get(user)] == [sister.id]

        await purges.hide(user, [sister.id])
        assert await purges.finish(user, []) == 1  # a purge that read nothing leaves the later id queued
        assert await redis.zscore(keys.purge_queue_of(user), user) is not None
        assert await writer_side.purge(user) == 1
        assert await plain.get(user) == []
        assert await redis.zscore(keys.purge_queue_of(user), user) is None
    finally:
        await redis.aclose()
