"""Hot, warm and cold tiers against real Redis + Chroma, and Parquet in a temp dir: a simulated clock
(a year and a half of memories, bulk-loaded through the store with a deterministic embedder), archival
runs, then counts per tier, old facts found, a smaller hot index, crashes at every step of a move (in
process, and the CLI killed with SIGKILL mid-move), deletes and erasure across tiers, the DuckDB query.

Scale: 12 users x 302 memories here (the same properties at 100k / 1,000 users are in
bench/archive_tiers.py, which takes minutes on 2 cores)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from app.composition import build_archive, build_memory_service, build_store, tier_policy
from app.settings import Settings
from bench.archive_data import DAY, NOW, Facts, memories_over, user_ids
from harness.fakes import HashEmbedder
from harness.services import ServerProcess, free_port, start_moto
from memory import Embedder, keys
from memory.archive.mover import Archiver, ArchiveReport
from memory.archive.schedule import DailyArchive
from memory.archive.tiers import TIERS, TierPolicy
from memory.archive.view import ArchivedTiers
from memory.governance.erasure import Eraser
from memory.longterm.routing import RoutingLongTermStore
from memory.longterm.tombstones import Tombstones
from memory.models import Memory, RecallRequest
from memory.outbox.stream import Outbox
from memory.recall.dense_rows import QuantisedRows
from memory.redis_client import RedisClient
from memory.service import MemoryService
from tests.conftest import TEST_SECRET, AuthHeaders, app_client, records_on, redis_of

pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
USERS = user_ids(12)
PER_USER = 300
DAYS = 600.0


class Crash(Exception):
    """Stands for the process dying at that point."""


@dataclass
class Rig:
    settings: Settings
    redis: RedisClient
    store: RoutingLongTermStore
    archive: ArchivedTiers
    memory: MemoryService
    embedder: HashEmbedder

    def archiver(self, cls: type[Archiver] = Archiver, **overrides: Any) -> Archiver:
        options: dict[str, Any] = {"batch_users": 5, "batch_size": 200, "grace_seconds": 0.05}
        options.update(overrides)
        return cls(self.store, self.archive, self.redis, tier_policy(self.settings), **options)

    def fresh_service(self) -> MemoryService:
        """Another worker: caches of its own."""
        return build_memory_service(self.settings, self.store, self.embedder, self.redis, None, self.archive)


@contextlib.asynccontextmanager
async def rig(settings: Settings, cold_url: str, **overrides: Any) -> AsyncIterator[Rig]:
    s = settings.model_copy(update={"archive_cold_url": cold_url, **overrides})
    redis = redis_of(s)
    store = build_store(s, redis)
    archive = build_archive(s, redis)
    embedder = HashEmbedder(384)
    try:
        yield Rig(
            s, redis, store, archive, build_memory_service(s, store, embedder, redis, None, archive), embedder
        )
    finally:
        await redis.aclose()


async def load(r: Rig, memories: list[Memory]) -> None:
    for start in range(0, len(memories), 1000):
        batch = memories[start : start + 1000]
        await r.store.upsert(batch, r.embedder.embed_sync([m.embed_text for m in batch]))


async def visible(r: Rig, user_id: str, service: MemoryService | None = None) -> list[Memory]:
    page = await (service or r.memory).list(user_id, limit=10**6, offset=0, sort="recent")
    assert page.total == len(page.items)
    return page.items


async def assert_each_once(r: Rig, stored: dict[str, set[str]]) -> None:
    """Every stored id answers from exactly one tier: never lost, never twice."""
    for user_id, ids in stored.items():
        seen = Counter(m.id for m in await visible(r, user_id))
        assert set(seen) == ids, f"{user_id}: {len(ids - set(seen))} lost, {len(set(seen) - ids)} unknown"
        assert max(seen.values()) == 1, f"{user_id}: {[i for i, n in seen.items() if n > 1][:3]} twice"


def by_user(memories: list[Memory]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m in memories:
        out.setdefault(m.user_id, set()).add(m.id)
    return out


@pytest.fixture
def dataset() -> tuple[list[Memory], dict[str, Facts]]:
    return memories_over(USERS, PER_USER, DAYS)


class TestArchival:
    async def test_tiers_by_age_counts_add_up_and_old_facts_are_found(
        self, settings: Settings, tmp_path: Path, dataset: tuple[list[Memory], dict[str, Facts]]
    ) -> None:
        memories, facts = dataset
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            before = {u: len(await r.fresh_service()._retriever.keyword_index(u)) for u in USERS[:3]}  # type: ignore[union-attr]
            report = await r.archiver().run(now=NOW)

            policy = TierPolicy()
            expected = Counter(policy.tier_of(m.created_at, NOW) for m in memories)
            assert report.failures == 0
            assert report.tiers == {t: expected[t] for t in TIERS}
            assert sum(report.tiers.values()) == len(memories)
            assert report.moved == {
                "hot_to_warm": expected["warm"] + expected["cold"],
                "warm_to_cold": expected["cold"],
            }
            assert 0 < expected["hot"] < expected["cold"] < expected["warm"]
            for user_id in USERS:
                for m in await visible(r, user_id):
                    assert m.archive_tier == policy.tier_of(m.created_at, NOW), m.id
            await assert_each_once(r, by_user(memories))

            service = r.fresh_service()  # a worker that never searched these users
            for user_id in USERS[:4]:
                f = facts[user_id]
                warm = await service.recall(user_id, RecallRequest(f.warm_query, top_k=3, as_of=NOW))
                assert warm.tiers.searched == ("hot", "warm")
                assert warm.hits[0].memory.id == f.warm_id
                assert warm.hits[0].memory.archive_tier == "warm"
                cold = await service.recall(
                    user_id, RecallRequest(f.cold_query, top_k=3, as_of=NOW, tiers=["cold"])
                )
                assert cold.tiers.choice == "requested"
                assert cold.hits[0].memory.id == f.cold_id
                assert cold.hits[0].memory.archive_tier == "cold"
                hot_only = await service.recall(
                    user_id, RecallRequest(f.warm_query, top_k=3, as_of=NOW, tiers=["hot"])
                )
                assert f.warm_id not in {h.memory.id for h in hot_only.hits}

            # the hot in-process index of a worker holds only the hot share
            for user_id, n in before.items():
                after = len(await service._retriever.keyword_index(user_id))  # type: ignore[union-attr]
                hot = sum(1 for m in memories if m.user_id == user_id and m.created_at >= NOW - 30 * DAY)
                assert n == PER_USER + 2
                assert after == hot
                assert after < 0.1 * n

            again = await r.archiver().run(now=NOW)
            assert again.moved == {"hot_to_warm": 0, "warm_to_cold": 0}
            assert again.tiers == report.tiers

    async def test_cold_fallback_when_hot_and_warm_find_nothing_relevant(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, facts = memories_over(USERS[:2], 40, DAYS)
        async with rig(settings, str(tmp_path / "archive"), archive_cold_fallback_similarity=0.9) as r:
            await load(r, memories)
            planned = await r.archiver().run(now=NOW, dry_run=True)
            assert await visible(r, USERS[0])
            assert all(m.archive_tier == "hot" for m in await visible(r, USERS[0]))
            report = await r.archiver().run(now=NOW)
            assert planned.would_move == report.moved
            assert report.moved["warm_to_cold"] > 0
            f = facts[USERS[0]]
            found = await r.memory.recall(USERS[0], RecallRequest(f.cold_query, top_k=3, as_of=NOW))
            assert found.tiers.choice == "cold_fallback"
            assert found.tiers.searched == ("hot", "warm", "cold")
            assert "0.90" in found.tiers.detail
            assert found.hits[0].memory.id == f.cold_id
        async with rig(settings, str(tmp_path / "archive"), archive_cold_fallback_similarity=-1.0) as r:
            found = await r.memory.recall(USERS[0], RecallRequest(f.cold_query, top_k=3, as_of=NOW))
            assert found.tiers.choice == "default"
            assert f.cold_id not in {h.memory.id for h in found.hits}


class TestCrashes:
    @pytest.mark.parametrize("point", ["warm_copy", "warm_switched", "cold_write", "cold_switched"])
    async def test_a_crash_at_any_step_leaves_each_memory_in_one_tier_and_a_rerun_completes(
        self, settings: Settings, tmp_path: Path, point: str
    ) -> None:
        memories, _ = memories_over(USERS[:3], 60, DAYS)
        stored = by_user(memories)
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            if point.startswith("cold"):
                await r.archiver(batch_size=1000).run(now=NOW - 300 * DAY)  # warm only: nothing is cold yet
            crashing = _crashing(point, r)
            report = await r.archiver(crashing, batch_size=25).run(now=NOW)
            assert report.failures == 3  # each user crashed once, at that point
            states = [await r.archive.snapshot(u) for u in stored]
            phase = "copying" if point in ("warm_copy", "cold_write") else "switched"
            assert all(s.move is not None and s.move.phase == phase for s in states)
            await assert_each_once(r, stored)
            for user_id in stored:  # and searches see each once too
                found = await r.fresh_service().search(user_id, "Note walked park", top_k=50, as_of=NOW)
                ids = [h.memory.id for h in found]
                assert len(ids) == len(set(ids))

            done = await r.archiver().run(now=NOW)
            assert done.failures == 0
            assert done.resumed + done.rolled_back == 3
            expected = Counter(TierPolicy().tier_of(m.created_at, NOW) for m in memories)
            assert done.tiers == {t: expected[t] for t in TIERS}
            await assert_each_once(r, stored)

    async def test_the_cli_killed_mid_move_loses_nothing_and_a_rerun_completes(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, _ = memories_over(USERS[:6], 150, DAYS)
        stored = by_user(memories)
        cold_url = str(tmp_path / "archive")
        async with rig(settings, cold_url) as r:
            await load(r, memories)
            env = _cli_env(r.settings, ARCHIVE_BATCH_SIZE="30", ARCHIVE_BATCH_USERS="2")
            interrupted: list[str] = []
            for wanted in ("copying", "switched", "copying", "switched"):
                proc = subprocess.Popen(
                    [sys.executable, "-m", "app.cli.archive", "--now", str(NOW), "--grace-seconds", "0.3"],
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                )
                phase = await _kill_at(proc, r, list(stored), wanted)
                if phase is not None:
                    interrupted.append(phase)
                await assert_each_once(r, stored)
                await _expire_locks(r, list(stored))  # what the leases' TTL would do after 30 s
            assert "copying" in interrupted, interrupted
            assert "switched" in interrupted, interrupted
            final = subprocess.run(
                [sys.executable, "-m", "app.cli.archive", "--now", str(NOW), "--grace-seconds", "0"],
                cwd=ROOT,
                env=env,
                capture_output=True,
                timeout=300,
                check=False,
            )
            assert final.returncode == 0, final.stderr[-2000:]
            summary = json.loads(final.stdout)
            expected = Counter(TierPolicy().tier_of(m.created_at, NOW) for m in memories)
            assert summary["tiers"] == {t: expected[t] for t in TIERS}
            await assert_each_once(r, stored)


def _crashing(point: str, r: Rig) -> type[Archiver]:
    crashed: set[str] = set()

    class Crashing(Archiver):
        async def copy_to_warm(self, user_id: str, records: Any) -> None:
            await super().copy_to_warm(user_id, records)
            if point == "warm_copy" and user_id not in crashed:
                crashed.add(user_id)
                raise Crash(point)

        async def _finish(self, user_id: str, move: Any, report: Any) -> None:
            if point == f"{move.dst}_switched" and user_id not in crashed:
                crashed.add(user_id)
                raise Crash(point)
            await super()._finish(user_id, move, report)

    if point == "cold_write":
        cold = r.archive.cold
        write = cold.write

        def crash_after_write(user_id: str, rows: Any, files: Any, *, archived_at: float) -> None:
            write(user_id, rows, files, archived_at=archived_at)
            if user_id not in crashed:
                crashed.add(user_id)
                raise Crash(point)

        cold.write = crash_after_write  # type: ignore[method-assign]
    return Crashing


def _cli_env(settings: Settings, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "REDIS_URL": settings.redis_url,
        "CHROMA_URL": settings.chroma_url,
        "CHROMA_COLLECTION_PREFIX": settings.chroma_collection_prefix,
        "MEMORY_SHARDS": str(settings.memory_shards),
        "AUTH_JWT_SECRET": TEST_SECRET,
        "ARCHIVE_COLD_URL": settings.archive_cold_url,
        "LOG_LEVEL": "WARNING",
        "PROMETHEUS_MULTIPROC_DIR": "",
        **extra,
    }
    if settings.redis_cluster_nodes:
        env["REDIS_CLUSTER_NODES"] = settings.redis_cluster_nodes
    env.pop("PROMETHEUS_MULTIPROC_DIR")
    return env


async def _kill_at(proc: subprocess.Popen[bytes], r: Rig, users: list[str], phase: str) -> str | None:
    """SIGKILL the CLI the moment some user's move is in `phase`; the phase it was killed in (None:
    it finished first)."""
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            for user_id in users:
                move = (await r.archive.snapshot(user_id)).move
                if move is not None and move.phase == phase:
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(timeout=10)
                    return phase
            await asyncio.sleep(0.005)
        return None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)


async def _expire_locks(r: Rig, users: list[str]) -> None:
    for key in [
        keys.ARCHIVE_LOCK,
        *(keys.ltm_lock(u) for u in users),
        *(keys.archive_cold_lock(u) for u in users),
    ]:
        await r.redis.delete(key)  # one by one: different cluster slots


class TestGovernanceAcrossTiers:
    async def test_delete_and_forget_reach_warm_and_cold_and_a_buried_id_never_moves(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, facts = memories_over(USERS[:2], 40, DAYS)
        user_id = USERS[0]
        f = facts[user_id]
        old_hot = next(m for m in memories if m.user_id == user_id and m.created_at < NOW - 100 * DAY)
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            # a delete in flight: buried, not yet removed from hot; the move must not carry it
            await Tombstones(r.redis).bury(user_id, [old_hot.id])
            await r.archiver().run(now=NOW)
            tiers = {m.id: m.archive_tier for m in await visible(r, user_id)}
            assert tiers[old_hot.id] == "hot"
            assert tiers[f.warm_id] == "warm"
            assert tiers[f.cold_id] == "cold"

            await r.memory.delete(user_id, f.warm_id)
            # by meaning, a Chinese memory needs two channels: keywords and the bridge (this rig has no
            # bridge, and MiniLM never counts for Chinese), so the query alone forgets nothing here
            assert (await r.memory.forget(user_id, query=f.cold_query)).ids == []
            cold_at = NOW - 540 * DAY  # bench/archive_data.py: the cold fact's age
            forgotten = await r.memory.forget(user_id, after=cold_at - 3600, before=cold_at + 3600)
            assert forgotten.ids == [f.cold_id]
            await r.memory.delete(user_id, old_hot.id)
            left = {m.id for m in await visible(r, user_id)}
            assert not {f.warm_id, f.cold_id, old_hot.id} & left
            assert len(left) == 42 - 3
            cold_ids = {m.id for m in r.archive.cold.read_user(user_id, with_vectors=False)[0]}
            assert f.cold_id not in cold_ids
            assert cold_ids
            found = await r.fresh_service().recall(
                user_id, RecallRequest(f.cold_query, top_k=5, as_of=NOW, tiers=["warm", "cold"])
            )
            assert f.cold_id not in {h.memory.id for h in found.hits}
            listed = await r.memory.list(user_id, limit=100, offset=0, sort="recent", archive_tier="cold")
            assert listed.items
            assert all(m.archive_tier == "cold" for m in listed.items)

    async def test_erase_rewrites_the_users_parquet_files_without_them(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, facts = memories_over(USERS[:3], 30, DAYS)
        root = tmp_path / "archive"
        victim, other = USERS[0], USERS[1]
        async with rig(settings, str(root)) as r:
            await load(r, memories)
            await r.archiver().run(now=NOW)
            token = facts[victim].cold_token.encode()
            assert _grep(root, token), "the token must be findable in the files before the erase"
            assert _grep(root, facts[other].cold_token.encode())
            receipt = await Eraser(r.store, r.redis, r.memory, Outbox(r.redis), archive=r.archive).erase(
                victim
            )
            assert receipt.deleted["cold"] > 0
            assert receipt.deleted["warm"] > 0
            assert not _grep(root, token)
            assert not _grep(root, victim.encode())
            assert _grep(root, facts[other].cold_token.encode())  # the others' rows stay
            warm_prefix = f"{r.settings.chroma_collection_prefix}-warm"
            assert not [i for i, u in records_on(r.settings.chroma_url, warm_prefix) if u == victim]
            assert await visible(r, victim) == []


def _grep(root: Path, needle: bytes) -> bool:
    return any(needle in p.read_bytes() for p in root.rglob("*") if p.is_file())


class TestAdminQuery:
    async def test_the_documented_duckdb_query_reads_a_users_cold_rows(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        import duckdb

        memories, facts = memories_over(USERS[:2], 30, DAYS)
        root = tmp_path / "archive"
        async with rig(settings, str(root)) as r:
            await load(r, memories)
            report = await r.archiver().run(now=NOW)
            cold = {m.id for m in memories if m.user_id == USERS[0] and m.created_at < NOW - 365 * DAY}
            # the query of docs/memory.md, with this test's path
            relation = duckdb.sql(
                f"""
                SELECT id, user_id, to_timestamp(created_at) AS created, content,
                       json_extract_string(metadata, '$.session_id') AS session_id
                FROM read_parquet('{root}/**/*.parquet', hive_partitioning = true)
                WHERE user_id = '{USERS[0]}'
                ORDER BY created_at
                """
            )
            assert relation is not None
            rows = relation.fetchall()
            assert {row[0] for row in rows} == cold
            counted = duckdb.sql(f"SELECT count(*) FROM read_parquet('{root}/**/*.parquet')")
            assert counted is not None
            assert counted.fetchall()[0][0] == report.tiers["cold"]
            assert any(facts[USERS[0]].cold_token in row[3] for row in rows)


class TestWarmSearchIsExact:
    async def test_warm_dense_channel_is_exact_cosine_over_stored_vectors(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, _ = memories_over(USERS[:1], 80, DAYS)
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            await r.archiver().run(now=NOW)
            query = "Note bought a new kettle at the market"
            qvec = r.embedder.embed_sync([query])[0]
            warm = [m for m in memories if NOW - 365 * DAY <= m.created_at < NOW - 30 * DAY]
            vectors = r.embedder.embed_sync([m.embed_text for m in warm])
            best = warm[int((vectors @ qvec).argmax())]
            tiered = r.fresh_service()._tiered
            assert tiered is not None
            snap = await r.archive.snapshot(USERS[0])
            index = await tiered.index(USERS[0], snap, "warm")
            top = index.nearest(qvec, limit=1)
            assert top[0][0].id == best.id
            # int8 rows with a scale each (memory/recall/dense_rows.py): within half a step a component
            bound = float(QuantisedRows.of(vectors).error_bound(qvec)[warm.index(best)])
            assert top[0][1] == pytest.approx(float((vectors @ qvec).max()), abs=bound + 1e-4)
            assert len(index) == len(warm)
            assert tiered.warm_cache.get(USERS[0], snap.version) is index  # cached for the next search
            # the hot in-process index never took them in
            hot = await r.fresh_service()._retriever.keyword_index(USERS[0])  # type: ignore[union-attr]
            assert not set(hot.memories) & {m.id for m in warm}


@pytest.fixture(scope="module")
def moto_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_moto(tmp_path_factory.mktemp("moto"))
    yield server
    server.stop()


class TestColdOnS3:
    async def test_archival_to_s3_compatible_storage(
        self, settings: Settings, moto_server: ServerProcess, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        import boto3

        for name, value in (
            ("AWS_ACCESS_KEY_ID", "mnemo-test"),
            ("AWS_SECRET_ACCESS_KEY", "mnemo-test-secret"),
            ("AWS_DEFAULT_REGION", "us-east-1"),
        ):
            monkeypatch.setenv(name, value)
        bucket = f"mnemo-{uuid.uuid4().hex[:10]}"
        boto3.client("s3", endpoint_url=moto_server.url).create_bucket(Bucket=bucket)
        memories, facts = memories_over(USERS[:3], 30, DAYS)
        url = f"s3://{bucket}/archive"
        async with rig(settings, url, archive_s3_endpoint_url=moto_server.url) as r:
            await load(r, memories)
            report = await r.archiver().run(now=NOW)
            expected = Counter(TierPolicy().tier_of(m.created_at, NOW) for m in memories)
            assert report.tiers == {t: expected[t] for t in TIERS}
            keys_in_bucket = [
                o["Key"]
                for o in boto3.client("s3", endpoint_url=moto_server.url)
                .list_objects_v2(Bucket=bucket)
                .get("Contents", [])
            ]
            assert keys_in_bucket
            assert all(k.startswith("archive/user_hash=") and "/month=" in k for k in keys_in_bucket)
            f = facts[USERS[0]]
            found = await r.fresh_service().recall(
                USERS[0], RecallRequest(f.cold_query, top_k=3, as_of=NOW, tiers=["cold"])
            )
            assert found.hits[0].memory.id == f.cold_id
            await assert_each_once(r, by_user(memories))
            await r.memory.delete(USERS[0], f.cold_id)
            assert f.cold_id not in {m.id for m in await visible(r, USERS[0])}
            erased = await Eraser(r.store, r.redis, r.memory, Outbox(r.redis), archive=r.archive).erase(
                USERS[1]
            )
            assert erased.deleted["cold"] == sum(
                1 for m in memories if m.user_id == USERS[1] and m.created_at < NOW - 365 * DAY
            )
            assert await visible(r, USERS[1]) == []
            assert {m.id for m in await visible(r, USERS[2])} == by_user(memories)[USERS[2]]


class TestApi:
    async def test_tier_in_list_and_search_and_the_choice_explained(
        self, settings: Settings, embedder: Embedder, tmp_path: Path, auth: AuthHeaders
    ) -> None:
        cold_url = str(tmp_path / "archive")
        s = settings.model_copy(update={"archive_cold_url": cold_url})
        user_id = "alice"
        async with rig(s, cold_url) as r:
            texts = [
                ("I keep bees on my rooftop in Lisbon", 10),
                ("我住在杭州，在西湖边上", 200),
                ("My first car was a red Volvo", 500),
            ]
            batch = [
                Memory(
                    id=f"a{i}",
                    user_id=user_id,
                    content=t,
                    created_at=time.time() - age * DAY,
                    session_id="s1",
                    source="user",
                    content_hash=f"h{i}",
                )
                for i, (t, age) in enumerate(texts)
            ]
            await r.store.upsert(
                batch, await embedder.embed([m.embed_text for m in batch])
            )  # the app's model
            await r.archiver().run()
        async with app_client(s, embedder) as (client, _):
            every = await client.get(f"/v1/memory/{user_id}/list", headers=auth(user_id))
            assert every.status_code == 200
            assert {i["id"]: i["archive_tier"] for i in every.json()["items"]} == {
                "a0": "hot",
                "a1": "warm",
                "a2": "cold",
            }
            warm = await client.get(
                f"/v1/memory/{user_id}/list", params={"archive_tier": "warm"}, headers=auth(user_id)
            )
            assert [i["id"] for i in warm.json()["items"]] == ["a1"]
            found = await client.post(
                f"/v1/memory/{user_id}/search", json={"query": "我住在哪个城市？"}, headers=auth(user_id)
            )
            body = found.json()
            assert body["results"][0]["id"] == "a1"
            assert body["results"][0]["archive_tier"] == "warm"
            assert body["tiers"]["searched"] == ["hot", "warm"]
            assert body["tiers"]["choice"] in {"default", "cold_fallback"}
            cold = await client.post(
                f"/v1/memory/{user_id}/search",
                json={"query": "What was my first car?", "tiers": ["cold"]},
                headers=auth(user_id),
            )
            assert cold.json()["tiers"] == {"searched": ["cold"], "choice": "requested", "detail": ANY}
            assert [h["id"] for h in cold.json()["results"]] == ["a2"]
            both = await client.post(
                f"/v1/memory/{user_id}/search",
                json={"query": "car", "archive_tier": "cold", "tiers": ["warm"]},
                headers=auth(user_id),
            )
            assert both.status_code == 422
            assert both.json()["error"] == "validation_error"
            bad = await client.get(
                f"/v1/memory/{user_id}/list", params={"archive_tier": "frozen"}, headers=auth(user_id)
            )
            assert bad.status_code == 422
            exported = await client.get(f"/v1/memory/{user_id}/export", headers=auth(user_id))
            assert exported.status_code == 200
            tiers = {m["id"]: m["archive_tier"] for m in exported.json()["memories"]}
            assert tiers == {"a0": "hot", "a1": "warm", "a2": "cold"}


class TestSchedule:
    async def test_one_run_per_day_and_never_two_at_once(self, settings: Settings, tmp_path: Path) -> None:
        memories, _ = memories_over(USERS[:4], 40, DAYS)
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            archiver = r.archiver(grace_seconds=0.3)
            first, second = await asyncio.gather(
                archiver.run(now=NOW), r.archiver().run(now=NOW), return_exceptions=True
            )
            outcomes = sorted(type(x).__name__ for x in (first, second))
            assert outcomes == ["ArchiveBusy", "ArchiveReport"]

            runs: list[float] = []

            async def job() -> ArchiveReport:
                runs.append(time.time())
                return await r.archiver().run(now=NOW)

            day = dt.date(2026, 12, 1)
            writers = [DailyArchive(r.redis, job, hour=3) for _ in range(2)]
            ran = await asyncio.gather(*(w.run_once(day) for w in writers))
            assert sorted(ran) == [False, True]
            assert len(runs) == 1
            assert not await writers[0].run_once(day)  # the day is claimed
            assert await writers[0].run_once(day + dt.timedelta(days=1))


class TestInterleavings:
    async def test_a_delete_during_the_copy_does_not_come_back(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, facts = memories_over(USERS[:1], 40, DAYS)
        user_id = USERS[0]
        f = facts[user_id]
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            service = r.memory

            class DeleteMidCopy(Archiver):
                async def copy_to_warm(self, uid: str, records: Any) -> None:
                    await super().copy_to_warm(uid, records)
                    if f.warm_id in records.ids:
                        # a user's DELETE lands between the copy and the switch (deletes do not wait
                        # for the write lock the move holds)
                        await service.delete(uid, f.warm_id)

            report = await r.archiver(DeleteMidCopy).run(now=NOW)
            assert report.failures == 0
            ids = {m.id for m in await visible(r, user_id)}
            assert f.warm_id not in ids
            assert len(ids) == 41
            warm_prefix = f"{r.settings.chroma_collection_prefix}-warm"
            assert f.warm_id not in {i for i, _ in records_on(r.settings.chroma_url, warm_prefix)}
            assert f.warm_id not in {
                i for i, _ in records_on(r.settings.chroma_url, r.settings.chroma_collection_prefix)
            }


class TestMetricsAndWriter:
    async def test_the_run_sets_the_tier_gauges(self, settings: Settings, tmp_path: Path) -> None:
        from prometheus_client import REGISTRY

        memories, _ = memories_over(USERS[:2], 30, DAYS)
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            failures = REGISTRY.get_sample_value("mnemo_archive_failures_total") or 0.0
            report = await r.archiver().run(now=NOW)
            for tier, n in report.tiers.items():
                assert REGISTRY.get_sample_value("mnemo_archive_memories", {"tier": tier}) == n
            moved = REGISTRY.get_sample_value("mnemo_archive_moved_last_run", {"move": "warm_to_cold"})
            assert moved == report.moved["warm_to_cold"] > 0
            assert (
                REGISTRY.get_sample_value("mnemo_archive_last_run_timestamp_seconds") or 0
            ) > time.time() - 60
            assert (REGISTRY.get_sample_value("mnemo_archive_failures_total") or 0.0) == failures

    async def test_the_writer_runs_the_days_archive(self, settings: Settings, tmp_path: Path) -> None:
        memories, _ = memories_over(USERS[:2], 30, DAYS, now=time.time())
        async with rig(settings, str(tmp_path / "archive")) as r:
            await load(r, memories)
            hour = dt.datetime.now(dt.UTC).hour  # due now: today's hour has come
            env = _cli_env(
                r.settings, ARCHIVE_HOUR=str(hour), OUTBOX_PARTITIONS=str(r.settings.outbox_partitions)
            )
            proc = subprocess.Popen(
                [sys.executable, "-m", "app.cli.writer", "--nice", "0"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 120
                expected = Counter(TierPolicy().tier_of(m.created_at, time.time()) for m in memories)
                tiers: Counter[str] = Counter()
                while time.monotonic() < deadline:
                    seen = [m for u in USERS[:2] for m in await visible(r, u)]
                    tiers = Counter(m.archive_tier for m in seen)
                    if tiers == expected:
                        break
                    await asyncio.sleep(0.5)
                assert tiers == expected
                day = dt.datetime.now(dt.UTC).date()
                assert await r.redis.get(f"{keys.ARCHIVE_LAST_RUN}:{day.isoformat()}") == "claimed"
            finally:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(timeout=10)


@pytest.mark.standalone  # a cluster with no node reachable raises RedisClusterException, a non-RedisError,
# before this point and in the hot path too
class TestRedisDown:
    async def test_search_degrades_to_hot_when_the_archive_state_cannot_be_read(
        self, settings: Settings, tmp_path: Path
    ) -> None:
        memories, facts = memories_over(USERS[:1], 40, DAYS, now=time.time())
        cold_url = str(tmp_path / "archive")
        async with rig(settings, cold_url) as r:
            await load(r, memories)
            await r.archiver().run()
        dead = settings.model_copy(update={"redis_url": f"redis://127.0.0.1:{free_port()}/0"})
        async with rig(dead, cold_url, redis_socket_timeout=0.5) as down:
            found = await down.memory.recall(USERS[0], RecallRequest(facts[USERS[0]].warm_query, top_k=5))
            assert found.tiers.searched == ("hot",)
            assert "unavailable" in found.tiers.detail
            assert found.hits
            assert all(h.memory.archive_tier == "hot" for h in found.hits)
