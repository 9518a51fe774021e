"""Admin tools (issue 25): find users by id prefix (one SCAN over every master, standalone or Redis
Cluster: run with MNEMO_TEST_REDIS=cluster too) and the erase preview, whose counts are what the erase
then deletes. Both admin only, validated, audited."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from app.settings import Settings
from memory import Embedder, keys
from memory.governance.users import UserDirectory
from tests.conftest import AuthHeaders, app_client, redis_of

pytestmark = pytest.mark.integration

USERS = ("anna", "anna.b", "annabel", "andrew", "bob", "Anna")


async def seed(client: httpx.AsyncClient, auth: AuthHeaders, user: str, chat: bool = False) -> None:
    body = {"session_id": "s1", "messages": [{"role": "user", "content": f"{user} lives in Hangzhou 杭州"}]}
    assert (
        await client.post(f"/v1/memory/{user}/messages", json=body, headers=auth(user))
    ).status_code == 200
    if chat:
        turn = {"messages": [{"role": "user", "content": "明天下午3点去浦东机场"}], "session_id": "s2"}
        assert (await client.post("/v1/chat/completions", json=turn, headers=auth(user))).status_code == 200


class TestFindUsers:
    async def test_by_prefix_in_id_order_with_a_limit(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        async with app_client(settings, embedder) as (client, _):
            for user in USERS:
                await seed(client, auth, user, chat=user == "annabel")
            admin = auth("ops", role="admin")
            found = await client.get("/v1/admin/users", params={"prefix": "ann"}, headers=admin)
            assert found.status_code == 200, found.text
            assert found.json() == {"prefix": "ann", "users": ["anna", "anna.b", "annabel"], "more": False}
            two = (
                await client.get("/v1/admin/users", params={"prefix": "an", "limit": 2}, headers=admin)
            ).json()
            assert two == {"prefix": "an", "users": ["andrew", "anna"], "more": True}
            exact = (await client.get("/v1/admin/users", params={"prefix": "bob"}, headers=admin)).json()
            assert exact["users"] == ["bob"]
            case = (await client.get("/v1/admin/users", params={"prefix": "A"}, headers=admin)).json()
            assert case["users"] == ["Anna"]  # ids are case-sensitive
            none = (await client.get("/v1/admin/users", params={"prefix": "zed"}, headers=admin)).json()
            assert none == {"prefix": "zed", "users": [], "more": False}

            # audited, with what was found (ids only)
            audit = (await client.get("/v1/audit", params={"action": "find"}, headers=admin)).json()["items"]
            assert [(e["user_id"], e["count"], e["details"]["users"]) for e in audit][-1] == (
                "ann",
                3,
                "anna,anna.b,annabel",
            )
            # an erased user is found no more
            erased = await client.delete("/v1/memory/anna.b", params={"confirm": "anna.b"}, headers=admin)
            assert erased.status_code == 200
            again = (await client.get("/v1/admin/users", params={"prefix": "ann"}, headers=admin)).json()
            assert again["users"] == ["anna", "annabel"]

    async def test_admins_only_and_the_id_rule(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        refused = await client.get("/v1/admin/users", params={"prefix": "a"}, headers=auth("anna"))
        assert refused.status_code == 403
        assert refused.json()["error"] == "forbidden"
        admin = auth("ops", role="admin")
        for bad in ("", "a b", "{p0001}", "a*", "a?", "[a]", "x" * 129, ".."):
            resp = await client.get("/v1/admin/users", params={"prefix": bad}, headers=admin)
            assert resp.status_code == 422, (bad, resp.text)
            assert resp.json()["error"] == "validation_error"
        missing = await client.get("/v1/admin/users", headers=admin)
        assert missing.status_code == 422
        over = await client.get("/v1/admin/users", params={"prefix": "a", "limit": 101}, headers=admin)
        assert over.status_code == 422
        assert (await client.get("/v1/admin/users", params={"prefix": "a"})).status_code == 401

    async def test_the_scan_covers_every_partition_and_stops_at_the_cap(self, settings: Settings) -> None:
        redis = redis_of(settings)
        users = [f"cap{i:03d}" for i in range(40)]
        # keys in many partitions (and, on a cluster, on every master)
        assert len({keys.partition_of(u) for u in users}) > 10
        for u in users:
            await redis.set(keys.ltm_version(u), 1)
        await redis.set("mnemo:{p0001}:u:{cap-not-a-key}", 1)  # no user key: no `}:` after the id
        found = await UserDirectory(redis).find("cap", 100)
        assert found.users == users
        assert found.more is False
        capped = await UserDirectory(redis, cap=10).find("cap", 5)
        assert len(capped.users) == 5
        assert capped.more is True


class TestErasePreview:
    async def test_counts_are_what_the_erase_then_deletes(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        async with app_client(settings, embedder) as (client, _):
            await seed(client, auth, "alice", chat=True)
            await seed(client, auth, "bob")
            admin = auth("ops", role="admin")
            # the chat turn's long-term write runs in the background: preview once it has settled (two
            # previews alike, nothing left in the outbox), so the erase deletes what the preview counted
            preview: dict[str, Any] = {}
            for _ in range(150):
                resp = await client.get("/v1/admin/users/alice/erase-preview", headers=admin)
                assert resp.status_code == 200, resp.text
                settled, preview = resp.json() == preview and preview["outbox"] == 0, resp.json()
                if settled:
                    break
                await asyncio.sleep(0.2)
            assert preview["held"] is True
            assert preview["memories"]["hot"] >= 1
            assert set(preview["memories"]) == {"hot", "warm", "cold"}
            assert preview["memories_total"] == sum(preview["memories"].values())
            assert sum(preview["kinds"].values()) == preview["memories_total"]
            assert preview["sessions"] == 1  # s2 (the chat) holds short-term state; s1 only memories
            assert preview["buffer_messages"] == 2
            receipt = (
                await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=admin)
            ).json()
            assert receipt["deleted"]["redis_keys"] == preview["redis_keys"]
            assert receipt["deleted"]["chroma"] + receipt["deleted"].get("warm", 0) == (
                preview["memories"]["hot"] + preview["memories"]["warm"]
            )
            assert receipt["deleted"]["outbox"] == preview["outbox"]
            after = (await client.get("/v1/admin/users/alice/erase-preview", headers=admin)).json()
            assert after["held"] is False
            assert after["memories_total"] == after["redis_keys"] == after["sessions"] == 0
            bob = (await client.get("/v1/admin/users/bob/erase-preview", headers=admin)).json()
            assert bob["held"] is True  # the other user is untouched
            audit = (
                await client.get(
                    "/v1/audit", params={"action": "erase_preview", "user_id": "alice"}, headers=admin
                )
            ).json()["items"]
            held = [e["details"]["held"] for e in audit]  # newest first: after the erase, then the polls
            assert held[0] == "false"
            assert set(held[1:]) == {"true"}

    async def test_admins_only_and_the_id_rule(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        own = await client.get("/v1/admin/users/alice/erase-preview", headers=auth("alice"))
        assert own.status_code == 403
        assert own.json()["error"] == "forbidden"
        admin = auth("ops", role="admin")
        bad = await client.get("/v1/admin/users/a%7Bb%7D/erase-preview", headers=admin)
        assert bad.status_code == 422
        assert bad.json()["error"] == "validation_error"
