"""A large user's first searches in a worker (issue 45): the snapshot says how many memories it holds
without its parts being read; past the limit the worker loads it in the background and answers
meanwhile over a provisional index (the nearest memories and the latest statements of their claims),
then from the loaded index. Real Redis and Chroma; zh and en."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from copy import copy as shallow_copy

import pytest

from app.settings import Settings
from memory import Embedder, keys
from memory.embedding.base import Vectors
from memory.errors import EmbeddingUnavailable
from memory.models import Message, SearchFilters
from memory.recall import term_buckets, user_index
from memory.recall.cold_start import QueryWords, keyword_words, provisional_index
from memory.recall.keyword_index import hashed_words
from memory.recall.retrieval import HybridRetriever
from memory.recall.snapshot import IndexSnapshots, decode, encode
from memory.service import MemoryService
from memory.text.tokens import tokenize
from memory.write.claim_index import ClaimIndex
from tests.conftest import redis_of, until
from tests.integration.test_index_snapshots import TURNS, fill, held, loads, ranking, worker
from tests.integration.test_keyword_updates import CountingStore

pytestmark = pytest.mark.integration


def checks(service: MemoryService) -> list[str]:
    store = service._store  # noqa: SLF001 - the CountingStore the worker was built on
    assert isinstance(store, CountingStore)
    return store.checks


def retriever_of(service: MemoryService) -> HybridRetriever:
    retriever = service._retriever  # noqa: SLF001 - the worker's retriever, to watch its load
    assert isinstance(retriever, HybridRetriever)
    return retriever


async def test_the_snapshot_says_how_many_memories_it_holds_without_reading_its_parts(
    settings: Settings,
) -> None:
    redis = redis_of(settings)
    try:
        snapshots = IndexSnapshots(redis, fingerprint="", part_bytes=7)
        await redis.set(keys.ltm_version("ida"), "3")
        payload = "快照的内容 the payload, in parts".encode()
        assert await snapshots.write("ida", 3, payload, memories=41_000)
        assert await snapshots.memories("ida") == 41_000
        assert await snapshots.read("ida") == payload  # the count is not part of it
        assert await redis.llen(keys.ltm_snapshot("ida")) > 2
        # written without the count (an older release's snapshot): read as before, the count unknown
        assert await snapshots.write("ida", 3, payload)
        assert await snapshots.memories("ida") is None
        assert await snapshots.read("ida") == payload
        assert await snapshots.memories("nobody") is None
    finally:
        await redis.aclose()


async def test_a_snapshots_buckets_are_read_term_by_term(
    settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The head and the buckets of a query's terms come in one call, after the payload's parts, and
    score as the index does; the parts and the buckets joined are the snapshot as encoded."""
    monkeypatch.setattr(term_buckets, "BUCKET_ENTRIES", 4)  # many buckets for ten memories
    redis = redis_of(settings)
    try:
        service = worker(settings, embedder, redis)
        await fill(service, "ola")
        index = await retriever_of(service).keyword_index("ola")
        encoded = encode(3, index, None, "")
        snapshots = IndexSnapshots(redis, fingerprint="", part_bytes=64)
        await redis.set(keys.ltm_version("ola"), "3")
        assert await snapshots.write("ola", 3, encoded, memories=len(index))
        assert await snapshots.read("ola") == encoded
        loaded = decode(encoded, "")
        assert loaded is not None
        for question in ("sofa order number", "我在和谁一起学钢琴", "Maria insurance 王芳 合同"):
            tokens = tokenize(question)
            found = await snapshots.terms("ola", tokens)
            assert found is not None
            head, buckets = found
            assert 1 < len(buckets) <= len(set(tokens))  # the query's terms' buckets, not all
            assert len(buckets) < head.buckets
            args = {"weights": None, "k1": 1.2, "b": 0.75, "unigram_weight": 0.3, "limit": 5}
            expected = index.search(tokens, limit=5)
            assert term_buckets.read(head, buckets, tokens, **args).hits == expected  # type: ignore[arg-type]
            assert loaded.index.search(tokens, limit=5) == expected
        assert await snapshots.terms("nobody", ["sofa"]) is None
        assert await snapshots.write("ola", 3, encoded)  # without the count: where they are is unknown
        assert await snapshots.terms("ola", ["sofa"]) is None
        assert await snapshots.read("ola") == encoded
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("user", "unrelated", "words", "answer"),
    [
        ("pia", "What food do I like?", "sofa order number 4417730021", TURNS[9]),
        ("qin", "我喜欢吃什么？", "杭州 老师", TURNS[4]),
    ],
)
async def test_a_provisional_index_holds_the_keyword_channels_best(
    settings: Settings, embedder: Embedder, user: str, unrelated: str, words: str, answer: str
) -> None:
    """A memory only its words find (not near the question's vector) is in the provisional index:
    read off the user's snapshot's buckets, then from the store with its vector."""
    redis = redis_of(settings)
    try:
        await fill(worker(settings, embedder, redis), user)
        await worker(settings, embedder, redis).search(user, unrelated, top_k=3)  # a build: a snapshot
        await until(lambda: held(redis, user))
        snapshots = IndexSnapshots(redis, fingerprint="")
        store = worker(settings, embedder, redis)._store  # noqa: SLF001 - the real Chroma store
        qvec = (await embedder.embed([unrelated]))[0]
        args = {"memories": len(TURNS), "filters": SearchFilters(), "model": None, "n": 1}
        alone = await provisional_index(store, None, user, qvec, **args)  # type: ignore[arg-type]
        assert answer not in [m.content for m in alone.memories.values()]
        # the keyword channel's best 3 (a memory's context, the turns around it, counts too)
        ids = keyword_words(snapshots, user, QueryWords(tuple(tokenize(words)), None), limit=3)
        worded = await provisional_index(store, None, user, qvec, keywords=ids, **args)  # type: ignore[arg-type]
        assert answer in [m.content for m in worded.memories.values()]
        assert 2 <= len(worded) <= 4
        assert worded.has_vectors
        # its keyword channel and its candidates' coverage are the whole index's (contexts counted)
        whole = await retriever_of(worker(settings, embedder, redis)).keyword_index(user)
        tokens = tokenize(words)
        assert worded.search(tokens, limit=3) == whole.search(tokens, limit=3)
        mids = list(worded.memories)
        hashed_words.cache_clear()
        covered = worded.coverage(mids, tokens)
        # it tokenised its memories' own words only, not their contexts (the turns around them)
        assert all(m.context for m in worded.memories.values())
        assert hashed_words.cache_info().currsize <= len(mids)
        assert covered == whole.coverage(mids, tokens)
        assert worded.known(tokens) == whole.known(tokens)
        none = keyword_words(snapshots, "nobody", QueryWords(tuple(tokenize(words)), None))
        assert len(await provisional_index(store, None, user, qvec, keywords=none, **args)) == 1  # type: ignore[arg-type]
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("user", "question", "answer"),
    [("gus", "What is my sofa order number?", TURNS[9]), ("hua", "我在和谁一起学钢琴？", TURNS[7])],
)
async def test_a_large_users_first_search_answers_while_the_worker_loads_them(
    settings: Settings, embedder: Embedder, user: str, question: str, answer: str
) -> None:
    redis = redis_of(settings)
    try:
        await fill(worker(settings, embedder, redis), user)
        first = worker(settings, embedder, redis, in_process_index_max=5, provisional_searches=True)
        built = await first.search(user, question, top_k=3)  # from the store; then a snapshot
        assert built[0].memory.content == answer
        await until(lambda: held(redis, user))
        assert await IndexSnapshots(redis, fingerprint="").memories(user) == len(TURNS)

        fresh = worker(settings, embedder, redis, in_process_index_max=5, provisional_searches=True)
        indexes = retriever_of(fresh).indexes
        cold = await fresh.search(user, question, top_k=3)
        assert cold[0].memory.content == answer
        # answered over the memories nearest the question (read with their vectors), not the whole
        # user (None: a full read), and not from the snapshot (no read)
        assert ["nearest with vectors"] in loads(fresh)
        assert None not in loads(fresh)
        await until(lambda: indexes.cache.latest(user) is not None)  # the load ran in the background
        read = len(loads(fresh))
        warm = await fresh.search(user, question, top_k=3)
        assert len(loads(fresh)) == read  # from the loaded index: no more store reads
        assert ranking(warm) == ranking(built)
        assert await indexes.loading(user) is None
        # by default (PROVISIONAL_SEARCHES off) a worker loads a large user inline, as before
        default = worker(settings, embedder, redis, in_process_index_max=5)
        assert await retriever_of(default).indexes.loading(user) is None
        assert (await default.search(user, question, top_k=3))[0].memory.content == answer
        assert loads(default) == []  # the snapshot, read before the search answered
        # a worker whose limit the user is within loads them inline, as before
        small = worker(settings, embedder, redis, in_process_index_max=50, provisional_searches=True)
        assert await retriever_of(small).indexes.loading(user) is None
        assert (await small.search(user, question, top_k=3))[0].memory.content == answer
        assert loads(small) == []  # the snapshot, not the store
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("user", "question", "answer"),
    [("kai", "sofa order number", TURNS[9]), ("lan", "我在和谁一起学钢琴？", TURNS[7])],
)
async def test_a_loaded_large_users_dense_channel_is_exact_cosine_in_process(
    settings: Settings, embedder: Embedder, user: str, question: str, answer: str
) -> None:
    """A worker that holds every vector of a user past IN_PROCESS_INDEX_MAX (its loaded index) answers
    the dense channel itself, up to IN_PROCESS_DENSE_MAX; past that, Chroma's query does."""
    redis = redis_of(settings)
    try:
        await fill(worker(settings, embedder, redis), user)
        for dense_max, asks_chroma in ((100_000, False), (5, True)):
            service = worker(
                settings, embedder, redis, in_process_index_max=5, in_process_dense_max=dense_max
            )
            hits = await service.search(user, question, top_k=3)
            assert hits[0].memory.content == answer
            assert len((await retriever_of(service).keyword_index(user)).memories) == len(TURNS)
            assert ("query" in checks(service)) is asks_chroma, dense_max
    finally:
        await redis.aclose()


@pytest.mark.parametrize(
    ("user", "before", "after", "question"),
    [
        ("ivy", "I live in Berlin with my sister.", "I moved to Shanghai last month.", "I live in Berlin"),
        ("jun", "我住在北京的朝阳区。", "我上个月搬到上海了。", "我住在北京"),
    ],
)
async def test_a_provisional_index_holds_the_latest_statement_of_its_memories_claims(
    settings: Settings, embedder: Embedder, user: str, before: str, after: str, question: str
) -> None:
    redis = redis_of(settings)
    try:
        service = worker(settings, embedder, redis)
        await service.ingest(user, "s1", [Message("user", before, id="1")])
        noise = ["I bought new running shoes.", "我周末去爬山了。", "The printer at work is broken again."]
        await service.ingest(user, "s2", [Message("user", t, id=f"n{i}") for i, t in enumerate(noise)])
        await service.ingest(user, "s3", [Message("user", after, id="2")])
        store = service._store  # noqa: SLF001 - the real Chroma store the worker wrote to
        qvec = (await embedder.embed([question]))[0]
        args = {"memories": 5, "filters": SearchFilters(), "model": None, "n": 1}
        alone = await provisional_index(store, None, user, qvec, **args)  # type: ignore[arg-type]
        assert [m.content for m in alone.memories.values()] == [before]
        with_claims = await provisional_index(store, ClaimIndex(redis), user, qvec, **args)  # type: ignore[arg-type]
        assert {m.content for m in with_claims.memories.values()} == {before, after}
        assert with_claims.has_vectors
    finally:
        await redis.aclose()


async def test_a_background_load_waits_for_the_search_that_started_it(
    settings: Settings, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The load of a large user starts once its first search has its answer (`release`), not beside
    it (its reading and decoding slowed that answer threefold); a load nobody releases starts anyway."""
    redis = redis_of(settings)
    try:
        await fill(worker(settings, embedder, redis), "ria")
        await worker(settings, embedder, redis).search("ria", "钢琴 piano", top_k=3)  # a snapshot
        await until(lambda: held(redis, "ria"))
        monkeypatch.setattr(user_index, "LOAD_HELD_S", 30.0)
        indexes = retriever_of(
            worker(settings, embedder, redis, in_process_index_max=5, provisional_searches=True)
        ).indexes
        assert await indexes.loading("ria") == len(TURNS)
        await asyncio.sleep(0.3)
        assert indexes.cache.latest("ria") is None  # held
        indexes.release("ria")
        await until(lambda: indexes.cache.latest("ria") is not None)
        monkeypatch.setattr(user_index, "LOAD_HELD_S", 0.1)
        unreleased = retriever_of(
            worker(settings, embedder, redis, in_process_index_max=5, provisional_searches=True)
        ).indexes
        assert await unreleased.loading("ria") == len(TURNS)
        await until(lambda: unreleased.cache.latest("ria") is not None)  # after LOAD_HELD_S
    finally:
        await redis.aclose()


def down(embedder: Embedder) -> Embedder:
    """The same model (the snapshot's fingerprint names it), down: every embed fails."""

    async def fail(texts: Sequence[str]) -> Vectors:
        raise EmbeddingUnavailable("down for the test")

    copy = shallow_copy(embedder)
    copy.embed = fail  # type: ignore[method-assign]
    return copy


@pytest.mark.parametrize(
    ("user", "question", "answer"), [("kai", "sofa", TURNS[9]), ("lan", "钢琴", TURNS[7])]
)
async def test_with_the_model_down_a_large_users_search_waits_for_the_index_and_ranks_by_keywords(
    settings: Settings, embedder: Embedder, user: str, question: str, answer: str
) -> None:
    """No query vector, so no neighbours to ask Chroma for: the search reads the user's index (the
    snapshot) as before and answers by the keyword channel, flagged as degraded by the route."""
    redis = redis_of(settings)
    try:
        await fill(worker(settings, embedder, redis), user)
        await worker(settings, embedder, redis, in_process_index_max=5, provisional_searches=True).search(
            user, question, top_k=3
        )
        await until(lambda: held(redis, user))
        without = worker(settings, down(embedder), redis, in_process_index_max=5, provisional_searches=True)
        hits = await without.search(user, question, top_k=3)
        # among the first three: by keywords alone a neighbour whose context (the turns around it,
        # indexed with it) holds the words can rank above the memory that says them
        assert answer in [h.memory.content for h in hits]
        assert retriever_of(without).indexes.cache.latest(user) is not None
        assert loads(without) == []  # from the snapshot, no provisional read
    finally:
        await redis.aclose()
