"""Index snapshots (issue 29): a worker's first search loads the user's index from Redis instead of
reading Chroma, and ranks exactly as a freshly built index; writes, deletes and erasure are followed."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import RedisError

from app.composition import build_memory_service
from app.settings import Settings
from harness.services import start_redis
from memory import Embedder, keys
from memory.models import Message, ScoredMemory
from memory.recall.snapshot import IndexSnapshots, decode, fingerprint_of
from memory.redis_client import RedisClient
from memory.service import MemoryService
from tests.conftest import AuthHeaders, app_client, redis_of, until
from tests.integration.test_keyword_updates import CountingStore, store_for

pytestmark = pytest.mark.integration

TURNS = [
    "I moved to Lisbon last March for a new job as a nurse.",
    "My favourite food is ramen, I eat it every weekend.",
    "Remind me to call Maria about the insurance on Friday.",
    "I am learning to play the violin with my friend Tom.",
    "我上个三月搬到了杭州，新工作是老师。",
    "我最喜欢吃火锅，每个周末都吃。",
    "提醒我周五给王芳打电话说合同的事。",
    "我在和朋友李雷一起学钢琴。",
    "We are planning a trip to Osaka in June with the kids.",
    "My order number for the sofa is 4417730021.",
]
QUERIES = [
    "Where did I move to?",
    "What food do I like?",
    "我要给谁打电话？",
    "我在学什么乐器？",
    "sofa order",
]


def ranking(hits: Sequence[ScoredMemory]) -> list[str]:
    return [h.memory.id for h in hits]


def same(got: Sequence[ScoredMemory], want: Sequence[ScoredMemory]) -> bool:
    """The same memories in the same order with the same scores (to float rounding: an index brought
    forward through the log sums its lengths in another order than a fresh build)."""
    return ranking(got) == ranking(want) and all(
        abs(g.score - w.score) < 1e-6 for g, w in zip(got, want, strict=True)
    )


def worker(settings: Settings, embedder: Embedder, redis: RedisClient, **overrides: object) -> MemoryService:
    s = settings.model_copy(update={"index_snapshot_min_memories": 0, **overrides})
    store = store_for(s, CountingStore)
    store.loads, store.checks = [], []
    return build_memory_service(s, store, embedder, redis)


def loads(service: MemoryService) -> list[list[str] | None]:
    store = service._store  # noqa: SLF001 - the CountingStore the worker was built on
    assert isinstance(store, CountingStore)
    return store.loads


async def held(redis: RedisClient, user: str) -> bool:
    return bool(await redis.exists(keys.ltm_snapshot(user)))


async def is_snapshot(redis: RedisClient, user: str) -> bool:
    raw = (
        await IndexSnapshots(redis, fingerprint="").read(user)
        if await redis.type(keys.ltm_snapshot(user)) == "list"
        else None
    )
    return raw is not None and fingerprint_of(raw) is not None


async def no_drafts(redis: RedisClient) -> bool:
    return not [k async for k in redis.scan_iter(match="*:ltm:snapshot:draft:*")]


async def fill(service: MemoryService, user: str) -> None:
    await service.ingest(user, "s1", [Message("user", t, id=str(i)) for i, t in enumerate(TURNS)])


async def test_a_loaded_snapshot_ranks_as_a_fresh_build(settings: Settings, embedder: Embedder) -> None:
    redis = redis_of(settings)
    try:
        writer = worker(settings, embedder, redis)
        await fill(writer, "ann")
        builder = worker(settings, embedder, redis)
        await builder.search("ann", QUERIES[0], top_k=5)  # a full build: it saves the snapshot
        assert loads(builder) == [None]
        await until(lambda: held(redis, "ann"))

        from_snapshot = worker(settings, embedder, redis)
        fresh = worker(settings, embedder, redis, index_snapshots=False)
        for query in QUERIES:
            got = await from_snapshot.search("ann", query, top_k=10)
            want = await fresh.search("ann", query, top_k=10)
            assert got, query
            assert same(got, want), query
            assert [h.memory for h in got] == [h.memory for h in want]
        assert loads(from_snapshot) == []  # no Chroma read for the index
        assert loads(fresh) == [None]
    finally:
        await redis.aclose()


async def test_writes_after_the_snapshot_are_followed_through_the_log(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    try:
        writer = worker(settings, embedder, redis)
        await fill(writer, "bea")
        await worker(settings, embedder, redis).search("bea", "food", top_k=3)
        await until(lambda: held(redis, "bea"))
        stored = IndexSnapshots(redis, fingerprint="")
        taken = await stored.read("bea")
        assert taken is not None
        new = await writer.ingest(
            "bea", "s2", [Message("user", "My sister Anna lives in Porto now.", id="n1")]
        )
        assert await stored.read("bea") == taken  # a write leaves the snapshot behind

        late = worker(settings, embedder, redis)
        hits = await late.search("bea", "Where does Anna live?", top_k=5)
        assert hits[0].memory.id == new[0].id
        assert loads(late) == []  # the snapshot, then the change log: no store read
        fresh = worker(settings, embedder, redis, index_snapshots=False)
        for query in [*QUERIES, "Where does Anna live?"]:
            got = await late.search("bea", query, top_k=10)
            assert same(got, await fresh.search("bea", query, top_k=10)), query
    finally:
        await redis.aclose()


async def test_a_delete_drops_the_snapshot_and_the_next_build_leaves_the_memory_out(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    try:
        writer = worker(settings, embedder, redis)
        await fill(writer, "cal")
        await worker(settings, embedder, redis).search("cal", "food", top_k=3)
        await until(lambda: held(redis, "cal"))
        sofa = next(h.memory for h in await writer.search("cal", "sofa order number", top_k=3))
        assert "4417730021" in sofa.content
        await writer.delete("cal", sofa.id)
        assert not await redis.exists(keys.ltm_snapshot("cal"))  # dropped in the delete's own script

        late = worker(settings, embedder, redis)
        hits = await late.search("cal", "sofa order number", top_k=10)
        assert sofa.id not in [h.memory.id for h in hits]
        assert loads(late) == [None]  # nothing to load: built from the store
        await until(lambda: held(redis, "cal"))  # and saved again, without it
        again = worker(settings, embedder, redis)
        hits = await again.search("cal", "sofa order number", top_k=10)
        assert sofa.id not in [h.memory.id for h in hits]
        assert loads(again) == []
    finally:
        await redis.aclose()


async def test_a_snapshot_is_saved_only_at_the_current_version_and_of_the_same_models(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    try:
        writer = worker(settings, embedder, redis)
        await fill(writer, "dan")
        version = int(await redis.get(keys.ltm_version("dan")) or 0)
        snapshots = IndexSnapshots(redis, fingerprint="x", min_memories=0)
        assert not await snapshots.write("dan", version - 1, b"stale")  # overtaken by a write: refused
        assert not await redis.exists(keys.ltm_snapshot("dan"))
        await redis.delete(keys.ltm_version("dan"))  # what an erase does
        assert not await snapshots.write("dan", version, b"after the erase")
        assert not await redis.exists(keys.ltm_snapshot("dan"))

        await writer.ingest("dan", "s2", [Message("user", "I adopted a cat named Miso.", id="c")])
        await worker(settings, embedder, redis).search("dan", "cat", top_k=3)
        await until(lambda: held(redis, "dan"))
        # a worker with other models (here: a damaged or foreign snapshot) builds from the store, and
        # so does one that finds an older release's value (a string, not a list of parts)
        await redis.delete(keys.ltm_snapshot("dan"))
        await redis.rpush(keys.ltm_snapshot("dan"), b"MNS1\x00\x00\x00\xffnot a snapshot")
        for damaged in ("dan", "older"):
            if damaged == "older":
                await fill(writer, "older")
                await redis.set(keys.ltm_snapshot("older"), b"MNS1\x00\x00\x00\xffa string")
            other = worker(settings, embedder, redis)
            question = "What is my cat called?" if damaged == "dan" else "What food do I like?"
            hits = await other.search(damaged, question, top_k=3)
            assert hits[0].memory.content in {"I adopted a cat named Miso.", TURNS[1]}
            assert loads(other) == [None]
        # each rebuild saves a snapshot that replaces what was there
        await until(lambda: is_snapshot(redis, "dan"), timeout=60)
        await until(lambda: is_snapshot(redis, "older"), timeout=60)
        assert await no_drafts(redis)  # the saves' drafts were renamed, none left over
    finally:
        await redis.aclose()


async def test_erase_deletes_the_snapshot(settings: Settings, embedder: Embedder, auth: AuthHeaders) -> None:
    s = settings.model_copy(update={"index_snapshot_min_memories": 0})
    redis = redis_of(s)
    try:
        async with app_client(s, embedder) as (client, _):
            body = {"session_id": "s1", "messages": [{"role": "user", "content": t} for t in TURNS[:4]]}
            (await client.post("/v1/memory/eve/messages", json=body, headers=auth("eve"))).raise_for_status()
        async with app_client(s, embedder) as (client, _):  # a fresh worker: a full build, then a snapshot
            search = await client.post("/v1/memory/eve/search", json={"query": "ramen"}, headers=auth("eve"))
            assert search.json()["results"]
            await until(lambda: held(redis, "eve"))
            erased = await client.delete("/v1/memory/eve", params={"confirm": "eve"}, headers=auth("eve"))
            assert erased.status_code == 200, erased.text
        assert not await redis.exists(keys.ltm_snapshot("eve"))
        assert not [k async for k in redis.scan_iter(match=keys.user_pattern("eve"))]
    finally:
        await redis.aclose()


async def test_through_the_app_with_the_bridge_a_snapshot_ranks_as_a_fresh_build(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    """The whole app (bridge channel on): a worker that loaded the snapshot (keyword index, vectors and
    bridge rows) answers every query exactly as a worker that built the user from Chroma."""
    s = settings.model_copy(update={"index_snapshot_min_memories": 0})
    redis = redis_of(s)
    try:
        async with app_client(s, embedder) as (client, _):
            body = {"session_id": "s1", "messages": [{"role": "user", "content": t} for t in TURNS]}
            (await client.post("/v1/memory/fay/messages", json=body, headers=auth("fay"))).raise_for_status()
        await redis.delete(keys.ltm_snapshot("fay"))  # whatever the writer left: the next build's counts
        async with app_client(s, embedder) as (client, _):
            (
                await client.post("/v1/memory/fay/search", json={"query": "ramen"}, headers=auth("fay"))
            ).raise_for_status()
            await until(lambda: held(redis, "fay"))
        raw = await IndexSnapshots(redis, fingerprint="").read("fay")
        assert raw is not None
        taken = decode(raw, fingerprint_of(raw) or "")
        assert taken is not None
        assert len(taken.index) >= len(TURNS)
        assert taken.bridge is not None  # the bridge rows too
        assert len(taken.bridge) == len(taken.index)
        answers: dict[bool, list[list[tuple[str, float]]]] = {}
        for snapshots in (True, False):
            async with app_client(s.model_copy(update={"index_snapshots": snapshots}), embedder) as (
                client,
                _,
            ):
                answers[snapshots] = []
                for query in QUERIES:
                    got = await client.post(
                        "/v1/memory/fay/search", json={"query": query, "top_k": 10}, headers=auth("fay")
                    )
                    got.raise_for_status()
                    answers[snapshots].append([(r["id"], r["score"]) for r in got.json()["results"]])
        for loaded, built in zip(answers[True], answers[False], strict=True):
            assert loaded
            assert [i for i, _ in loaded] == [i for i, _ in built]
            # the same to the recency decay of the seconds between the two apps' searches
            assert all(abs(a - b) < 1e-4 for (_, a), (_, b) in zip(loaded, built, strict=True))
    finally:
        await redis.aclose()


async def test_a_snapshot_the_log_cannot_bring_forward_is_replaced_by_a_build(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    try:
        writer = worker(settings, embedder, redis)
        await fill(writer, "gil")
        await worker(settings, embedder, redis).search("gil", "food", top_k=3)
        await until(lambda: held(redis, "gil"))
        stored = IndexSnapshots(redis, fingerprint="")
        old = await stored.read("gil")
        assert old is not None
        new = await writer.ingest(
            "gil", "s2", [Message("user", "My sister Anna lives in Porto now.", id="n1")]
        )
        await redis.delete(keys.ltm_changes("gil"))  # the log expired (idle 15 min) or was trimmed

        late = worker(settings, embedder, redis)
        hits = await late.search("gil", "Where does Anna live?", top_k=5)
        assert hits[0].memory.id == new[0].id  # not the snapshot's stale view
        assert loads(late) == [None]  # the snapshot could not be brought forward: built from Chroma
        await until(lambda: stored_changed(stored, "gil", old))  # and a current snapshot replaces it
        again = worker(settings, embedder, redis)
        assert (await again.search("gil", "Where does Anna live?", top_k=5))[0].memory.id == new[0].id
        assert loads(again) == []
    finally:
        await redis.aclose()


async def stored_changed(stored: IndexSnapshots, user: str, old: bytes) -> bool:
    now = await stored.read(user)
    return now is not None and now != old


async def test_a_snapshot_past_redis_value_bound_is_stored_in_parts(tmp_path: Path) -> None:
    """A 10M-token user's snapshot (~700 MB) passes Redis' bound on one value (`proto-max-bulk-len`,
    512 MB by default): here a redis-server whose bound is 1 MB refuses a 3 MB snapshot as one value, and
    stores it as parts, read back whole; a draft overtaken by a write is dropped, not left behind."""
    server = start_redis(tmp_path / "redis", extra_args=["--proto-max-bulk-len", "1mb"])
    redis = Redis.from_url(server.url)
    try:
        await redis.set(keys.ltm_version("ivy"), 7)
        encoded = random.Random(45).randbytes(3 * 1024 * 1024 + 5)
        whole = IndexSnapshots(redis, fingerprint="")
        with pytest.raises(RedisError):  # Redis drops the connection (invalid bulk length)
            await whole.write("ivy", 7, encoded)
        parts = IndexSnapshots(redis, fingerprint="", part_bytes=512 * 1024)
        assert await parts.write("ivy", 7, encoded)
        assert await redis.llen(keys.ltm_snapshot("ivy")) == 7
        assert await parts.read("ivy") == encoded
        assert 0 < await redis.pttl(keys.ltm_snapshot("ivy")) <= 7 * 86_400 * 1000

        assert not await parts.write("ivy", 6, encoded[:100])  # the user changed since: refused
        assert await parts.read("ivy") == encoded
        assert await no_drafts(redis)  # the refused draft is gone at once, not left to expire
        assert await parts.read("nobody") is None
    finally:
        await redis.aclose()
        server.stop()
