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
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from app.composition import build_archive, build_memory_service, build_store, tier_policy
from app.settings import Settings
from bench.archive_data import DAY, NOW, memories_over, user_ids
from harness.fakes import HashEmbedder
from memory import Embedder
from memory.archive.cold import MODEL_FIELD
from memory.archive.mover import Archiver
from memory.archive.reembed import ArchiveReembedder
from memory.archive.search import TieredSearch
from memory.archive.view import ArchivedTiers
from memory.embedding.base import Vectors
from memory.longterm.dense_models import DenseModel, DenseModels, bundled
from memory.longterm.ids import content_hash
from memory.longterm.routing import RoutingLongTermStore
from memory.models import ArchiveTier, Memory, RecallRequest
from memory.recall.keyword_index import BM25Index, tokenize
from memory.redis_client import RedisClient
from memory.service import MemoryService
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


def cli(settings: Settings, *args: str) -> dict[str, object]:
    env = {
        **os.environ,
        "REDIS_URL": settings.redis_url,
        "CHROMA_URL": settings.chroma_url,
        "CHROMA_COLLECTION_PREFIX": settings.chroma_collection_prefix,
        "MEMORY_SHARDS": str(settings.memory_shards),
        "AUTH_JWT_SECRET": TEST_SECRET,
        "ARCHIVE_COLD_URL": settings.archive_cold_url,
        "LOG_LEVEL": "WARNING",
    }
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    if settings.redis_cluster_nodes:
        env["REDIS_CLUSTER_NODES"] = settings.redis_cluster_nodes
    done = subprocess.run(
        [sys.executable, "-m", "app.cli.archive", "--reembed", *args],
        cwd=ROOT,
        env=env,
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
