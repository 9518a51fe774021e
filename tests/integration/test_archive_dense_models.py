"""Archived rows and the dense model of their vectors (issue 44), against real Redis + Chroma and Parquet
in a temp dir: the archival job records the model of the hot store it reads; after a switch, warm and
cold rows of the previous model are left out of the dense channel and found by their words (Chinese and
English); the archive re-embed gives them vectors of the user's model and they rank by cosine again,
untouched by a delete that lands in the middle of it; rows archived before rows recorded a model are of
the prefix's first model when it is said, of any query's when not (as before).

The previous model is `HashEmbedder` (a deterministic stand-in for a served model), the current one the
real bundled MiniLM: two models of one size, as the warm collections need (a size change is refused)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.composition import build_archive, build_memory_service, build_store, tier_policy
from app.composition.dense import DenseLayout, dense_layout, dense_models, finish_switch
from app.settings import Settings
from bench.archive_data import DAY, NOW, memories_over, user_ids
from harness.fakes import HashEmbedder
from harness.model_server import DIMENSIONS, USE, start_model_server
from harness.services import ServerProcess
from memory import ChromaLongTermStore, Embedder, keys
from memory.archive.cold import MODEL_FIELD
from memory.archive.mover import Archiver
from memory.archive.reembed import ArchiveReembedder
from memory.archive.search import TieredSearch
from memory.archive.view import ArchivedTiers
from memory.embedding.base import Vectors
from memory.governance.erasure import Eraser
from memory.longterm.dense_models import DenseModel, DenseModels, bundled, same_model
from memory.longterm.ids import content_hash
from memory.longterm.rebalance import Rebalancer
from memory.longterm.records import Records
from memory.longterm.routing import RoutingLongTermStore
from memory.models import ArchiveTier, Memory, RecallRequest
from memory.outbox.stream import Outbox
from memory.recall.keyword_index import BM25Index
from memory.redis_client import RedisClient
from memory.service import MemoryService
from memory.text.tokens import tokenize
from tests.conftest import TEST_SECRET, redis_of

pytestmark = [pytest.mark.integration]
ROOT = Path(__file__).resolve().parents[2]

OLD = "http:hash-old:384"  # the previous model (a served one)
NEW = "OnnxEmbedder::384"  # the current one: the bundled MiniLM
USER = user_ids(1)[0]
WARM_ZH = ("zh-warm", "我女儿在杭州读大学，学的是建筑设计。", "女儿在杭州学什么专业")
COLD_EN = (
    "en-cold",
    "My grandfather's old violin is kept in the attic in Porto.",
    "grandfather violin attic",
)
CASES: tuple[tuple[ArchiveTier, tuple[str, str, str]], ...] = (("warm", WARM_ZH), ("cold", COLD_EN))


@dataclass
class Rig:
    settings: Settings
    redis: RedisClient
    store: RoutingLongTermStore
    archive: ArchivedTiers
    memory: MemoryService
    old: HashEmbedder

    def model(self, tag: str) -> None:
        """The user's store is of this model now (the switch's rebalance moved them)."""
        for server in self.store.servers.values():
            server.dense_model = tag

    def tiered(self) -> TieredSearch:
        tiered = self.memory._tiered
        assert tiered is not None
        return tiered

    async def index(self, tier: ArchiveTier) -> BM25Index:
        return await self.tiered().index(USER, await self.archive.snapshot(USER), tier)


@contextlib.asynccontextmanager
async def rig(settings: Settings, tmp_path: Path, embedder: Embedder, first_model: str) -> AsyncIterator[Rig]:
    s = settings.model_copy(update={"archive_cold_url": str(tmp_path / "archive")})
    redis = redis_of(s)
    store = build_store(s, redis)
    base = build_archive(s, redis)
    archive = ArchivedTiers(base.warm, base.cold, redis, first_model=first_model)
    try:
        yield Rig(
            s,
            redis,
            store,
            archive,
            build_memory_service(s, store, embedder, redis, None, archive),
            HashEmbedder(384),
        )
    finally:
        await redis.aclose()


def fact(mid: str, text: str, age_days: float) -> Memory:
    return Memory(
        id=mid,
        user_id=USER,
        content=text,
        created_at=NOW - age_days * DAY,
        session_id="s-archive",
        source="user",
        content_hash=content_hash(text),
        tier="fact",
    )


async def archived(r: Rig, hot_model: str) -> list[Memory]:
    """A year and a half of memories embedded by the previous model, archived from a store of `hot_model`."""
    filler, _ = memories_over([USER], 40, 600.0)
    memories = [*filler, fact(WARM_ZH[0], WARM_ZH[1], 100), fact(COLD_EN[0], COLD_EN[1], 500)]
    r.model(hot_model)
    await r.store.upsert(memories, r.old.embed_sync([m.embed_text for m in memories]))
    report = await Archiver(r.store, r.archive, r.redis, tier_policy(r.settings), grace_seconds=0.05).run(
        now=NOW
    )
    assert report.failures == 0
    return memories


def ids(hits: Sequence[tuple[Memory, float]]) -> set[str]:
    return {m.id for m, _ in hits}


class SwitchedArchive:
    async def check_left_out_but_found_by_words(self, r: Rig, embedder: Embedder) -> None:
        for tier, (mid, _, query) in CASES:
            index = await r.index(tier)
            qvec = (await embedder.embed([query]))[0]
            assert mid in index.memories
            assert index.nearest(qvec, limit=100, model=NEW) == []  # no row of the query's model
            assert index.cosine([mid], qvec, model=NEW) == {}
            assert mid in ids(index.nearest(qvec, limit=100))  # what a search without the model would rank
            assert index.search(tokenize(query), limit=1)[0][0] == mid  # the keyword channel is unchanged
        found = await r.memory.recall(USER, RecallRequest(WARM_ZH[2], top_k=3, as_of=NOW, tiers=["warm"]))
        assert WARM_ZH[0] in {h.memory.id for h in found.hits}
        found = await r.memory.recall(USER, RecallRequest(COLD_EN[2], top_k=3, as_of=NOW, tiers=["cold"]))
        assert COLD_EN[0] in {h.memory.id for h in found.hits}


class DeletingEmbedder:
    """The current model, and a user's delete of the first memory of the first batch landing while the
    batch is embedded (after the job read it, before it writes it back)."""

    def __init__(self, inner: Embedder, service: MemoryService, ids_by_text: dict[str, str]) -> None:
        self._inner = inner
        self._service = service
        self._ids = ids_by_text
        self.victim: str | None = None

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self.victim is None:
            self.victim = self._ids[texts[0]]
            await self._service.delete(USER, self.victim)
        return await self._inner.embed(texts)


class TestArchiveAfterASwitch(SwitchedArchive):
    async def test_rows_of_the_previous_model_are_found_by_words_and_ranked_by_cosine_after_the_reembed(
        self, settings: Settings, tmp_path: Path, embedder: Embedder
    ) -> None:
        async with rig(settings, tmp_path, embedder, first_model=OLD) as r:
            memories = await archived(r, OLD)
            warm = {m.id for m in memories if NOW - 365 * DAY <= m.created_at < NOW - 30 * DAY}
            cold = {m.id for m in memories if m.created_at < NOW - 365 * DAY}
            records = await r.archive.warm.records(USER)
            assert {m[MODEL_FIELD] for m in records.metadatas} == {OLD}
            _, _, tags = r.archive.cold.read_tagged(USER)
            assert set(tags) == {OLD}

            r.model(NEW)  # the rebalance moved the user to the current model's store
            await self.check_left_out_but_found_by_words(r, embedder)

            deleting = DeletingEmbedder(embedder, r.memory, {m.embed_text: m.id for m in memories})
            models = DenseModels(
                DenseModel(NEW, deleting),
                DenseModel(OLD, r.old),
                locate=lambda user_id, fresh: r.store.dense_model_of(user_id, fresh=fresh),
            )
            job = ArchiveReembedder(r.archive, models, r.redis, batch_size=16)
            planned = await job.run(dry_run=True)
            assert (planned.warm, planned.cold, planned.users_seen) == (len(warm), len(cold), 1)
            before = await r.archive.snapshot(USER)
            report = await job.run()
            assert report.failures == 0
            assert report.users_reembedded == 1
            assert (report.warm, report.cold) == (len(warm), len(cold))
            assert (await r.archive.snapshot(USER)).version > before.version  # workers reload

            records = await r.archive.warm.records(USER)
            assert deleting.victim in warm
            assert set(records.ids) == warm - {deleting.victim}  # deleted mid-batch: it did not come back
            assert {m[MODEL_FIELD] for m in records.metadatas} == {NEW}
            _, _, tags = r.archive.cold.read_tagged(USER)
            assert set(tags) == {NEW}
            for tier, (mid, text, query) in CASES:
                index = await r.index(tier)
                qvec = (await embedder.embed([query]))[0]
                top = index.nearest(qvec, limit=1, model=NEW)
                assert top[0][0].id == mid
                expected = float((await embedder.embed([text]))[0] @ qvec)
                assert top[0][1] == pytest.approx(expected, abs=2e-3)  # the current model's cosine
                assert index.nearest(qvec, limit=100, model=OLD) == []
            again = await job.run()
            assert (again.warm, again.cold, again.users_current) == (0, 0, 1)

    async def test_a_model_of_another_size_is_refused_and_nothing_changes(
        self, settings: Settings, tmp_path: Path, embedder: Embedder
    ) -> None:
        async with rig(settings, tmp_path, embedder, first_model=OLD) as r:
            await archived(r, OLD)
            wide = "http:wide:512"
            r.model(wide)
            models = DenseModels(
                DenseModel(wide, HashEmbedder(512)),
                DenseModel(OLD, r.old),
                locate=lambda user_id, fresh: r.store.dense_model_of(user_id, fresh=fresh),
            )
            version = (await r.archive.snapshot(USER)).version
            report = await ArchiveReembedder(r.archive, models, r.redis).run()
            assert (report.size_changed, report.warm, report.cold, report.failures) == (1, 0, 0, 0)
            assert {m[MODEL_FIELD] for m in (await r.archive.warm.records(USER)).metadatas} == {OLD}
            assert (await r.archive.snapshot(USER)).version == version


class TestRowsArchivedBeforeTheyRecordedAModel(SwitchedArchive):
    async def test_untagged_rows_are_of_the_first_model_when_it_is_said(
        self, settings: Settings, tmp_path: Path, embedder: Embedder
    ) -> None:
        async with rig(settings, tmp_path, embedder, first_model=OLD) as r:
            await archived(r, "")  # a store that does not say its model: rows untagged, as before
            records = await r.archive.warm.records(USER)
            assert all(MODEL_FIELD not in m for m in records.metadatas)
            r.model(NEW)
            await self.check_left_out_but_found_by_words(r, embedder)

    async def test_without_a_first_model_every_row_ranks_as_before(
        self, settings: Settings, tmp_path: Path, embedder: Embedder
    ) -> None:
        async with rig(settings, tmp_path, embedder, first_model="") as r:
            await archived(r, "")
            for tier, (mid, _, query) in CASES:
                index = await r.index(tier)
                qvec = r.old.embed_sync([query])[0]
                assert index.nearest(qvec, limit=5, model=NEW) == index.nearest(qvec, limit=5)
                assert mid in ids(index.nearest(qvec, limit=5, model=OLD))
            models = DenseModels(DenseModel(NEW, embedder))
            report = await ArchiveReembedder(r.archive, models, r.redis).run()
            assert (report.warm, report.cold, report.users_current) == (0, 0, 1)


def cli(
    settings: Settings, *args: str, module: str = "app.cli.archive", env: Mapping[str, str] | None = None
) -> dict[str, object]:
    """`python -m <module> <args>` (default: the archive's `--reembed`) with these settings (and `env`
    on top); its JSON summary."""
    environ = {
        **os.environ,
        "REDIS_URL": settings.redis_url,
        "CHROMA_URL": settings.chroma_url,
        "CHROMA_COLLECTION_PREFIX": settings.chroma_collection_prefix,
        "MEMORY_SHARDS": str(settings.memory_shards),
        "AUTH_JWT_SECRET": TEST_SECRET,
        "ARCHIVE_COLD_URL": settings.archive_cold_url,
        "LOG_LEVEL": "WARNING",
        **(env or {}),
    }
    environ.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if settings.redis_cluster_nodes:
        environ["REDIS_CLUSTER_NODES"] = settings.redis_cluster_nodes
    argv = args if module != "app.cli.archive" else ("--reembed", *args)
    done = subprocess.run(
        [sys.executable, "-m", module, *argv],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary: dict[str, object] = json.loads(done.stdout)
    return summary


class TestTheCli:
    async def test_reembed_dry_run_counts_and_the_run_reembeds_with_the_configured_model(
        self, settings: Settings, tmp_path: Path, embedder: Embedder
    ) -> None:
        async with rig(settings, tmp_path, embedder, first_model=OLD) as r:
            memories = await archived(r, OLD)  # then the users moved to the bundled model's store
            warm = sum(1 for m in memories if NOW - 365 * DAY <= m.created_at < NOW - 30 * DAY)
            cold = sum(1 for m in memories if m.created_at < NOW - 365 * DAY)
            planned = cli(r.settings, "--dry-run")
            assert (planned["warm"], planned["cold"], planned["dry_run"]) == (warm, cold, True)
            assert {m[MODEL_FIELD] for m in (await r.archive.warm.records(USER)).metadatas} == {OLD}
            done = cli(r.settings, "--max-per-second", "500", "--batch-size", "32")
            assert (done["warm"], done["cold"], done["failures"]) == (warm, cold, 0)
            tags = {str(m[MODEL_FIELD]) for m in (await r.archive.warm.records(USER)).metadatas}
            tags |= {str(t) for t in r.archive.cold.read_tagged(USER)[2]}
            assert len(tags) == 1
            assert bundled(tags.pop())
            r.model(NEW)
            index = await r.index("warm")
            qvec = (await embedder.embed([WARM_ZH[2]]))[0]
            assert index.nearest(qvec, limit=1, model=NEW)[0][0].id == WARM_ZH[0]


# -- a switch to a model of another size: each dense model's warm collections ---------------------------

WARM_EN = (
    "en-warm",
    "My sister Anna works as a night nurse at the hospital in Porto.",
    "sister Anna nurse Porto",
)
HOT_ZH = ("zh-hot", "我最近在学做川菜，周末常做麻婆豆腐。", "川菜 麻婆豆腐")
NEW_WARM = ("zh-new-warm", "我儿子在成都学钢琴，每周六上午上课。", "儿子在成都学钢琴")
NEW_COLD = (
    "en-new-cold",
    "We sold the old blue sailboat in Lisbon to a fisherman.",
    "sold the sailboat in Lisbon",
)
OLD_CASES: tuple[tuple[ArchiveTier, tuple[str, str, str]], ...] = (
    ("warm", WARM_ZH),
    ("warm", WARM_EN),
    ("cold", COLD_EN),
)


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_model_server(tmp_path_factory.mktemp("models"))
    yield server
    server.stop()


@pytest.fixture
async def served_use(model_server: ServerProcess) -> AsyncIterator[HttpEmbedder]:
    embedder = HttpEmbedder(ServedModel(url=f"{model_server.url}/v1", model=USE, dimension=DIMENSIONS[USE]))
    yield embedder
    await embedder.aclose()


def use_env(model_server: ServerProcess) -> dict[str, str]:
    """The switch's configuration: USE v3 served as the dense model, the bundled MiniLM the previous."""
    return {
        "EMBEDDINGS_URL": f"{model_server.url}/v1",
        "EMBEDDINGS_MODEL": USE,
        "EMBEDDINGS_DIMENSIONS": str(DIMENSIONS[USE]),
        "PREVIOUS_EMBEDDINGS_MODEL": "bundled",
    }


@dataclass
class Resized:
    """A deployment switched from the bundled MiniLM (384-d) to USE v3 served (512-d), its stores built
    by composition from the dense layout; one user archived before the switch and moved by it."""

    settings: Settings  # the switch's configuration
    redis: RedisClient
    layout: DenseLayout
    store: RoutingLongTermStore
    archive: ArchivedTiers
    models: DenseModels
    memory: MemoryService
    served: HttpEmbedder
    before: list[Memory]  # written and archived with MiniLM vectors before the switch
    after: list[Memory]  # written with USE vectors after it

    @property
    def old_warm(self) -> ChromaLongTermStore:
        (store,) = self.archive.others
        return store

    async def index(self, tier: ArchiveTier) -> BM25Index:
        tiered = self.memory._tiered
        assert tiered is not None
        return await tiered.index(USER, await self.archive.snapshot(USER), tier)

    async def use(self, text: str) -> np.ndarray:
        vectors = await self.served.embed([text])
        return np.asarray(vectors[0], dtype=np.float32)


def aged(spec: tuple[str, str, str], days: float) -> Memory:
    return fact(spec[0], spec[1], days)


@contextlib.asynccontextmanager
async def resized(
    settings: Settings, tmp_path: Path, embedder: Embedder, served: HttpEmbedder, model_server: ServerProcess
) -> AsyncIterator[Resized]:
    s = settings.model_copy(update={"archive_cold_url": str(tmp_path / "archive")})
    redis = redis_of(s)
    try:
        # before the switch: MiniLM alone, recorded as the prefix's first model
        first = await dense_layout(s, redis)
        hot = build_store(s, redis, None, first)
        filler, _ = memories_over([USER], 30, 600.0)
        before = [*filler, aged(WARM_ZH, 100), aged(WARM_EN, 200), aged(COLD_EN, 500), aged(HOT_ZH, 3)]
        await hot.upsert(before, await embedder.embed([m.embed_text for m in before]))
        archiver = Archiver(hot, build_archive(s, redis, first), redis, tier_policy(s), grace_seconds=0.05)
        assert (await archiver.run(now=NOW)).failures == 0

        # the switch: USE served, MiniLM the previous model; the rebalance moves the user's hot records
        cfg = s.model_copy(
            update={
                "embeddings_url": f"{model_server.url}/v1",
                "embeddings_model": USE,
                "embeddings_dimensions": DIMENSIONS[USE],
                "previous_embeddings_model": "bundled",
            }
        )
        layout = await dense_layout(cfg, redis)
        store = build_store(cfg, redis, None, layout)
        models = await dense_models(cfg, served, store, previous=embedder)
        moved = await Rebalancer(store, redis, grace_seconds=1.0, models=models).run()
        assert (moved.failures, moved.users_moved) == (0, 1)
        assert same_model(await store.dense_model_of(USER, fresh=True), layout.current)
        archive = build_archive(cfg, redis, layout)
        memory = build_memory_service(cfg, store, served, redis, None, archive, dense=models)
        after = [aged(NEW_WARM, 60), aged(NEW_COLD, 400)]
        yield Resized(cfg, redis, layout, store, archive, models, memory, served, before, after)
    finally:
        await redis.aclose()


async def archive_after_the_switch(r: Resized) -> None:
    """The switched user's memories written with USE vectors are archived: to USE's warm store (one set
    of warm collections for every model refused them on every run: Chroma keeps a collection's size)."""
    await r.store.upsert(r.after, await r.served.embed([m.embed_text for m in r.after]))
    report = await Archiver(r.store, r.archive, r.redis, tier_policy(r.settings), grace_seconds=0.05).run(
        now=NOW
    )
    assert report.failures == 0
    assert report.moved["hot_to_warm"] == 2
    new = await r.archive.warm.records(USER)
    assert set(new.ids) == {NEW_WARM[0]}  # the one over a year old went on to cold
    assert new.embeddings.shape[1] == DIMENSIONS[USE]
    assert {m[MODEL_FIELD] for m in new.metadatas} == {r.layout.current}
    old = await r.old_warm.records(USER)
    assert {WARM_ZH[0], WARM_EN[0]} <= set(old.ids)
    assert NEW_WARM[0] not in old.ids
    assert old.embeddings.shape[1] == 384
    _, vectors, tags = r.archive.cold.read_rows(USER)
    assert {len(v) for v in vectors} == {384, DIMENSIONS[USE]}  # the user's cold rows are of both sizes
    assert tags.count(r.layout.current) == 1


class TestASwitchToAModelOfAnotherSize:
    async def test_archived_on_found_by_words_moved_by_the_reembed_then_the_switch_finishes(
        self,
        settings: Settings,
        tmp_path: Path,
        embedder: Embedder,
        served_use: HttpEmbedder,
        model_server: ServerProcess,
    ) -> None:
        async with resized(settings, tmp_path, embedder, served_use, model_server) as r:
            current = r.layout.current
            prefix = r.settings.chroma_collection_prefix
            assert r.archive.warm.collection_name(USER).startswith(f"{r.layout.namespace(current)}-warm-mem-")
            assert r.old_warm.collection_name(USER).startswith(f"{prefix}-warm-mem-")  # as before the switch
            await archive_after_the_switch(r)
            # no MiniLM record left in hot, but MiniLM rows in warm: the switch is not finished
            assert not await finish_switch(r.settings, r.redis, r.store, r.archive)
            assert await r.redis.get(keys.dense_switched(prefix)) is None

            # before the re-embed: the old rows are found by their words, never ranked by cosine
            for tier, (mid, _, query) in OLD_CASES:
                index = await r.index(tier)
                qvec = await r.use(query)
                assert mid in index.memories
                assert mid not in ids(index.nearest(qvec, limit=100, model=current))
                assert index.cosine([mid], qvec, model=current) == {}
                assert index.search(tokenize(query), limit=1)[0][0] == mid
                found = await r.memory.recall(USER, RecallRequest(query, top_k=3, as_of=NOW, tiers=[tier]))
                assert mid in {h.memory.id for h in found.hits}
            # the rows archived after the switch rank by cosine in the same indexes
            for tier, (mid, _, query) in (("warm", NEW_WARM), ("cold", NEW_COLD)):
                index = await r.index(tier)
                assert index.nearest(await r.use(query), limit=1, model=current)[0][0].id == mid

            # a re-embed interrupted between its copy and its delete: the row is in both warm stores,
            # and every read answers it once, from USE's copy
            old_copy = await r.old_warm.records(USER, ids=[WARM_EN[0]])
            vector = await r.served.embed(old_copy.embed_texts())
            metadatas = [{**m, MODEL_FIELD: current} for m in old_copy.metadatas]
            copy = Records(old_copy.ids, old_copy.documents, metadatas, vector, old_copy.rows)
            await r.archive.warm.put_records(USER, copy)
            await r.archive.state.bump(USER)
            snap = await r.archive.snapshot(USER)
            listed = [m.id for m in await r.archive.memories(USER, snap, ["warm"])]
            pages = [m async for page in r.archive.pages(USER, page_size=7) for m in page]
            exported = [m.id for m in pages if m.archive_tier == "warm"]
            assert sorted(listed) == sorted(set(listed)) == sorted(exported)
            assert listed.count(WARM_EN[0]) == 1
            index = await r.index("warm")
            qvec = await r.use(WARM_EN[2])
            assert index.nearest(qvec, limit=1, model=current)[0][0].id == WARM_EN[0]
            stored = (await r.archive.embeddings(USER, snap, [WARM_EN[0]]))[WARM_EN[0]]
            assert len(stored) == DIMENSIONS[USE]

            # the re-embed moves the old warm rows into USE's warm store; a delete lands in the middle
            old_warm = set((await r.old_warm.records(USER)).ids)
            cold, _, tags = r.archive.cold.read_rows(USER, with_vectors=False)
            old_cold = {m.id for m, tag in zip(cold, tags, strict=True) if tag != current}
            deleting = DeletingEmbedder(r.served, r.memory, {m.embed_text: m.id for m in r.before})
            assert r.models.previous is not None
            models = DenseModels(
                DenseModel(current, deleting),
                r.models.previous,
                locate=lambda user_id, fresh: r.store.dense_model_of(user_id, fresh=fresh),
            )
            before = await r.archive.snapshot(USER)
            report = await ArchiveReembedder(r.archive, models, r.redis, batch_size=8).run()
            assert (report.failures, report.size_changed, report.users_left) == (0, 0, 0)
            assert (report.warm, report.cold) == (len(old_warm), len(old_cold))
            assert (await r.archive.snapshot(USER)).version > before.version
            assert deleting.victim in old_warm
            assert await r.old_warm.user_counts() == {}
            moved = await r.archive.warm.records(USER)
            assert set(moved.ids) == (old_warm - {deleting.victim}) | {NEW_WARM[0]}  # it did not come back
            assert {m[MODEL_FIELD] for m in moved.metadatas} == {current}
            assert moved.embeddings.shape == (len(moved.ids), DIMENSIONS[USE])
            warm_now = await r.archive.memories(USER, await r.archive.snapshot(USER), ["warm"])
            assert sorted(m.id for m in warm_now) == sorted(moved.ids)
            _, vectors, tags = r.archive.cold.read_rows(USER)
            assert ({len(v) for v in vectors}, set(tags)) == ({DIMENSIONS[USE]}, {current})

            # ranked by USE's cosine again (Chinese and English)
            for tier, (mid, text, query) in OLD_CASES:
                index = await r.index(tier)
                qvec = await r.use(query)
                top = index.nearest(qvec, limit=1, model=current)
                assert top[0][0].id == mid
                assert top[0][1] == pytest.approx(float(await r.use(text) @ qvec), abs=5e-3)  # USE's
            again = await ArchiveReembedder(r.archive, r.models, r.redis).run()
            assert (again.warm, again.cold, again.users_current) == (0, 0, 1)

            # no record nor warm row of MiniLM left: the switch is recorded as finished
            assert await finish_switch(r.settings, r.redis, r.store, r.archive)
            assert await r.redis.get(keys.dense_switched(prefix)) == current

    async def test_a_user_not_moved_yet_archives_by_the_previous_model_and_erasure_empties_both_stores(
        self,
        settings: Settings,
        tmp_path: Path,
        embedder: Embedder,
        served_use: HttpEmbedder,
        model_server: ServerProcess,
    ) -> None:
        async with resized(settings, tmp_path, embedder, served_use, model_server) as r:
            await archive_after_the_switch(r)
            # a user the rebalance has not reached: on MiniLM's store, archived to MiniLM's warm store
            other = user_ids(2)[1]
            first = r.layout.first
            unmoved = build_store(r.settings, r.redis, None, DenseLayout(r.layout.prefix, first, first))
            theirs, _ = memories_over([other], 6, 200.0)
            await unmoved.upsert(theirs, await embedder.embed([m.embed_text for m in theirs]))
            assert same_model(await r.store.dense_model_of(other, fresh=True), first)
            report = await Archiver(
                r.store, r.archive, r.redis, tier_policy(r.settings), grace_seconds=0.05
            ).run(now=NOW)
            assert report.failures == 0
            kept = await r.old_warm.records(other)
            assert len(kept.ids) > 0
            assert (kept.embeddings.shape[1], {m[MODEL_FIELD] for m in kept.metadatas}) == (384, {first})
            assert await r.archive.warm.count(other) == 0

            old, new = await r.old_warm.count(USER), await r.archive.warm.count(USER)
            assert (old > 0, new) == (True, 1)
            receipt = await Eraser(r.store, r.redis, r.memory, Outbox(r.redis), archive=r.archive).erase(USER)
            assert receipt.deleted["warm"] == old + new
            assert (await r.old_warm.count(USER), await r.archive.warm.count(USER)) == (0, 0)
            assert r.archive.cold.files_of(USER) == []
            assert await r.old_warm.count(other) == len(kept.ids)  # another user's rows stay

    async def test_the_clis_record_the_switch_finished_only_once_the_archive_reembed_moved_warm(
        self,
        settings: Settings,
        tmp_path: Path,
        embedder: Embedder,
        served_use: HttpEmbedder,
        model_server: ServerProcess,
    ) -> None:
        async with resized(settings, tmp_path, embedder, served_use, model_server) as r:
            await archive_after_the_switch(r)
            env = use_env(model_server)
            settled = cli(r.settings, "--grace-seconds", "1", module="app.cli.rebalance", env=env)
            assert (settled["failures"], settled["dense_switched"]) == (0, None)  # warm rows remain
            planned = cli(r.settings, "--dry-run", env=env)
            old = await r.old_warm.count(USER)
            assert (planned["warm"], planned["dense_switched"]) == (old, None)
            done = cli(r.settings, "--max-per-second", "500", env=env)
            assert (done["warm"], done["failures"], done["size_changed"]) == (old, 0, 0)
            assert done["dense_switched"] == r.layout.current
            assert await r.old_warm.user_counts() == {}
            assert await r.archive.warm.count(USER) == old + 1
