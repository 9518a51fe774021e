"""Forget by topic, time and meaning, in Chinese and English; dry_run changes nothing."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import AuthHeaders

pytestmark = pytest.mark.integration
DAY = 86400.0
NOW = 1_790_000_000.0

MEMORIES = [
    ("t-zh", "下周要去日本旅行，机票已经订好了", NOW - 40 * DAY),
    ("t-en", "My flight to Lisbon leaves on Friday", NOW - 2 * DAY),
    ("f-zh", "我最喜欢吃四川火锅", NOW - 40 * DAY),
    ("f-en", "I love eating spicy ramen at night", NOW - 2 * DAY),
    ("w-en", "the project meeting with my boss went well", NOW - 1 * DAY),
]


async def seed(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    resp = await client.post(
        "/v1/memory/alice/messages",
        json={
            "session_id": "s1",
            "messages": [{"role": "user", "content": c, "id": i, "timestamp": t} for i, c, t in MEMORIES],
        },
        headers=auth("alice"),
    )
    assert resp.status_code == 200


async def forget(client: httpx.AsyncClient, auth: AuthHeaders, **body: object) -> dict[str, object]:
    resp = await client.post("/v1/memory/alice/forget", json=body, headers=auth("alice"))
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


async def remaining(client: httpx.AsyncClient, auth: AuthHeaders) -> set[str]:
    listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
    return {m["source_message_ids"][0] for m in listed["items"]}


class TestForget:
    async def test_by_topic_in_both_languages_with_dry_run_first(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await seed(client, auth)
        preview = await forget(client, auth, topic="travel", dry_run=True)
        assert preview["count"] == 2
        assert preview["dry_run"] is True
        assert len(await remaining(client, auth)) == 5  # nothing changed
        done = await forget(client, auth, topic="travel")
        assert done["ids"] == preview["ids"]
        assert await remaining(client, auth) == {"f-zh", "f-en", "w-en"}
        search = await client.post(
            "/v1/memory/alice/search", json={"query": "机票 flight"}, headers=auth("alice")
        )
        assert not {r["source_message_ids"][0] for r in search.json()["results"]} & {"t-zh", "t-en"}

    async def test_by_time(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        await seed(client, auth)
        done = await forget(client, auth, before=NOW - 30 * DAY)
        assert done["count"] == 2
        assert await remaining(client, auth) == {"t-en", "f-en", "w-en"}
        done = await forget(client, auth, after="2026-09-20T00:00:00Z", topic="work")
        assert await remaining(client, auth) == {"t-en", "f-en"}

    @pytest.mark.parametrize(
        ("query", "gone"), [("spicy food I like to eat", {"f-en"}), ("Lisbon flight", {"t-en"})]
    )
    async def test_by_meaning(
        self, client: httpx.AsyncClient, auth: AuthHeaders, query: str, gone: set[str]
    ) -> None:
        await seed(client, auth)
        await forget(client, auth, query=query, min_similarity=0.45)
        assert gone.isdisjoint(await remaining(client, auth))
        assert len(await remaining(client, auth)) >= 3

    async def test_needs_a_criterion(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.post("/v1/memory/alice/forget", json={"dry_run": True}, headers=auth("alice"))
        assert resp.status_code == 422
        assert resp.json()["error"] == "validation_error"
