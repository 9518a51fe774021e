"""Export, audit, and deletions that stay deleted (outbox scrubbing, tombstones, erase markers)."""

from __future__ import annotations

import gc
import time
import tracemalloc
from collections.abc import AsyncIterator, Mapping

import httpx
import numpy as np
import pytest

from app.composition import build_memory_service, chroma_client_factory
from app.http.export import export_document
from app.settings import Settings
from memory import ChromaLongTermStore, Embedder, keys
from memory.governance.erasure import Eraser
from memory.governance.export import UserExport
from memory.models import Memory, Message
from memory.outbox.stream import Outbox, OutboxEntry
from memory.redis_client import RedisClient
from memory.service import MemoryService
from memory.session.store import SessionStore
from tests.conftest import AuthHeaders, app_client, redis_of

pytestmark = pytest.mark.integration


async def _ingest(client: httpx.AsyncClient, auth: AuthHeaders, user: str, texts: list[str]) -> list[str]:
    resp = await client.post(
        f"/v1/memory/{user}/messages",
        json={
            "session_id": "s1",
            "messages": [{"role": "user", "content": t, "id": f"{user}-m{i}"} for i, t in enumerate(texts)],
        },
        headers=auth(user),
    )
    assert resp.status_code == 200, resp.text
    return [m["id"] for m in resp.json()["memories"]]


class TestExport:
    async def test_export_holds_memories_sessions_and_pending_writes_of_one_user(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        no_worker = settings.model_copy(update={"outbox_worker": False})  # chat turns stay pending
        async with app_client(no_worker, embedder) as (client, _):
            ids = await _ingest(
                client, auth, "alice", ["我对花生过敏，记住这个", "My sister Anna lives in Lisbon"]
            )
            await _ingest(client, auth, "bob", ["Bob's secret: he lives in Oslo"])
            chat = await client.post(
                "/v1/chat/completions",
                json={
                    "messages": [{"role": "user", "content": "明天下午3点去浦东机场"}],
                    "session_id": "trip",
                },
                headers=auth("alice"),
            )
            assert chat.status_code == 200

            resp = await client.get("/v1/memory/alice/export", headers=auth("alice"))
            assert resp.status_code == 200, resp.text
            assert resp.headers["content-type"].startswith("application/json")
            assert "attachment" in resp.headers["content-disposition"]
            doc = resp.json()
            assert doc["format"] == "mnemo-export/1"
            assert doc["user_id"] == "alice"
            assert sorted(m["id"] for m in doc["memories"]) == sorted(ids)
            peanut = next(m for m in doc["memories"] if "花生" in m["content"])
            assert peanut["source_message_ids"] == ["alice-m0"]
            assert peanut["session_id"] == "s1"
            assert peanut["tier"] == "fact"  # explicit "记住" anchor
            assert [s["session_id"] for s in doc["sessions"]] == ["trip"]
            assert [m["content"] for m in doc["sessions"][0]["buffer"]][0] == "明天下午3点去浦东机场"
            assert len(doc["pending_writes"]) == 1
            assert doc["pending_writes"][0]["messages"][0]["content"] == "明天下午3点去浦东机场"
            counts = doc["counts"]
            assert counts == {"memories": 2, "sessions": 1, "pending_writes": 1, "history_events": 0} | {
                "relations": counts["relations"],  # what relation memory extracted (memory/relations)
                "entities": counts["entities"],
                "entity_merges": 0,
            }
            assert "Oslo" not in resp.text  # nothing of bob

            # an admin may export anyone; a stranger may not
            assert (
                await client.get("/v1/memory/alice/export", headers=auth("root", "admin"))
            ).status_code == 200
            assert (await client.get("/v1/memory/alice/export", headers=auth("bob"))).status_code == 403

    async def test_empty_user_exports_a_valid_empty_document(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        resp = await client.get("/v1/memory/nobody/export", headers=auth("nobody"))
        assert resp.status_code == 200
        doc = resp.json()
        assert (doc["memories"], doc["sessions"], doc["pending_writes"]) == ([], [], [])
        assert doc["counts"] == {
            "memories": 0,
            "sessions": 0,
            "pending_writes": 0,
            "history_events": 0,
            "relations": 0,
            "entities": 0,
            "entity_merges": 0,
        }
        assert (doc["entities"], doc["entity_merges"], doc["profile"]) == (
            [],
            [],
            {"current": [], "past": []},
        )

    async def test_export_streams_in_pages_with_bounded_memory(self, settings: Settings) -> None:
        """Six times the memories must not cost six times the memory: while streaming, what stays
        reachable is about one page (the Chroma client's decoded response), whatever the size of the
        user. Measured after a collection at every chunk: pages already sent are garbage that the
        cyclic collector reclaims on its own schedule, not memory the export holds on to."""
        store = ChromaLongTermStore(
            chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
        )
        redis = redis_of(settings)
        rng = np.random.default_rng(7)
        page = 250
        sizes = {"small": 500, "big": 3000}
        for user, n in sizes.items():
            for start in range(0, n, 500):
                memories = [
                    Memory(
                        id=f"{user}-{i:05d}",
                        user_id=user,
                        content=f"记忆 {i}: " + "我喜欢在杭州西湖边散步，also hiking near Lisbon. " * 6,
                        created_at=1_700_000_000.0 + i,
                        session_id=f"s{i % 7}",
                        source="user",
                        content_hash=f"h{i}",
                        importance=0.3,
                        source_message_ids=(f"msg{i}",),
                    )
                    for i in range(start, start + 500)
                ]
                vectors = rng.standard_normal((500, 8)).astype(np.float32)
                await store.upsert(memories, vectors / np.linalg.norm(vectors, axis=1, keepdims=True))
        exporter = UserExport(store, SessionStore(redis), Outbox(redis), page_size=page)
        peaks: dict[str, int] = {}
        bytes_out: dict[str, int] = {}
        try:
            for user in sizes:
                done: list[tuple[Mapping[str, int], bool]] = []

                async def on_done(
                    counts: Mapping[str, int],
                    complete: bool,
                    done: list[tuple[Mapping[str, int], bool]] = done,
                ) -> None:
                    done.append((dict(counts), complete))

                tracemalloc.start()
                try:
                    pages = exporter.memories(user)
                    first = await anext(pages, None)
                    size = 0
                    held = 0
                    async for chunk in export_document(exporter, user, first, pages, on_done):
                        size += len(chunk.encode())
                        gc.collect()
                        held = max(held, tracemalloc.get_traced_memory()[0])
                    peaks[user] = held
                finally:
                    tracemalloc.stop()
                bytes_out[user] = size
                assert done == [
                    (
                        {
                            "memories": sizes[user],
                            "sessions": 0,
                            "pending_writes": 0,
                            "history_events": 0,
                            "relations": 0,  # an exporter without relation memory
                            "entities": 0,
                            "entity_merges": 0,
                        },
                        True,
                    )
                ]
        finally:
            await redis.aclose()
        assert bytes_out["big"] > 5 * bytes_out["small"]
        assert peaks["big"] < 1.5 * peaks["small"], (peaks, bytes_out)


class TestAudit:
    async def test_governance_actions_are_recorded_without_content(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        secret_text = "我的银行卡密码提示是小狗的名字 Fido"
        ids = await _ingest(client, auth, "alice", [secret_text, "I travel to Tokyo in May"])
        await _ingest(client, auth, "bob", ["bob likes tea"])
        alice = auth("alice")
        assert (await client.get("/v1/memory/alice/list", headers=alice)).status_code == 200
        forget = await client.post(
            "/v1/memory/alice/forget", json={"query": "Tokyo trip", "dry_run": True}, headers=alice
        )
        assert forget.status_code == 200
        assert (await client.delete(f"/v1/memory/alice/{ids[0]}", headers=alice)).status_code == 204
        assert (await client.get("/v1/memory/alice/export", headers=alice)).status_code == 200
        # an admin reading bob's list is recorded (bob reading his own would not be)
        assert (await client.get("/v1/memory/bob/list", headers=auth("root", "admin"))).status_code == 200
        assert (
            await client.delete(
                "/v1/memory/alice", params={"confirm": "alice"}, headers=auth("root", "admin")
            )
        ).status_code == 200

        resp = await client.get("/v1/audit", params={"user_id": "alice"}, headers=auth("root", "admin"))
        assert resp.status_code == 200, resp.text
        items = resp.json()["items"]
        # newest first; alice viewing her own list is no governance action (issue 25)
        assert [i["action"] for i in items] == ["erase", "export", "delete", "forget"]
        by_action = {i["action"]: i for i in items}
        assert by_action["forget"]["details"] == {"criteria": "query", "dry_run": "true"}
        assert by_action["delete"]["details"] == {"memory_id": ids[0]}
        assert by_action["delete"]["count"] == 1
        assert by_action["export"]["count"] == 1
        assert by_action["export"]["details"]["complete"] == "true"
        assert (by_action["erase"]["actor"], by_action["erase"]["actor_role"]) == ("root", "admin")
        assert by_action["erase"]["count"] == 1
        assert all(i["user_id"] == "alice" and i["request_id"] for i in items)
        for word in ("Fido", "Tokyo", "银行卡"):
            assert word not in resp.text

        everyone = await client.get("/v1/audit", headers=auth("root", "admin"))
        assert {i["user_id"] for i in everyone.json()["items"]} == {"alice", "bob"}
        page = await client.get("/v1/audit", params={"limit": 2}, headers=auth("root", "admin"))
        nxt = await client.get(
            "/v1/audit",
            params={"limit": 2, "before": page.json()["next_before"]},
            headers=auth("root", "admin"),
        )
        assert [i["id"] for i in page.json()["items"] + nxt.json()["items"]] == [
            i["id"] for i in everyone.json()["items"][:4]
        ]

    async def test_audit_is_for_admins_only(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.get("/v1/audit", params={"user_id": "alice"}, headers=auth("alice"))
        assert resp.status_code == 403
        assert resp.json()["error"] == "forbidden"
        bad = await client.get("/v1/audit", params={"before": "not-an-id"}, headers=auth("root", "admin"))
        assert bad.status_code == 422


async def _domain(
    settings: Settings, embedder: Embedder
) -> AsyncIterator[tuple[MemoryService, Outbox, Eraser, RedisClient]]:
    redis = redis_of(settings)
    store = ChromaLongTermStore(
        chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
    )
    outbox = Outbox(redis)
    memory = build_memory_service(settings, store, embedder, redis, outbox)
    try:
        yield memory, outbox, Eraser(store, redis, memory, outbox), redis
    finally:
        await redis.aclose()


class TestDeletedStaysDeleted:
    async def test_delete_scrubs_pending_outbox_and_a_redelivery_does_not_revive_it(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        async for memory, outbox, _, redis in _domain(settings, embedder):
            fact = Message("user", "我的护照号码放在书房抽屉里", id="t1:u", timestamp=time.time())
            reply = Message("assistant", "好的，我记住了 passport in the study drawer", id="t1:a")
            entry = OutboxEntry("carol", "s1", (fact, reply))
            written = await memory.ingest("carol", "s1", [fact, reply])
            target = next(m for m in written if m.source_message_ids == ("t1:u",))
            # the same turn is still pending (a worker crashed after writing, before acknowledging)
            await outbox.append(entry)
            await outbox.append(OutboxEntry("dave", "s1", (Message("user", "dave's note", id="d1"),)))

            await memory.delete("carol", target.id)

            pending = [e async for _, e in outbox.entries_of("carol")]
            assert [[m.id for m in e.messages] for e in pending] == [["t1:a"]]  # the deleted message is gone
            assert [e.messages[0].id for _, e in [x async for x in outbox.entries_of("dave")]] == ["d1"]
            # a redelivery of the original entry (read before the delete) writes nothing back
            rewritten = await memory.ingest(entry.user_id, entry.session_id, entry.messages)
            assert target.id not in [m.id for m in rewritten]
            listed = await memory.list("carol", limit=10, offset=0, sort="recent")
            assert target.id not in [m.id for m in listed.items]
            hits = await memory.search("carol", "护照在哪里？ where is my passport", top_k=5)
            assert target.id not in [h.memory.id for h in hits]
            assert await redis.hexists(keys.ltm_tombstones("carol"), target.id)
            # saying it again in a new message is a new memory, not a resurrection
            again = await memory.ingest(
                "carol", "s2", [Message("user", "我的护照号码放在书房抽屉里", id="t9:u")]
            )
            assert [m.source_message_ids for m in again] == [("t9:u",)]

    async def test_forget_tombstones_every_forgotten_memory(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        async for memory, _, _, _ in _domain(settings, embedder):
            msgs = [
                Message("user", "下个月去日本旅行，订了东京的酒店", id="a"),
                Message("user", "Booked a flight to Tokyo for the trip", id="b"),
            ]
            await memory.ingest("erin", "s1", msgs)
            forgotten = await memory.forget("erin", topic="travel")
            assert len(forgotten.ids) == 2
            assert await memory.ingest("erin", "s1", msgs) == []

    async def test_a_write_issued_before_an_erase_does_not_land_after_it(
        self, settings: Settings, embedder: Embedder
    ) -> None:
        async for memory, outbox, eraser, redis in _domain(settings, embedder):
            await memory.ingest("frank", "s1", [Message("user", "I live in Porto 我住在波尔图", id="f0")])
            entry_id = await outbox.append(
                OutboxEntry("frank", "s1", (Message("user", "My PIN hint is my cat Tom", id="f1"),))
            )
            in_flight = [e async for i, e in outbox.entries_of("frank") if i == entry_id][
                0
            ]  # a worker read it

            receipt = await eraser.erase("frank")
            assert (receipt.deleted["chroma"], receipt.deleted["outbox"]) == (1, 1)

            await memory.ingest_entries([in_flight])  # the worker gets the lock only now
            assert (await memory.list("frank", limit=10, offset=0, sort="recent")).total == 0
            assert [k async for k in redis.scan_iter(match=keys.user_pattern("frank"))] == []
            assert "frank" not in keys.erased_marker("frank")  # the marker names no one
            assert await redis.exists(keys.erased_marker("frank"))

            # what the user writes after the erase is stored as usual
            new_id = await outbox.append(
                OutboxEntry("frank", "s2", (Message("user", "New start: I moved to Berlin", id="f2"),))
            )
            fresh = [e async for i, e in outbox.entries_of("frank") if i == new_id][0]
            await memory.ingest_entries([fresh])
            assert (await memory.list("frank", limit=10, offset=0, sort="recent")).total == 1
