"""Correcting a memory (issue 24): read it with its version, edit it (If-Match), read its history; across
workers, archive tiers, delete, export and erase. Real Redis and Chroma, the app's real model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.settings import Settings
from bench.archive_data import DAY
from memory import Embedder
from memory.models import Memory
from tests.conftest import AuthHeaders, app_client, redis_of
from tests.integration.test_archive import rig

pytestmark = pytest.mark.integration
USER = "alice"


async def store(client: httpx.AsyncClient, auth: AuthHeaders, text: str, mid: str = "m1") -> dict[str, Any]:
    body = {"session_id": "s1", "messages": [{"role": "user", "content": text, "id": mid}]}
    resp = await client.post(f"/v1/memory/{USER}/messages", json=body, headers=auth(USER))
    assert resp.status_code == 200, resp.text
    memory: dict[str, Any] = resp.json()["memories"][0]
    return memory


async def read(client: httpx.AsyncClient, auth: AuthHeaders, memory_id: str) -> httpx.Response:
    return await client.get(f"/v1/memory/{USER}/{memory_id}", headers=auth(USER))


async def patch(
    client: httpx.AsyncClient, auth: AuthHeaders, memory_id: str, body: dict[str, Any], version: str | None
) -> httpx.Response:
    headers = auth(USER) | ({"If-Match": f'"{version}"'} if version is not None else {})
    return await client.patch(f"/v1/memory/{USER}/{memory_id}", json=body, headers=headers)


async def contents(client: httpx.AsyncClient, auth: AuthHeaders, query: str) -> list[str]:
    resp = await client.post(f"/v1/memory/{USER}/search", json={"query": query}, headers=auth(USER))
    assert resp.status_code == 200, resp.text
    return [hit["content"] for hit in resp.json()["results"]]


class TestRead:
    async def test_one_memory_with_its_version(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        stored = await store(client, auth, "我住在杭州，记住这个")
        resp = await read(client, auth, stored["id"])
        assert resp.status_code == 200
        body = resp.json()
        assert body["content"] == stored["content"]
        assert resp.headers["etag"] == f'"{body["version"]}"'
        assert body["pinned"] is False
        missing = await read(client, auth, "mem_nope")
        assert missing.status_code == 404
        assert missing.json()["error"] == "memory_not_found"
        other = await client.get(f"/v1/memory/{USER}/{stored['id']}", headers=auth("mallory"))
        assert other.status_code == 403


class TestEdit:
    async def test_a_corrected_home_is_recalled_and_the_old_one_is_history(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        stored = await store(client, auth, "I live in Hangzhou, near the West Lake")
        assert any("Hangzhou" in c for c in await contents(client, auth, "where do I live?"))
        version = (await read(client, auth, stored["id"])).json()["version"]
        edited = await patch(
            client, auth, stored["id"], {"content": "I live in Suzhou now 我现在住在苏州"}, version
        )
        assert edited.status_code == 200, edited.text
        assert edited.json()["content"] == "I live in Suzhou now 我现在住在苏州"
        assert edited.json()["id"] == stored["id"]
        assert edited.json()["version"] != version
        found = await contents(client, auth, "where do I live? 我住在哪里")
        assert any("Suzhou" in c for c in found)
        assert not any("Hangzhou" in c for c in found)
        assert not any("Hangzhou" in c for c in await contents(client, auth, "Hangzhou West Lake"))
        history = (await client.get(f"/v1/memory/{USER}/{stored['id']}/history", headers=auth(USER))).json()
        kinds = [e["event"] for e in history["events"]]
        assert kinds == ["created", "edited"]
        change = history["events"][1]
        assert change["detail"]["content"]["before"].startswith("I live in Hangzhou")
        assert change["actor"] == USER
        assert change["role"] == "user"
        assert change["request_id"]
        assert history["events"][0]["detail"]["source_message_ids"] == ["m1"]
        audit = await client.get("/v1/audit", params={"action": "edit"}, headers=auth("root", "admin"))
        assert [e["user_id"] for e in audit.json()["items"]] == [USER]

    async def test_if_match_is_required_and_a_stale_version_is_412(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        stored = await store(client, auth, "My order number is A12345678")
        version = (await read(client, auth, stored["id"])).json()["version"]
        missing = await patch(client, auth, stored["id"], {"importance": 0.9}, None)
        assert missing.status_code == 428
        assert missing.json()["error"] == "precondition_required"
        first = await patch(client, auth, stored["id"], {"content": "My order number is A12345679"}, version)
        assert first.status_code == 200
        second = await patch(client, auth, stored["id"], {"content": "My order number is B0000"}, version)
        assert second.status_code == 412
        assert second.json()["error"] == "version_mismatch"
        assert second.headers["etag"] == f'"{first.json()["version"]}"'
        assert (await read(client, auth, stored["id"])).json()["content"] == "My order number is A12345679"

    @pytest.mark.parametrize(
        "if_match",
        [
            "garbage",
            "x" * 10_000,
            'W/"x"',
            '"0123456789abcdef", "fedcba9876543210"',
            "*",
            '"0123456789ABCDEF"',
        ],
    )
    async def test_a_malformed_if_match_is_400_naming_the_header(
        self, client: httpx.AsyncClient, auth: AuthHeaders, if_match: str
    ) -> None:
        """Issue 39: garbage answered 412 "changed since it was read"; it is no version at all."""
        stored = await store(client, auth, "My order number is A12345678")
        resp = await client.patch(
            f"/v1/memory/{USER}/{stored['id']}",
            json={"importance": 0.9},
            headers=auth(USER) | {"If-Match": if_match},
        )
        assert resp.status_code == 400, resp.text
        assert resp.json()["error"] == "invalid_header"
        assert "If-Match" in resp.json()["detail"]
        assert len(resp.text) < 1000  # the long value is not echoed
        version = (await read(client, auth, stored["id"])).json()["version"]
        missing = await patch(client, auth, stored["id"], {"importance": 0.9}, None)
        assert missing.status_code == 428
        ok = await client.patch(
            f"/v1/memory/{USER}/{stored['id']}",
            json={"importance": 0.9},
            headers=auth(USER) | {"If-Match": f'W/"{version}"'},
        )
        assert ok.status_code == 200, ok.text

    @pytest.mark.parametrize(
        "body",
        [
            {},
            {"content": "\u200b"},
            {"content": None},
            {"importance": 1.5},
            {"importance": True},  # issue 39: true was read as 1.0
            {"importance": "0.5"},
            {"content": "我对花生\x00过敏"},  # issue 39: the NUL was dropped silently
            {"pinned": "yes"},
            {"superseded_by": "x"},
            {"valid_to": "9999-99-99"},
        ],
    )
    async def test_bad_edits_are_422(
        self, client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, Any]
    ) -> None:
        stored = await store(client, auth, "我对花生过敏")
        version = (await read(client, auth, stored["id"])).json()["version"]
        resp = await patch(client, auth, stored["id"], body, version)
        assert resp.status_code == 422, resp.text
        assert resp.json()["error"] == "validation_error"

    async def test_importance_pinned_topic_and_no_longer_true(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        stored = await store(client, auth, "我在一家银行工作 / I work at a bank")
        version = (await read(client, auth, stored["id"])).json()["version"]
        body = {"importance": 0.95, "pinned": True, "topic": "bank-job", "valid_to": "2026-01-01T00:00:00Z"}
        edited = await patch(client, auth, stored["id"], body, version)
        assert edited.status_code == 200, edited.text
        out = edited.json()
        assert (out["importance"], out["pinned"], out["topic"]) == (0.95, True, "bank-job")
        assert out["valid_to"] == "2026-01-01T00:00:00Z"
        cleared = await patch(client, auth, stored["id"], {"valid_to": None, "topic": None}, out["version"])
        assert cleared.json()["valid_to"] is None
        assert cleared.json()["topic"] is None
        events = (await client.get(f"/v1/memory/{USER}/{stored['id']}/history", headers=auth(USER))).json()
        assert [e["event"] for e in events["events"]] == ["created", "edited", "edited"]
        assert set(events["events"][1]["detail"]) == {"importance", "pinned", "topic", "valid_to"}

    async def test_another_worker_sees_the_edit(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        async with app_client(settings, embedder) as (a, _), app_client(settings, embedder) as (b, _):
            stored = await store(a, auth, "My cat is called Mimi 我的猫叫咪咪")
            assert any("Mimi" in c for c in await contents(b, auth, "what is my cat called?"))  # b caches
            version = (await read(a, auth, stored["id"])).json()["version"]
            edited = await patch(
                a, auth, stored["id"], {"content": "My cat is called Niangao 我的猫叫年糕"}, version
            )
            assert edited.status_code == 200
            found = await contents(b, auth, "what is my cat called? 我的猫叫什么")
            assert any("Niangao" in c for c in found)
            assert not any("Mimi" in c for c in found)


class TestDeleteExportErase:
    async def test_a_deleted_memory_leaves_a_history_without_its_text(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        stored = await store(client, auth, "My passport number is E12345678")
        version = (await read(client, auth, stored["id"])).json()["version"]
        await patch(client, auth, stored["id"], {"content": "My passport number is E87654321"}, version)
        assert (
            await client.delete(f"/v1/memory/{USER}/{stored['id']}", headers=auth(USER))
        ).status_code == 204
        history = await client.get(f"/v1/memory/{USER}/{stored['id']}/history", headers=auth(USER))
        assert history.status_code == 200
        assert [e["event"] for e in history.json()["events"]] == ["deleted"]
        assert "E12345678" not in history.text
        assert "E87654321" not in history.text
        r = redis_of(settings)
        raw = [await r.xrange(k) async for k in r.scan_iter(match="*ltm:history*")]
        await r.aclose()
        assert "E12345678" not in str(raw)
        assert (
            await client.get(f"/v1/memory/{USER}/mem_never/history", headers=auth(USER))
        ).status_code == 404

    async def test_history_is_exported_and_erased_with_the_user(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        stored = await store(client, auth, "我的车牌号是浙A12345")
        version = (await read(client, auth, stored["id"])).json()["version"]
        await patch(client, auth, stored["id"], {"content": "我的车牌号是浙B54321"}, version)
        exported = (await client.get(f"/v1/memory/{USER}/export", headers=auth(USER))).json()
        events = exported["history"][stored["id"]]
        assert [e["event"] for e in events] == ["edited"]
        assert events[0]["detail"]["content"]["before"] == "我的车牌号是浙A12345"
        assert exported["counts"]["history_events"] == 1
        erased = await client.delete(f"/v1/memory/{USER}", params={"confirm": USER}, headers=auth(USER))
        assert erased.status_code == 200
        r = redis_of(settings)
        left = [k async for k in r.scan_iter(match="*ltm:history*")]
        await r.aclose()
        assert left == []


class TestArchived:
    async def test_editing_a_warm_or_cold_memory_brings_it_back_to_hot(
        self, settings: Settings, embedder: Embedder, tmp_path: Path, auth: AuthHeaders
    ) -> None:
        cold_url = str(tmp_path / "archive")
        s = settings.model_copy(update={"archive_cold_url": cold_url})
        async with rig(s, cold_url) as r:
            batch = [
                Memory(
                    id=mid,
                    user_id=USER,
                    content=text,
                    created_at=time.time() - age * DAY,
                    session_id="s1",
                    source="user",
                    content_hash=f"h-{mid}",
                )
                for mid, text, age in (
                    ("w1", "我住在杭州，在西湖边上", 200),
                    ("c1", "My first car was a red Volvo", 500),
                )
            ]
            await r.store.upsert(batch, await embedder.embed([m.embed_text for m in batch]))
            await r.archiver().run()
        async with app_client(s, embedder) as (client, _):
            for mid, tier, text in (
                ("w1", "warm", "我现在住在苏州"),
                ("c1", "cold", "My first car was a blue Saab"),
            ):
                before = (await read(client, auth, mid)).json()
                assert before["archive_tier"] == tier
                edited = await patch(client, auth, mid, {"content": text}, before["version"])
                assert edited.status_code == 200, edited.text
                assert edited.json()["archive_tier"] == "hot"
                listed = await client.get(f"/v1/memory/{USER}/list", headers=auth(USER))
                assert [i["content"] for i in listed.json()["items"] if i["id"] == mid] == [text]
                history = await client.get(f"/v1/memory/{USER}/{mid}/history", headers=auth(USER))
                kinds = [(e["event"], e["detail"].get("from")) for e in history.json()["events"]]
                assert ("restored", tier) in kinds
                assert kinds[-1][0] == "edited"
            assert any("苏州" in c for c in await contents(client, auth, "我住在哪里？"))
