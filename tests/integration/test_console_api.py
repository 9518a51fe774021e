"""What the API gained for the console (issue 16): search explained, list filters by tier and time, the
forget preview's memories, the list of a user's sessions, and audit filters by action and time."""

from __future__ import annotations

import time

import httpx
import pytest

from tests.conftest import AuthHeaders
from tests.integration.test_memory_api import assert_envelope, ingest

pytestmark = pytest.mark.integration


class TestSearchExplained:
    async def test_the_breakdown_adds_up_to_the_score(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        assert (await ingest(client, auth)).status_code == 200
        for query in ("我住在哪个城市？", "where do I work?"):
            resp = await client.post(
                "/v1/memory/alice/search", json={"query": query, "explain": True}, headers=auth("alice")
            )
            assert resp.status_code == 200, resp.text
            for hit in resp.json()["results"]:
                x = hit["explain"]
                fused = x["dense"] + x["keyword"] + x["bridge"] + sum(x["boosts"].values())
                assert x["fused"] == pytest.approx(fused, abs=1e-5)
                assert hit["score"] == pytest.approx(
                    x["fused"] * x["recency_factor"] * x["validity_factor"], abs=1e-5
                )
                assert x["evidence"]["fused"] == pytest.approx(fused, abs=1e-5)
                assert 0.0 <= hit["relevance"] <= 1.0
                assert 0.0 <= x["recency"] <= 1.0
                assert [s["id"] for s in hit["source_messages"]] == hit["source_message_ids"]
        top = resp.json()["results"][0]
        assert "nurse" in top["content"]
        assert top["explain"]["boosts"].get("name") is None  # the query names nobody

    async def test_without_explain_the_answer_is_unchanged(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        assert (await ingest(client, auth)).status_code == 200
        resp = await client.post("/v1/memory/alice/search", json={"query": "芒果"}, headers=auth("alice"))
        hit = resp.json()["results"][0]
        assert hit["explain"] is None
        assert hit["source_messages"] is None

    async def test_source_messages_of_a_chat_turn_come_from_the_session_buffer(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        turn = {
            "model": "mnemo",
            "session_id": "c1",
            "messages": [{"role": "user", "content": "我下周去成都出差"}],
        }
        assert (
            await client.post("/v1/chat/completions", json=turn, headers=auth("alice"))
        ).status_code == 200
        deadline = time.monotonic() + 30  # the outbox writes the turn a moment later
        while True:
            resp = await client.post(
                "/v1/memory/alice/search", json={"query": "成都出差", "explain": True}, headers=auth("alice")
            )
            results = resp.json()["results"]
            if results:
                break
            assert time.monotonic() < deadline
            time.sleep(0.2)
        (source,) = results[0]["source_messages"]
        assert source["session_id"] == "c1"
        assert source["role"] == "user"
        assert source["content"] == "我下周去成都出差"
        assert source["timestamp"].endswith("Z")


class TestListFilters:
    async def test_tier_and_time_range(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        assert (await ingest(client, auth)).status_code == 200
        everything = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()["items"]
        tiers = {m["tier"] for m in everything}
        assert tiers <= {"fact", "episodic"}
        for tier in tiers:
            page = await client.get("/v1/memory/alice/list", params={"tier": tier}, headers=auth("alice"))
            assert {m["tier"] for m in page.json()["items"]} == {tier}
        page = await client.get(
            "/v1/memory/alice/list",
            params={"since": "2026-11-01T01:00:00Z", "until": "2026-11-01T03:00:00Z"},
            headers=auth("alice"),
        )
        assert [m["content"] for m in page.json()["items"]] == ["我住在杭州"]  # the anchor is not kept

    async def test_since_after_until_is_a_validation_error(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        resp = await client.get(
            "/v1/memory/alice/list",
            params={"since": "2026-12-01", "until": "2026-01-01"},
            headers=auth("alice"),
        )
        assert_envelope(resp, 422, "validation_error")
        bad = await client.get("/v1/memory/alice/list", params={"tier": "core"}, headers=auth("alice"))
        assert_envelope(bad, 422, "validation_error")


class TestForgetPreview:
    async def test_a_dry_run_shows_what_would_go(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        assert (await ingest(client, auth)).status_code == 200
        resp = await client.post(
            "/v1/memory/alice/forget", json={"query": "水果", "dry_run": True}, headers=auth("alice")
        )
        body = resp.json()
        assert body["count"] == len(body["ids"]) == len(body["memories"]) >= 1
        assert [m["id"] for m in body["memories"]] == body["ids"]
        assert any("芒果" in m["content"] for m in body["memories"])
        done = await client.post(
            "/v1/memory/alice/forget", json={"query": "水果", "dry_run": False}, headers=auth("alice")
        )
        assert done.json()["memories"] is None
        assert done.json()["ids"] == body["ids"]


class TestSessionList:
    async def test_the_sessions_holding_state(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        empty = await client.get("/v1/sessions/alice", headers=auth("alice"))
        assert empty.json() == {"session_ids": [], "sessions": []}
        for sid in ("s-b", "s-a"):
            turn = {
                "model": "mnemo",
                "session_id": sid,
                "messages": [{"role": "user", "content": "hello 你好"}],
            }
            assert (
                await client.post("/v1/chat/completions", json=turn, headers=auth("alice"))
            ).status_code == 200
        listed = await client.get("/v1/sessions/alice", headers=auth("alice"))
        assert listed.json()["session_ids"] == ["s-a", "s-b"]
        assert [(s["session_id"], s["short_term"]) for s in listed.json()["sessions"]] == [
            ("s-a", True),
            ("s-b", True),
        ]
        assert_envelope(await client.get("/v1/sessions/alice", headers=auth("bob")), 403, "forbidden")
        assert (await client.get("/v1/sessions/alice", headers=auth("ops", "admin"))).status_code == 200

    async def test_sessions_written_through_messages_are_listed_with_their_memories(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        """Issue 25: a session known only from /messages holds no short-term state, but its memories
        came from it: the console lists it."""
        assert (await ingest(client, auth)).status_code == 200
        stored = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()["total"]
        listed = (await client.get("/v1/sessions/alice", headers=auth("alice"))).json()
        assert listed["session_ids"] == []
        assert listed["sessions"] == [{"session_id": "s1", "short_term": False, "memories": stored}]


class TestAuditOfReads:
    async def test_admin_reads_searches_and_chats_as_a_user_are_recorded_own_views_are_not(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        """Issue 25: an admin's list, search, session reads and chat as a user are in the audit trail;
        a user's own page views are not (they are no governance action, and they drowned the rest)."""
        assert (await ingest(client, auth)).status_code == 200
        alice, admin = auth("alice"), auth("ops", "admin")
        search = {"query": "where do I work?"}
        turn = {"model": "mnemo", "session_id": "c1", "messages": [{"role": "user", "content": "hi there"}]}
        for headers in (alice, admin):
            assert (await client.get("/v1/memory/alice/list", headers=headers)).status_code == 200
            assert (
                await client.post("/v1/memory/alice/search", json=search, headers=headers)
            ).status_code == 200
            assert (await client.get("/v1/sessions/alice", headers=headers)).status_code == 200
            assert (await client.get("/v1/sessions/alice/c1", headers=headers)).status_code == 200
            body = turn if headers is alice else {**turn, "user_id": "alice"}
            assert (await client.post("/v1/chat/completions", json=body, headers=headers)).status_code == 200
        items = (await client.get("/v1/audit", params={"user_id": "alice"}, headers=admin)).json()["items"]
        assert [(i["action"], i["actor"]) for i in items] == [
            ("chat", "ops"),
            ("read", "ops"),
            ("read", "ops"),
            ("search", "ops"),
            ("list", "ops"),
        ]
        assert items[1]["details"] == {"session_id": "c1"}
        assert "where" not in str(items[3]["details"])  # the query's words are not recorded


class TestAuditFilters:
    async def test_by_action_and_time(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        assert (await ingest(client, auth)).status_code == 200
        start = time.time()
        admin = auth("ops", "admin")
        await client.get("/v1/memory/alice/list", headers=admin)
        await client.post(
            "/v1/memory/alice/forget", json={"topic": "x", "dry_run": True}, headers=auth("alice")
        )
        await client.get("/v1/memory/bob/list", headers=admin)

        async def actions(**params: str | float) -> list[tuple[str, str]]:
            resp = await client.get("/v1/audit", params=params, headers=admin)
            assert resp.status_code == 200, resp.text
            return [(e["action"], e["user_id"]) for e in resp.json()["items"]]

        assert await actions() == [("list", "bob"), ("forget", "alice"), ("list", "alice")]
        assert await actions(action="list") == [("list", "bob"), ("list", "alice")]
        assert await actions(action="forget", user_id="alice") == [("forget", "alice")]
        assert await actions(since=start - 60, until=time.time() + 60) == await actions()
        assert await actions(until=start - 60) == []
        assert await actions(since=time.time() + 60) == []
        page = (await client.get("/v1/audit", params={"action": "list", "limit": 1}, headers=admin)).json()
        rest = await actions(action="list", before=page["next_before"], until=time.time() + 60)
        assert rest == [("list", "alice")]
        assert_envelope(
            await client.get("/v1/audit", params={"action": "peek"}, headers=admin), 422, "validation_error"
        )
        assert_envelope(
            await client.get("/v1/audit", params={"since": 2_000_000_000, "until": 1}, headers=admin),
            422,
            "validation_error",
        )
