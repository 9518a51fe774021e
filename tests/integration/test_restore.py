"""A way back from delete and forget: restorable for RESTORE_GRACE_SECONDS, out of search, chat and
export meanwhile, restored whole (keyword index, vectors, chat recall), from any archive tier, never
undone by a late purge, gone for good at the grace period's end or with an erase. Runs against a Redis
Cluster too (MNEMO_TEST_REDIS=cluster)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from app.composition import build_archive, build_memory_service, build_store, tier_policy
from app.settings import Settings
from bench.archive_data import DAY, NOW, memories_over, user_ids
from harness.fakes import HashEmbedder
from memory import Embedder, keys
from memory.archive.mover import Archiver
from memory.corrections import MemoryRestorer
from memory.errors import MemoryNotFound
from memory.governance.erasure import Eraser
from memory.longterm.deferred_deletes import DeferredDeleteStore, PurgeSweeper
from memory.longterm.history import SYSTEM, MemoryHistory
from memory.longterm.purges import Purges
from memory.longterm.restorable import RestorableBin
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.models import Message
from memory.outbox.stream import Outbox
from memory.service import MemoryService
from tests.conftest import AuthHeaders, app_client, error_code, redis_of
from tests.fake_llm import FakeUpstream
from tests.integration.test_deferred_deletes import gated

pytestmark = pytest.mark.integration

ALLERGY = "我对花生过敏，记住这个。"
SISTER = "My sister Anna lives in Porto."


def restorer_of(
    service: MemoryService, store: object, embedder: Embedder, settings: Settings
) -> MemoryRestorer:
    redis = redis_of(settings)
    assert service.restorable is not None
    return MemoryRestorer(
        service,
        store,  # type: ignore[arg-type]
        embedder,
        LtmVersions(redis),
        MemoryHistory(redis),
        Tombstones(redis),
        service.restorable,
        lock=service.write_lock,
    )


async def ids_found(client: httpx.AsyncClient, auth: AuthHeaders, user: str, query: str) -> list[str]:
    resp = await client.post(
        f"/v1/memory/{user}/search", json={"query": query, "top_k": 5}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return [h["id"] for h in resp.json()["results"]]


async def test_deleted_and_forgotten_are_hidden_until_restored_then_found_and_recalled(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    user = "rosa"
    upstream = FakeUpstream()
    llm = settings.model_copy(update={"llm_base_url": "http://upstream.test/v1", "llm_model": "fake-model"})
    async with app_client(llm, embedder, upstream.transport) as (client, _):
        for session, text, mid in (("s1", ALLERGY, "r1"), ("s2", SISTER, "r2")):
            stored = await client.post(
                f"/v1/memory/{user}/messages",
                json={"session_id": session, "messages": [{"role": "user", "content": text, "id": mid}]},
                headers=auth(user),
            )
            assert stored.status_code == 200, stored.text
        listed = (await client.get(f"/v1/memory/{user}/list", headers=auth(user))).json()
        stored_text = {m["id"]: m["content"] for m in listed["items"]}
        allergy = next(i for i, t in stored_text.items() if "花生" in t)
        sister = next(i for i, t in stored_text.items() if "Porto" in t)
        assert allergy in await ids_found(client, auth, user, "我对什么过敏？")

        assert (await client.delete(f"/v1/memory/{user}/{allergy}", headers=auth(user))).status_code == 204
        forgot = await client.post(
            f"/v1/memory/{user}/forget", json={"session_id": "s2", "dry_run": False}, headers=auth(user)
        )
        assert forgot.json()["ids"] == [sister]

        # out of search, list, export and chat recall meanwhile
        assert allergy not in await ids_found(client, auth, user, "我对什么过敏？ 花生")
        assert sister not in await ids_found(client, auth, user, "Where does my sister Anna live? Porto")
        assert (await client.get(f"/v1/memory/{user}/list", headers=auth(user))).json()["total"] == 0
        export = await client.get(f"/v1/memory/{user}/export", headers=auth(user))
        assert "花生" not in export.text
        assert "Porto" not in export.text
        turn = await client.post(
            "/v1/chat/completions",
            json={
                "model": "mnemo",
                "session_id": "c1",
                "messages": [{"role": "user", "content": "我对什么过敏？"}],
            },
            headers=auth(user),
        )
        assert turn.status_code == 200, turn.text
        assert "花生" not in upstream.system_prompts()[-1]

        # listed as restorable, most recently deleted first, with how and until when
        deleted = await client.get(f"/v1/memory/{user}/deleted", headers=auth(user))
        assert deleted.status_code == 200, deleted.text
        body = deleted.json()
        assert body["total"] == 2
        assert body["grace_seconds"] == settings.restore_grace_seconds
        assert [(d["id"], d["how"], d["content"]) for d in body["items"]] == [
            (sister, "forgotten", stored_text[sister]),
            (allergy, "deleted", stored_text[allergy]),
        ]
        assert body["items"][0]["restorable_until"] > body["items"][0]["deleted_at"]
        page = (await client.get(f"/v1/memory/{user}/deleted?limit=1&offset=1", headers=auth(user))).json()
        assert [d["id"] for d in page["items"]] == [allergy]
        assert page["total"] == 2

        # another user cannot see or restore them
        other = await client.get(f"/v1/memory/{user}/deleted", headers=auth("mallory"))
        assert other.status_code == 403
        stolen = await client.post(f"/v1/memory/{user}/{allergy}/restore", headers=auth("mallory"))
        assert stolen.status_code == 403
        theirs = await client.post(f"/v1/memory/mallory/{allergy}/restore", headers=auth("mallory"))
        assert theirs.status_code == 404
        assert error_code(theirs) == "memory_not_found"

        for mid, text in stored_text.items():
            restored = await client.post(f"/v1/memory/{user}/{mid}/restore", headers=auth(user))
            assert restored.status_code == 200, restored.text
            assert (restored.json()["id"], restored.json()["content"]) == (mid, text)
            assert restored.json()["archive_tier"] == "hot"
        again = await client.post(f"/v1/memory/{user}/{allergy}/restore", headers=auth(user))
        assert again.status_code == 404
        assert error_code(again) == "memory_not_found"
        assert (await client.get(f"/v1/memory/{user}/deleted", headers=auth(user))).json()["total"] == 0

        # searchable again: both channels, and in chat recall
        assert allergy in await ids_found(client, auth, user, "我对什么过敏？")
        assert allergy in await ids_found(client, auth, user, "花生")  # the keyword index
        assert sister in await ids_found(client, auth, user, "Where does my sister live?")
        assert (await client.get(f"/v1/memory/{user}/list", headers=auth(user))).json()["total"] == 2
        turn = await client.post(
            "/v1/chat/completions",
            json={
                "model": "mnemo",
                "session_id": "c2",
                "messages": [{"role": "user", "content": "我对什么过敏？"}],
            },
            headers=auth(user),
        )
        assert turn.status_code == 200
        assert "花生" in upstream.system_prompts()[-1]
        history = (await client.get(f"/v1/memory/{user}/{allergy}/history", headers=auth(user))).json()
        assert [e["event"] for e in history["events"]][-2:] == ["deleted", "restored"]
        # and deletable again, as any memory
        assert (await client.delete(f"/v1/memory/{user}/{allergy}", headers=auth(user))).status_code == 204
        assert allergy not in await ids_found(client, auth, user, "花生")


async def test_restore_validates_its_input(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    for bad in ("a b", "x" * 300, "%00"):
        resp = await client.post(f"/v1/memory/vera/{bad}/restore", headers=auth("vera"))
        assert resp.status_code in (404, 422), (bad, resp.status_code)
        assert "error" in resp.json()
    missing = await client.post("/v1/memory/vera/no-such-id/restore", headers=auth("vera"))
    assert missing.status_code == 404
    assert error_code(missing) == "memory_not_found"
    for query in ("limit=0", "limit=101", "offset=-1", "limit=ten"):
        resp = await client.get(f"/v1/memory/vera/deleted?{query}", headers=auth("vera"))
        assert resp.status_code == 422, query
        assert error_code(resp) == "validation_error"
    assert (await client.get("/v1/memory/vera/deleted")).status_code == 401


async def test_a_restore_is_not_undone_by_the_purge_of_its_delete(
    settings: Settings, embedder: Embedder
) -> None:
    """Chroma down when the delete is asked: the purge waits in the queue. A restore meanwhile stops
    hiding the id, so the writer's sweep that comes later deletes nothing that was brought back."""
    redis = redis_of(settings)
    inner = gated(settings)
    inner.gate.set()
    store = DeferredDeleteStore(inner, Purges(redis))
    service = build_memory_service(settings, store, embedder, redis)
    restorer = restorer_of(service, store, embedder, settings)
    user = "ruth"
    try:
        allergy, sister = await service.ingest(
            user, "s1", [Message("user", ALLERGY, id="t1", timestamp=1000), Message("user", SISTER, id="t2")]
        )
        inner.down = True
        await service.delete(user, allergy.id)
        await service.delete(user, sister.id)
        await store.settle()
        assert await store.purges.hidden(user) == {allergy.id, sister.id}
        inner.down = False
        restored = await restorer.restore(user, allergy.id, SYSTEM)
        assert restored.id == allergy.id
        assert await store.purges.hidden(user) == {sister.id}
        assert await PurgeSweeper(store, lambda: [keys.partition_of(user)], grace_seconds=0).sweep() == 1
        assert [m.id for m in await inner.get(user)] == [allergy.id]
        assert [h.memory.id for h in await service.search(user, "花生", top_k=3)] == [allergy.id]
        # another worker, its index built now, finds it too
        fresh = build_memory_service(settings, store, embedder, redis)
        assert allergy.id in [h.memory.id for h in await fresh.search(user, "我对什么过敏？", top_k=3)]
        assert not await Tombstones(redis).buried(user, [allergy.id])
        assert await Tombstones(redis).buried(user, [sister.id])
    finally:
        inner.gate.set()
        await store.settle()
        await redis.aclose()


async def test_the_grace_period_ends_and_the_sweep_removes_the_copies(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    now = [1_000_000.0]
    bin_ = RestorableBin(redis, grace_seconds=3600, clock=lambda: now[0])
    service = build_memory_service(settings, build_store(settings, redis), embedder, redis)
    service.restorable = bin_
    restorer = restorer_of(service, build_store(settings, redis), embedder, settings)
    user = "rhea"
    try:
        allergy, sister = await service.ingest(
            user, "s1", [Message("user", ALLERGY, id="g1"), Message("user", SISTER, id="g2")]
        )
        await service.delete(user, allergy.id)
        now[0] += 1800
        await service.delete(user, sister.id)
        mine, other = keys.partition_of(user), (keys.partition_of(user) + 1) % keys.partitions()
        assert (await bin_.page(user, limit=10, offset=0)).total == 2

        now[0] += 1801  # the first one's grace is over: not listed, not restorable, even before a sweep
        page = await bin_.page(user, limit=10, offset=0)
        assert [d.memory.id for d in page.items] == [sister.id]
        with pytest.raises(MemoryNotFound):
            await restorer.restore(user, allergy.id, SYSTEM)
        assert await bin_.sweep([other]) == 0  # not its partition
        assert await redis.hexists(keys.ltm_restorable(user), allergy.id)
        assert await bin_.sweep([mine]) == 1  # gone for good
        assert not await redis.hexists(keys.ltm_restorable(user), allergy.id)
        assert await redis.hexists(keys.ltm_restorable(user), sister.id)
        assert await redis.zscore(keys.restorable_queue_of(user), user) == pytest.approx(
            1_000_000 + 1800 + 3600
        )
        assert await bin_.sweep([mine]) == 0  # the second one's grace is not over yet

        now[0] += 1800
        assert await bin_.sweep([mine]) == 1
        assert not await redis.exists(keys.ltm_restorable(user), keys.ltm_restorable_at(user))
        assert await redis.zscore(keys.restorable_queue_of(user), user) is None
    finally:
        await redis.aclose()


async def test_restore_round_trips_from_warm_and_cold(settings: Settings, tmp_path: Path) -> None:
    """Deleted from warm, forgotten from cold: both come back to hot, listed and found again."""
    s = settings.model_copy(update={"archive_cold_url": str(tmp_path / "archive")})
    redis = redis_of(s)
    store = build_store(s, redis)
    archive = build_archive(s, redis)
    embedder = HashEmbedder(384)
    service = build_memory_service(s, store, embedder, redis, None, archive)
    restorer = restorer_of(service, store, embedder, s)
    [user] = user_ids(1)
    memories, facts = memories_over([user], 40, 600.0)
    f = facts[user]
    try:
        for start in range(0, len(memories), 1000):
            batch = memories[start : start + 1000]
            await store.upsert(batch, embedder.embed_sync([m.embed_text for m in batch]))
        await Archiver(store, archive, redis, tier_policy(s), batch_size=200, grace_seconds=0.05).run(now=NOW)
        tiers = {
            m.id: m.archive_tier for m in (await service.list(user, limit=100, offset=0, sort="recent")).items
        }
        assert (tiers[f.warm_id], tiers[f.cold_id]) == ("warm", "cold")
        total = len(tiers)

        await service.delete(user, f.warm_id)
        cold_at = NOW - 540 * DAY
        assert (await service.forget(user, after=cold_at - 3600, before=cold_at + 3600)).ids == [f.cold_id]
        assert (await service.list(user, limit=100, offset=0, sort="recent")).total == total - 2
        deleted = {d.memory.id: d for d in (await restorer.deleted(user, limit=10, offset=0)).items}
        assert {i: (d.memory.archive_tier, d.how) for i, d in deleted.items()} == {
            f.warm_id: ("warm", "deleted"),
            f.cold_id: ("cold", "forgotten"),
        }
        assert f.cold_token in deleted[f.cold_id].memory.content

        for mid in (f.warm_id, f.cold_id):
            assert (await restorer.restore(user, mid, SYSTEM)).archive_tier == "hot"
        after = {m.id: m for m in (await service.list(user, limit=100, offset=0, sort="recent")).items}
        assert len(after) == total
        assert (after[f.warm_id].archive_tier, after[f.cold_id].archive_tier) == ("hot", "hot")
        assert after[f.cold_id].content == deleted[f.cold_id].memory.content
        assert after[f.cold_id].created_at == deleted[f.cold_id].memory.created_at  # its own time kept
        found = await build_memory_service(s, store, embedder, redis, None, archive).search(
            user, f.cold_token, top_k=3, as_of=NOW
        )
        assert f.cold_id in [h.memory.id for h in found]
    finally:
        await redis.aclose()


async def test_an_erased_user_leaves_nothing_restorable(settings: Settings, embedder: Embedder) -> None:
    redis = redis_of(settings)
    store = build_store(settings, redis)
    service = build_memory_service(settings, store, embedder, redis)
    user = "remy"
    try:
        allergy, _ = await service.ingest(
            user, "s1", [Message("user", ALLERGY, id="e1"), Message("user", SISTER)]
        )
        await service.delete(user, allergy.id)
        assert await redis.hexists(keys.ltm_restorable(user), allergy.id)
        assert await redis.zscore(keys.restorable_queue_of(user), user) is not None

        receipt = await Eraser(store, redis, service, Outbox(redis)).erase(user)
        assert receipt.deleted["sessions"] == 0  # ingested directly: no session state
        assert not await redis.exists(keys.ltm_restorable(user), keys.ltm_restorable_at(user))
        assert await redis.zscore(keys.restorable_queue_of(user), user) is None  # not even the id
        restorer = restorer_of(service, store, embedder, settings)
        assert (await restorer.deleted(user, limit=10, offset=0)).total == 0
        with pytest.raises(MemoryNotFound):
            await restorer.restore(user, allergy.id, SYSTEM)
        raw = json.dumps([str(v) for v in await redis.hgetall(keys.ltm_restorable(user))])
        assert "花生" not in raw
    finally:
        await redis.aclose()


async def test_the_erase_receipt_counts_the_sessions_it_removed(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    user = "sami"
    async with app_client(settings, embedder) as (client, _):
        for session in ("a", "b"):
            turn = await client.post(
                "/v1/chat/completions",
                json={
                    "model": "mnemo",
                    "session_id": session,
                    "messages": [{"role": "user", "content": "我住在杭州"}],
                },
                headers=auth(user),
            )
            assert turn.status_code == 200, turn.text
        preview = await client.get(
            f"/v1/admin/users/{user}/erase-preview", headers=auth("root", role="admin")
        )
        assert preview.json()["sessions"] == 2
        receipt = await client.delete(f"/v1/memory/{user}", params={"confirm": user}, headers=auth(user))
        assert receipt.status_code == 200, receipt.text
        assert receipt.json()["deleted"]["sessions"] == 2
    await asyncio.sleep(0)
