"""Keyword indexes follow writes through the version change log instead of being rebuilt."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

import pytest

from app.composition import build_memory_service, chroma_client_factory
from app.settings import Settings
from memory import ChromaLongTermStore, Embedder, keys
from memory.embedding.base import Vectors
from memory.errors import MemoryBusy
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import MAX_LOGGED_RECORDS, LtmVersions
from memory.models import Memory, Message, SearchFilters
from memory.write.policy import WritePipeline, WritePolicy, WriteRequest
from tests.conftest import redis_of

pytestmark = pytest.mark.integration


class CountingStore(ChromaLongTermStore):
    """The real store, recording which ids each index load asked for (None: everything), and its
    duplicate checks and dense queries (`checks`)."""

    loads: list[list[str] | None]
    checks: list[str]

    async def find_by_hashes(self, user_id: str, hashes: Sequence[str]) -> list[Memory]:
        self.checks.append("find_by_hashes")
        return await super().find_by_hashes(user_id, hashes)

    async def nearest(
        self, user_id: str, embeddings: Vectors, *, n_results: int = 1, model: str | None = None
    ) -> list[list[tuple[Memory, float]]]:
        self.checks.append("nearest")
        return await super().nearest(user_id, embeddings, n_results=n_results, model=model)

    async def query(
        self, user_id: str, embedding: Sequence[float], **options: Any
    ) -> list[tuple[Memory, float]]:
        self.checks.append("query")
        return await super().query(user_id, embedding, **options)

    async def get_with_vectors(
        self, user_id: str, ids: Sequence[str] | None = None
    ) -> tuple[list[Memory], Vectors]:
        self.loads.append(None if ids is None else list(ids))
        return await super().get_with_vectors(user_id, ids)

    async def query_with_vectors(
        self,
        user_id: str,
        embedding: Sequence[float],
        *,
        n_results: int,
        filters: SearchFilters,
        model: str | None = None,
        user_rows: int | None = None,
    ) -> tuple[list[tuple[Memory, float]], Vectors]:
        self.loads.append(["nearest with vectors"])
        return await super().query_with_vectors(
            user_id, embedding, n_results=n_results, filters=filters, model=model, user_rows=user_rows
        )


S = TypeVar("S", bound=ChromaLongTermStore)


def store_for(settings: Settings, kind: type[S], shards: int = 2) -> S:
    """The real store on the test's Chroma, with a few shards (several users share a collection)."""
    return kind(
        chroma_client_factory(settings), shards=shards, collection_prefix=settings.chroma_collection_prefix
    )


async def test_versions_log_what_changed(settings: Settings) -> None:
    redis = redis_of(settings)
    versions = LtmVersions(redis)
    try:
        v1 = await versions.bump("ann", upserted=["a", "b"])
        v2 = await versions.bump("ann", upserted=["c"])
        assert 0 < v1 < v2 == await versions.get("ann")
        both = await versions.changes("ann", 0, v2)
        assert both is not None
        assert both.upserted == {"a", "b", "c"}
        assert not both.deleted
        assert await versions.changes("ann", v1 + 1, v2) is None  # not a version we logged
        # a delete clears the log (it carries written text), so only the step across it is known
        v3 = await versions.bump("ann", deleted=["a"])
        assert await versions.changes("ann", v1, v3) is None
        tail = await versions.changes("ann", v2, v3)
        assert tail is not None
        assert not tail.upserted
        assert tail.deleted == {"a"}
        # an erase deletes the counter and the log; later versions still exceed every old one
        await redis.delete(keys.ltm_version("ann"), keys.ltm_changes("ann"))
        v4 = await versions.bump("ann", upserted=["z"])
        assert v4 > v3
        assert await versions.changes("ann", v3, v4) is None  # the chain is broken: rebuild
    finally:
        await redis.aclose()


async def test_two_workers_update_their_indexes_from_the_log(settings: Settings, embedder: Embedder) -> None:
    redis = redis_of(settings)
    store = store_for(settings, CountingStore)
    store.loads = []
    # two workers as the app builds them: each with its own keyword-index cache
    a, b = (build_memory_service(settings, store, embedder, redis) for _ in range(2))
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
        assert store.loads == []  # the change log carried the new memory: no store read at all

        store.loads.clear()
        await a.delete("gus", new[0].id)  # a drops its own cache; b follows the log
        for w in (a, b):
            hits = await w.search("gus", "Where does Anna live?", top_k=3)
            assert new[0].id not in [h.memory.id for h in hits]
        assert store.loads == [None]  # a rebuilt after its own delete; b followed the log
    finally:
        await redis.aclose()


async def test_the_log_carries_written_records_and_a_delete_clears_them(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    store = store_for(settings, ChromaLongTermStore)
    versions = LtmVersions(redis)
    writer = WritePipeline(store, embedder, redis, versions)
    try:
        before = await versions.get("hal")
        written = await writer.write("hal", "s1", [Message("user", "我对花生过敏 peanut allergy", id="p")])
        after = await versions.get("hal")
        changes = await versions.changes("hal", before, after)
        assert changes is not None
        memory, vector = changes.records[written[0].id]
        assert memory.content == written[0].content
        assert memory.source_message_ids == ("p",)
        stored, stored_vectors = await store.get_with_vectors("hal", [written[0].id])
        assert float(vector @ stored_vectors[0]) > 0.999  # float16 in the log, float32 in Chroma
        await versions.bump("hal", deleted=[written[0].id])
        raw = await redis.xrange(keys.ltm_changes("hal"))
        assert raw
        assert all("花生" not in str(fields) for _, fields in raw)  # the deleted text left the log
        assert 0 < await redis.pttl(keys.ltm_changes("hal")) <= 15 * 60 * 1000
    finally:
        await redis.aclose()


async def test_a_big_write_is_logged_as_ids_and_its_writer_keeps_the_records(
    settings: Settings, embedder: Embedder
) -> None:
    """A write of more memories than the log carries (an import's round) is logged as ids: a worker of
    another process reads those memories from the store; the process that wrote them takes them from
    what it wrote (each import round read its own previous round back from Chroma, issue 45), and
    both indexes then rank alike."""
    redis = redis_of(settings)
    store = store_for(settings, CountingStore)
    store.loads = []
    writer, other = (build_memory_service(settings, store, embedder, redis) for _ in range(2))
    facts = [f"Fact {i}: my locker number at the gym {i} is {1000 + i}." for i in range(40)]
    facts += [f"第{i}条：我在第{i}号健身房的柜子号码是{2000 + i}。" for i in range(8)]
    try:
        await writer.ingest("jo", "s1", [Message("user", "I moved to Lisbon.", id="first")])
        for w in (writer, other):
            await w.search("jo", "Lisbon", top_k=3)
        assert store.loads == [None, None]
        store.loads.clear()
        versions = writer._versions  # noqa: SLF001 - the writer's own (this process's) versions
        assert versions is not None
        before = await versions.get("jo")
        big = await writer.ingest("jo", "s2", [Message("user", f, id=f"f{i}") for i, f in enumerate(facts)])
        assert len(big) > MAX_LOGGED_RECORDS
        after = await versions.get("jo")
        logged = await LtmVersions(redis).changes("jo", before, after)  # another process's view
        assert logged is not None
        assert not logged.records  # ids only
        assert logged.upserted == {m.id for m in big}
        mine = await versions.changes("jo", before, after)
        assert mine is not None
        assert set(mine.records) == {m.id for m in big}
        stored, _ = await store.get_with_vectors("jo", [big[0].id])
        kept = mine.records[big[0].id][0]  # as the store gives it back (Chroma rounds a float's last digit)
        assert dataclasses.replace(kept, created_at=stored[0].created_at) == stored[0]
        assert abs(kept.created_at - stored[0].created_at) < 1e-3
        store.loads.clear()
        answers = {}
        for name, w in (("writer", writer), ("other", other)):
            hits = await w.search("jo", "What is my locker number at gym 7? 第3号健身房的柜子号码", top_k=5)
            answers[name] = [(h.memory.id, round(h.score, 6)) for h in hits]
        assert answers["writer"] == answers["other"]
        assert len(store.loads) == 1  # only the other process read the written memories back
        assert sorted(store.loads[0] or []) == sorted(m.id for m in big)
    finally:
        await redis.aclose()


async def test_a_writer_that_does_not_search_drops_a_user_past_the_limit(
    settings: Settings, embedder: Embedder
) -> None:
    """The writer process (`searches=False`) holds no index of a user past IN_PROCESS_INDEX_MAX: it
    checks their duplicates with the store, and does not build or follow their index again."""
    redis = redis_of(settings)
    store = store_for(settings, CountingStore)
    store.loads, store.checks = [], []
    writer = build_memory_service(
        settings.model_copy(update={"in_process_index_max": 3}), store, embedder, redis, searches=False
    )
    retriever = writer._retriever  # noqa: SLF001 - what this process holds
    assert retriever is not None
    cache = retriever.cache
    try:
        first = ["I live in Lisbon.", "我的牙医姓王。", "I drive a red Volvo.", "我每天早上跑步。"]
        await writer.ingest("kim", "s1", [Message("user", t, id=f"a{i}") for i, t in enumerate(first)])
        held = cache.latest("kim")
        assert held is None or len(held[1]) <= 3
        await writer.ingest("kim", "s2", [Message("user", "My cat is called Miso.", id="b0")])
        assert cache.latest("kim") is None  # past the limit: dropped, not kept current
        loads = len(store.loads)
        store.checks.clear()
        await writer.ingest("kim", "s3", [Message("user", "我每天早上跑步。", id="c0")])  # an exact duplicate
        assert cache.latest("kim") is None
        assert len(store.loads) == loads  # the index was not built again
        assert "find_by_hashes" in store.checks
        page = await writer.list("kim", limit=10, offset=0, sort="recent")
        assert sorted(tuple(sorted(m.source_message_ids)) for m in page.items if "跑步" in m.content) == [
            ("a3", "c0")
        ]
    finally:
        await redis.aclose()


@pytest.mark.parametrize("limit", [20_000, 0])
async def test_the_writer_checks_duplicates_against_its_index(
    settings: Settings, embedder: Embedder, limit: int
) -> None:
    """Exact and near duplicates (zh and en) merge the same way whether the worker's index answers
    (no store query at all) or, for users above the in-process limit, Chroma does."""
    redis = redis_of(settings)
    store = store_for(settings, CountingStore)
    store.loads, store.checks = [], []
    service = build_memory_service(
        settings.model_copy(update={"in_process_index_max": limit}), store, embedder, redis
    )
    user = f"ida{limit}"
    try:
        first = [
            Message("user", "我对花生过敏，记住这个。", id="z1", timestamp=1000),
            Message("user", "My favourite colour is deep blue.", id="e1", timestamp=1000),
        ]
        await service.ingest(user, "s1", first)
        again = [
            Message("user", "我对花生过敏，记住这个。", id="z2", timestamp=2000),  # exact
            Message("user", "My favourite colour is deep blue!!", id="e2", timestamp=2000),  # near
            Message("user", "我住在杭州", id="n1", timestamp=2000),  # new
        ]
        await service.ingest(user, "s2", again)
        page = await service.list(user, limit=10, offset=0, sort="recent")
        provenance = sorted(tuple(sorted(m.source_message_ids)) for m in page.items)
        assert provenance == [("e1", "e2"), ("n1",), ("z1", "z2")]
        merged = next(m for m in page.items if "e1" in m.source_message_ids)
        assert merged.content.endswith("!!")
        if limit:
            assert store.checks == []
            assert store.loads == [None]  # one index load for the first write; the log did the rest
        else:
            assert "find_by_hashes" in store.checks
            assert "nearest" in store.checks
    finally:
        await redis.aclose()


async def test_one_batched_write_for_several_users(settings: Settings, embedder: Embedder) -> None:
    """write_many gives each user what a single write gives: erase and tombstone checks, duplicate
    merging, its own version and change log; and its records land in the right user's shard."""
    redis = redis_of(settings)
    store = store_for(settings, ChromaLongTermStore, shards=4)
    versions = LtmVersions(redis)
    writer = WritePipeline(store, embedder, redis, versions)
    try:
        await writer.write(
            "amy", "s0", [Message("user", "我对花生过敏，记住这个。", id="a0", timestamp=1000)]
        )
        erased_at = await redis.time()
        await redis.set(keys.erased_marker("eve"), f"{erased_at[0]}.{erased_at[1]:06d}")
        before = {u: await versions.get(u) for u in ("amy", "ben", "eve")}
        results = await writer.write_many(
            [
                WriteRequest(
                    "amy", "s1", [Message("user", "我对花生过敏，记住这个。", id="a1", timestamp=2000)]
                ),
                WriteRequest("ben", "s1", [Message("user", "My sister Anna lives in Porto", id="b1")]),
                WriteRequest("eve", "s1", [Message("user", "I live in Lisbon", id="e1")], issued_at=1.0),
            ]
        )
        amy, ben, eve = results
        assert [m.source_message_ids for m in amy] == [("a0", "a1")]  # merged into the stored one
        assert [m.content for m in ben] == ["My sister Anna lives in Porto"]
        assert eve == []  # issued before the erase: dropped
        assert await versions.get("amy") > before["amy"]
        assert await versions.get("ben") > before["ben"]
        assert await versions.get("eve") == before["eve"]
        for user, memories in (("amy", amy), ("ben", ben)):
            stored = await store.get(user)
            assert [m.id for m in stored] == [m.id for m in memories]
        with pytest.raises(ValueError, match="one request per user"):
            await writer.write_many([WriteRequest("amy", "s", []), WriteRequest("amy", "t", [])])
    finally:
        await redis.aclose()


async def test_a_delete_does_not_wait_for_the_write_lock(settings: Settings, embedder: Embedder) -> None:
    """A writer round holds its users' locks until its upserts return; deletes do not queue behind it
    (locust saw DELETE p95 2.8 s while they did). A second write still waits, then gives up."""
    redis = redis_of(settings)
    store = store_for(settings, ChromaLongTermStore)
    service = build_memory_service(settings, store, embedder, redis)
    writer = WritePipeline(store, embedder, redis, LtmVersions(redis), WritePolicy(lock_wait_seconds=0.2))
    try:
        [kept] = await service.ingest("una", "s1", [Message("user", "我对花生过敏 peanut allergy", id="p1")])
        async with writer.user_lock("una"):  # a write in flight, holding the lock throughout
            await asyncio.wait_for(service.delete("una", kept.id), timeout=20)
            assert await store.get("una") == []
            # a second write gives up with MemoryBusy (409 memory_busy; the outbox retries it)
            with pytest.raises(MemoryBusy):
                await writer.write("una", "s2", [Message("user", "I live in Porto", id="p2")])
    finally:
        await redis.aclose()


class DeletesDuringUpsert(ChromaLongTermStore):
    """The real store; `during_upsert` runs once, after the write's checks and before its upsert lands:
    the moment a delete that does not wait for the lock can fall into."""

    during_upsert: Callable[[], Awaitable[None]] | None = None

    async def upsert(
        self, memories: Sequence[Memory], embeddings: Vectors, *, models: Mapping[str, str] | None = None
    ) -> None:
        hook, self.during_upsert = self.during_upsert, None
        if hook is not None:
            await hook()
        await super().upsert(memories, embeddings, models=models)


@pytest.mark.parametrize("limit", [20_000, 0], ids=["index", "store"])
async def test_a_delete_inside_a_merging_write_is_not_undone(
    settings: Settings, embedder: Embedder, limit: int
) -> None:
    """Write-then-delete order: the write merged a repeat into the memory, the delete removed it while
    the upsert was in flight; the upsert must not bring it back, not in the store, not in any index."""
    redis = redis_of(settings)
    store = store_for(settings, DeletesDuringUpsert)
    tuned = settings.model_copy(update={"in_process_index_max": limit})
    service = build_memory_service(tuned, store, embedder, redis)
    reader = build_memory_service(tuned, store, embedder, redis)  # another worker, with its own cache
    user = f"vic{limit}"
    try:
        [kept] = await service.ingest(user, "s1", [Message("user", "我住在波尔图 I live in Porto", id="v1")])
        assert [s.memory.id for s in await reader.search(user, "where do I live 住在哪", top_k=5)] == [
            kept.id
        ]

        async def delete_it() -> None:
            await service.delete(user, kept.id)

        store.during_upsert = delete_it
        written = await service.ingest(user, "s2", [Message("user", "我住在波尔图 I live in Porto", id="v2")])
        assert store.during_upsert is None, "the write did not reach its upsert"
        assert written == []  # merged into the memory the delete removed: gone with it
        assert await store.get(user) == []
        assert await reader.search(user, "where do I live 住在哪", top_k=5) == []
        assert await service.search(user, "where do I live 住在哪", top_k=5) == []
    finally:
        await redis.aclose()


async def test_a_write_never_merges_into_a_memory_being_deleted(
    settings: Settings, embedder: Embedder
) -> None:
    """Delete-then-write order: the id is buried but the record not yet gone (the delete is between its
    two steps); a repeat of the fact is stored as a memory of its own, which the delete leaves alone."""
    redis = redis_of(settings)
    store = store_for(settings, ChromaLongTermStore)
    service = build_memory_service(settings, store, embedder, redis)
    try:
        [kept] = await service.ingest(
            "wen", "s1", [Message("user", "My cat is called Miso 我的猫叫味噌", id="w1")]
        )
        await Tombstones(redis).bury("wen", [kept.id])  # the delete's first step
        [again] = await service.ingest(
            "wen", "s2", [Message("user", "My cat is called Miso 我的猫叫味噌", id="w2")]
        )
        assert again.id != kept.id
        assert again.source_message_ids == ("w2",)
        await store.delete("wen", [kept.id])  # the delete's second step
        assert [m.id for m in await store.get("wen")] == [again.id]
    finally:
        await redis.aclose()
