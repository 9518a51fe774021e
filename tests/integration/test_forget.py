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
        done = await forget(client, auth, topic="travel", dry_run=False)
        assert done["ids"] == preview["ids"]
        assert await remaining(client, auth) == {"f-zh", "f-en", "w-en"}
        search = await client.post(
            "/v1/memory/alice/search", json={"query": "机票 flight"}, headers=auth("alice")
        )
        assert not {r["source_message_ids"][0] for r in search.json()["results"]} & {"t-zh", "t-en"}

    async def test_by_time(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        await seed(client, auth)
        done = await forget(client, auth, before=NOW - 30 * DAY, dry_run=False)
        assert done["count"] == 2
        assert await remaining(client, auth) == {"t-en", "f-en", "w-en"}
        done = await forget(client, auth, after="2026-09-20T00:00:00Z", topic="work", dry_run=False)
        assert await remaining(client, auth) == {"t-en", "f-en"}

    @pytest.mark.parametrize(
        ("query", "gone"), [("spicy food I like to eat", {"f-en"}), ("Lisbon flight", {"t-en"})]
    )
    async def test_by_meaning(
        self, client: httpx.AsyncClient, auth: AuthHeaders, query: str, gone: set[str]
    ) -> None:
        await seed(client, auth)
        await forget(client, auth, query=query, dry_run=False)
        assert gone.isdisjoint(await remaining(client, auth))
        assert len(await remaining(client, auth)) >= 3

    async def test_needs_a_criterion(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.post("/v1/memory/alice/forget", json={"dry_run": True}, headers=auth("alice"))
        assert resp.status_code == 422
        assert resp.json()["error"] == "validation_error"


# the user: 10 English and 10 Chinese facts, each about something else, one session each
UNRELATED = [
    ("en-job", "I work as a nurse at the children's hospital"),
    ("en-home", "I live in a small flat in Lisbon"),
    ("en-dog", "My dog Biscuit loves swimming in the lake"),
    ("en-chess", "I play chess online every evening"),
    ("en-dentist", "I have a dentist appointment on the 14th"),
    ("en-tea", "I prefer green tea in the afternoon"),
    ("en-passport", "I need to renew my passport before March"),
    ("en-guitar", "I started learning the guitar last month"),
    ("en-sister", "My sister Maria is getting married in June"),
    ("en-marathon", "I'm training for a half marathon in November"),
    ("zh-job", "我的工作是在银行做会计"),
    ("zh-home", "我住在杭州西湖边"),
    ("zh-dish", "我最喜欢吃的菜是酸菜鱼"),
    ("zh-order", "空气净化器的订单号是 TB20240518"),
    ("zh-badminton", "周末我一般去打羽毛球"),
    ("zh-cat", "我家的猫叫团子"),
    ("zh-birthday", "我的生日是十月二十三号"),
    ("zh-allergy", "我对花生过敏"),
    ("zh-piano", "我女儿在学钢琴"),
    ("zh-chengdu", "下个月我要去成都出差"),
]


async def seed_unrelated(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    for n, (mid, text) in enumerate(UNRELATED):
        message = {"role": "user", "content": text, "id": mid, "timestamp": NOW - (n + 1) * DAY}
        resp = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": f"s-{mid}", "messages": [message]},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text


def chosen(out: dict[str, object]) -> set[str]:
    memories = out["memories"]
    assert isinstance(memories, list)
    return {m["source_message_ids"][0] for m in memories}


class TestForgetCannotSurprise:
    """Issue 24's reproductions: forget by meaning chose unrelated memories."""

    async def test_a_long_chinese_text_forgets_nothing(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        """Before: the console's default (min_similarity 0.5) previewed and then deleted a favourite dish,
        a city and an order number: MiniLM sees any two Chinese texts as alike."""
        await seed_unrelated(client, auth)
        preview = await forget(client, auth, query="很长的中文文本", min_similarity=0.5, dry_run=True)
        assert preview["count"] == 0
        done = await forget(client, auth, query="很长的中文文本", min_similarity=0.5, dry_run=False)
        assert done["count"] == 0
        assert len(await remaining(client, auth)) == 20

    @pytest.mark.parametrize(
        ("query", "allowed", "must"),
        [
            ("我住在杭州", {"zh-home"}, {"zh-home"}),  # before: 6 unrelated (badminton, cat, birthday, ...)
            ("我的工作", {"zh-job", "en-job"}, {"zh-job"}),  # before: 11 chosen, 10 unrelated
            ("忘掉我住在哪里", {"zh-home", "en-home"}, {"zh-home"}),  # before: 11 chosen, 9 unrelated
            ("forget my job", {"en-job", "zh-job"}, {"en-job"}),
            ("Forget where I live", {"en-home", "zh-home"}, {"en-home"}),
            ("my dentist appointment", {"en-dentist"}, {"en-dentist"}),
        ],
    )
    async def test_a_dry_run_chooses_only_what_the_query_means(
        self, client: httpx.AsyncClient, auth: AuthHeaders, query: str, allowed: set[str], must: set[str]
    ) -> None:
        await seed_unrelated(client, auth)
        preview = await forget(client, auth, query=query)  # a dry run by default
        assert preview["dry_run"] is True
        assert must <= chosen(preview) <= allowed
        assert len(await remaining(client, auth)) == 20
        ids = {m["id"] for m in preview["memories"]}  # type: ignore[attr-defined]
        for m in preview["memories"]:  # type: ignore[attr-defined]
            why = m["why"]
            if why["by"] == "superseded":  # both jobs are the user's: the older one goes with the newer
                assert why["superseded_by"] in ids
                continue
            assert why["by"] == "query"
            assert why["relevance"] >= 0.7
            assert len(why["channels"]) >= 2
            assert set(why["channels"]) != {"bridge"}

    async def test_the_bridge_alone_never_forgets_across_languages(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await seed_unrelated(client, auth)
        for query in ("my favourite dish", "我的国际象棋"):
            preview = await forget(client, auth, query=query)
            for m in preview["memories"]:  # type: ignore[attr-defined]
                assert len(m["why"]["channels"]) >= 2

    async def test_more_than_the_cap_needs_the_exact_count(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        trips = [f"下周去{c}旅行，机票订好了" for c in ("东京", "大阪", "京都", "首尔", "曼谷", "新加坡")]
        trips += [
            f"My flight to {c} for the trip leaves on Friday"
            for c in ("Lisbon", "Porto", "Rome", "Paris", "Oslo", "Vienna")
        ]
        resp = await client.post(
            "/v1/memory/alice/messages",
            json={
                "session_id": "trips",
                "messages": [{"role": "user", "content": t, "id": f"trip-{i}"} for i, t in enumerate(trips)],
            },
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text
        preview = await forget(client, auth, topic="travel")
        assert preview["count"] == 12
        for body in ({}, {"expected_count": 11}, {"expected_count": 13}):
            resp = await client.post(
                "/v1/memory/alice/forget",
                json={"topic": "travel", "dry_run": False, **body},
                headers=auth("alice"),
            )
            assert resp.status_code == 422, resp.text
            assert resp.json()["error"] == "confirmation_required"
            assert "12" in resp.json()["detail"]
            assert len(await remaining(client, auth)) == 12  # nothing deleted
        done = await forget(client, auth, topic="travel", dry_run=False, expected_count=12)
        assert done["count"] == 12
        assert await remaining(client, auth) == set()

    @pytest.mark.parametrize(
        "body",
        [
            {"query": "我的工作", "min_relevance": 0.4},  # below the lowest floor
            {"query": "my job", "min_similarity": 0.2},  # the cosine rule stays
            {"query": "my job", "min_relevance": 0.8, "min_similarity": 0.5},  # one or the other
            {"topic": "work", "min_relevance": 0.8},  # a floor without a query
            {"query": "my job", "expected_count": -1},
        ],
    )
    async def test_floors_are_validated(
        self, client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, object]
    ) -> None:
        resp = await client.post("/v1/memory/alice/forget", json=body, headers=auth("alice"))
        assert resp.status_code == 422, resp.text
        assert resp.json()["error"] == "validation_error"
