"""Facts that change, end to end on real Redis and Chroma with the real model: supersession stored in
the metadata, shown by the API, hidden on request, ranked for the present and the past, exported as a
chain, forgotten and erased with the memory that replaced it, and marked in a chat turn's prompt."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client import REGISTRY

from app.cli import claims as claims_cli
from app.composition import build_archive, build_memory_service, build_store, tier_policy
from app.settings import Settings
from harness.outbox import drain
from memory import Embedder
from memory.archive.mover import Archiver
from memory.models import Message, RecallRequest
from tests.conftest import AuthHeaders, app_client, chroma_client, records_on, redis_of
from tests.fake_llm import FakeUpstream
from tests.integration.test_chat import chat, llm_settings

pytestmark = pytest.mark.integration
DAY = 86400.0

CASES = [
    pytest.param(
        "I live in Hangzhou.",
        "I moved to Suzhou last week, new flat is great.",
        "Where do I live now?",
        "Where did I live before?",
        id="en",
    ),
    pytest.param(
        "我住在杭州。", "我上周搬到苏州了，新房子很好。", "我现在住在哪？", "我以前住在哪？", id="zh"
    ),
]


async def store(
    client: httpx.AsyncClient, auth: AuthHeaders, messages: list[tuple[str, str, float]], user: str = "alice"
) -> list[dict[str, Any]]:
    resp = await client.post(
        f"/v1/memory/{user}/messages",
        json={
            "session_id": "s1",
            "messages": [{"role": "user", "content": c, "id": i, "timestamp": t} for i, c, t in messages],
        },
        headers=auth(user),
    )
    assert resp.status_code == 200, resp.text
    memories: list[dict[str, Any]] = resp.json()["memories"]
    return memories


async def search(client: httpx.AsyncClient, auth: AuthHeaders, query: str, top_k: int = 3) -> list[str]:
    resp = await client.post(
        "/v1/memory/alice/search", json={"query": query, "top_k": top_k}, headers=auth("alice")
    )
    assert resp.status_code == 200, resp.text
    return [r["source_message_ids"][0] for r in resp.json()["results"]]


async def listed(client: httpx.AsyncClient, auth: AuthHeaders, **params: Any) -> list[dict[str, Any]]:
    resp = await client.get("/v1/memory/alice/list", params=params, headers=auth("alice"))
    assert resp.status_code == 200, resp.text
    items: list[dict[str, Any]] = resp.json()["items"]
    return items


def stored_metadata(settings: Settings, memory_id: str) -> dict[str, Any]:
    client = chroma_client(settings.chroma_url)
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if name.startswith(f"{settings.chroma_collection_prefix}-mem-"):  # not the bridge's -xl-mem-
            got = client.get_collection(name, embedding_function=None).get(
                ids=[memory_id], include=["metadatas"]
            )
            if got["ids"]:
                return dict(got["metadatas"][0])
    raise AssertionError(f"{memory_id} is not in Chroma")


def history(now: float, old: str, new: str) -> list[tuple[str, str, float]]:
    return [
        ("old", old, now - 200 * DAY),
        ("d1", "The weather was awful today, rain all afternoon. 今天下了一下午的雨。", now - 120 * DAY),
        ("new", new, now - 50 * DAY),
        ("d2", "My sister lives in Porto. 我姐姐住在北京。", now - 30 * DAY),
    ]


class TestStoredChain:
    @pytest.mark.parametrize(("old", "new", "present", "past"), CASES)
    async def test_api_shows_validity_and_hides_superseded_on_request(
        self,
        client: httpx.AsyncClient,
        auth: AuthHeaders,
        settings: Settings,
        old: str,
        new: str,
        present: str,
        past: str,
    ) -> None:
        now = time.time()
        await store(client, auth, history(now, old, new))
        items = {m["source_message_ids"][0]: m for m in await listed(client, auth)}
        assert items["old"]["superseded_by"] == items["new"]["id"]
        assert items["old"]["valid_to"] == items["new"]["valid_from"]
        assert items["new"]["superseded_by"] is None
        assert items["new"]["valid_to"] is None
        assert items["d2"]["superseded_by"] is None  # someone else's residence replaces nothing
        current = [m["source_message_ids"][0] for m in await listed(client, auth, current_only="true")]
        assert sorted(current) == ["d1", "d2", "new"]
        # kept in Chroma, never deleted, with the validity in its metadata
        assert (items["old"]["id"], "alice") in records_on(
            settings.chroma_url, settings.chroma_collection_prefix
        )
        meta = stored_metadata(settings, items["old"]["id"])
        assert meta["superseded_by"] == items["new"]["id"]
        assert meta["valid_to"] > meta["valid_from"] > 0

    @pytest.mark.parametrize(("old", "new", "present", "past"), CASES)
    async def test_present_ranks_current_first_and_past_finds_both(
        self,
        client: httpx.AsyncClient,
        auth: AuthHeaders,
        old: str,
        new: str,
        present: str,
        past: str,
    ) -> None:
        now = time.time()
        await store(client, auth, history(now, old, new))
        ranked = await search(client, auth, present)
        assert ranked[0] == "new", ranked
        assert "old" not in ranked[:1]
        earlier = await search(client, auth, past, top_k=5)
        assert {"old", "new"} <= set(earlier), earlier

    async def test_a_late_write_about_an_earlier_time_is_superseded_itself(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        now = time.time()
        await store(client, auth, [("new", "I work at Northwind Labs.", now - 10 * DAY)])
        await store(client, auth, [("old", "I work at Acme Bank.", now - 300 * DAY)])
        items = {m["source_message_ids"][0]: m for m in await listed(client, auth)}
        assert items["old"]["superseded_by"] == items["new"]["id"]
        assert items["new"]["superseded_by"] is None

    async def test_restating_the_same_value_supersedes_nothing(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        now = time.time()
        await store(
            client,
            auth,
            [
                ("a", "I live in Hangzhou.", now - 100 * DAY),
                ("b", "I still live in Hangzhou, love it.", now - DAY),
            ],
        )
        assert all(m["superseded_by"] is None for m in await listed(client, auth))

    async def test_off_switch_keeps_the_old_pipeline(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        off = settings.model_copy(update={"supersession": False})
        async with app_client(off, embedder) as (client, _):
            now = time.time()
            await store(client, auth, history(now, "I live in Hangzhou.", "I moved to Suzhou last week."))
            assert all(m["superseded_by"] is None for m in await listed(client, auth))


class TestGovernance:
    async def test_export_keeps_the_chain(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        now = time.time()
        await store(client, auth, history(now, "我住在杭州。", "我上周搬到苏州了。"))
        resp = await client.get("/v1/memory/alice/export", headers=auth("alice"))
        assert resp.status_code == 200
        doc = json.loads(resp.content)
        by_source = {m["source_message_ids"][0]: m for m in doc["memories"]}
        assert by_source["old"]["superseded_by"] == by_source["new"]["id"]
        assert by_source["old"]["valid_to"] == by_source["new"]["valid_from"]
        assert by_source["new"]["facts"] == [["residence", "苏州"]]

    async def test_forget_covers_the_memories_a_forgotten_one_superseded(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        now = time.time()
        stored = await store(
            client, auth, history(now, "I live in Hangzhou.", "I moved to Suzhou last week.")
        )
        new_id = next(m["id"] for m in stored if m["source_message_ids"] == ["new"])
        old_id = next(m["id"] for m in stored if m["source_message_ids"] == ["old"])
        resp = await client.post(
            "/v1/memory/alice/forget",
            json={"after": now - 60 * DAY, "before": now - 40 * DAY, "dry_run": False},
            headers=auth("alice"),
        )
        assert resp.status_code == 200, resp.text
        assert sorted(resp.json()["ids"]) == sorted([new_id, old_id])
        left = [m["source_message_ids"][0] for m in await listed(client, auth)]
        assert sorted(left) == ["d1", "d2"]

    async def test_deleting_the_current_memory_makes_the_older_one_current_again(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        now = time.time()
        stored = await store(
            client, auth, history(now, "I live in Hangzhou.", "I moved to Suzhou last week.")
        )
        new_id = next(m["id"] for m in stored if m["source_message_ids"] == ["new"])
        assert (await client.delete(f"/v1/memory/alice/{new_id}", headers=auth("alice"))).status_code == 204
        items = {m["source_message_ids"][0]: m for m in await listed(client, auth)}
        assert items["old"]["superseded_by"] is None
        assert items["old"]["valid_to"] is None
        assert "old" in [m["source_message_ids"][0] for m in await listed(client, auth, current_only="true")]
        resp = await client.post(
            "/v1/memory/alice/search",
            json={"query": "Where do I live now?", "top_k": 3},
            headers=auth("alice"),
        )
        hit = next(r for r in resp.json()["results"] if r["source_message_ids"] == ["old"])
        assert hit["superseded_by"] is None

    async def test_erase_removes_current_and_superseded(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        now = time.time()
        await store(client, auth, history(now, "I live in Hangzhou.", "I moved to Suzhou last week."))
        receipt = await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=auth("alice"))
        assert receipt.status_code == 200, receipt.text
        assert receipt.json()["deleted"]["chroma"] == 4
        assert await listed(client, auth) == []


class TestChatTurn:
    @pytest.mark.parametrize(
        ("old", "new", "question", "needle_old", "needle_new", "mark"),
        [
            (
                "I live in Hangzhou.",
                "I moved to Suzhou last week, new flat is great.",
                "Where do I live now?",
                "Hangzhou",
                "Suzhou",
                "(earlier, until ",
            ),
            ("我住在杭州。", "我上周搬到苏州了，新房子很好。", "我现在住在哪？", "杭州", "苏州", "(此前，至"),
            # changes of anything the user names (issue 45: `changed:<subject>` claims)
            (
                "Our team's deploy window is now Tuesday afternoons.",
                "Our team's deploy window is now Friday mornings.",
                "When is our team's deploy window now?",
                "Tuesday",
                "Friday",
                "(earlier, until ",
            ),
            (
                "我们组的发布窗口现在改到周二下午了。",
                "我们组的发布窗口现在改到周五上午了。",
                "我们组现在的发布窗口是什么时候？",
                "周二",
                "周五",
                "(此前，至",
            ),
        ],
    )
    async def test_upstream_sees_the_current_fact_first_and_the_old_one_marked(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        old: str,
        new: str,
        question: str,
        needle_old: str,
        needle_new: str,
        mark: str,
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            now = time.time()
            await store(client, auth, history(now, old, new))
            turns = REGISTRY.get_sample_value("mnemo_chat_memories_injected_count") or 0.0
            injected = REGISTRY.get_sample_value("mnemo_chat_memories_injected_sum") or 0.0
            empty = REGISTRY.get_sample_value("mnemo_chat_recall_empty_total") or 0.0
            resp = await chat(client, auth, question, session="B")
            assert resp.status_code == 200, resp.text
            assert REGISTRY.get_sample_value("mnemo_chat_memories_injected_count") == turns + 1
            assert (REGISTRY.get_sample_value("mnemo_chat_memories_injected_sum") or 0.0) >= injected + 2
            assert REGISTRY.get_sample_value("mnemo_chat_recall_empty_total") == empty
            await drain(settings)
            system = upstream.chat_requests()[-1]["messages"][0]["content"]
            lines = [line for line in system.splitlines() if line.startswith("- (")]
            # lines read newest first (issue 40: by when they were said): the current fact before the
            # one it replaced, which is marked
            current = next(i for i, line in enumerate(lines) if needle_new in line)
            assert not lines[current].startswith(f"- {mark}"), system
            old_lines = [i for i, line in enumerate(lines) if needle_old in line and needle_new not in line]
            assert old_lines, system
            assert current < old_lines[0], system
            assert lines[old_lines[0]].startswith(f"- {mark}"), lines[old_lines[0]]
            await chat(client, auth, "hello there 你好", user="carol", session="C")  # nothing to recall
            assert REGISTRY.get_sample_value("mnemo_chat_recall_empty_total") == empty + 1


class TestJudge:
    @pytest.mark.parametrize(
        ("reply", "replaced"), [('{"supersedes": [true]}', True), ("好的。OK, noted.", False)]
    )
    async def test_the_writer_asks_once_and_a_bad_answer_changes_nothing(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, reply: str, replaced: bool
    ) -> None:
        upstream = FakeUpstream(reply=reply)
        quiet = llm_settings(settings, llm_summary=False, llm_compress_memories=False)
        async with app_client(quiet, embedder, upstream.transport) as (client, _):
            now = time.time()
            await store(client, auth, [("old", "I spend every weekend sailing on the lake.", now - 90 * DAY)])
            assert upstream.judge_requests() == []  # a request (the messages endpoint) never asks
            said = "These days I spend every weekend climbing instead of sailing on the lake."
            assert (await chat(client, auth, said, session="B")).status_code == 200
            await drain(settings)
            assert len(upstream.judge_requests()) == 1
            asked = upstream.judge_requests()[0]["messages"][1]["content"]
            assert "sailing on the lake" in asked
            assert "climbing" in asked
            items = {m["content"]: m for m in await listed(client, auth)}
            old = items["I spend every weekend sailing on the lake."]
            if replaced:
                assert old["superseded_by"] == items[said]["id"]
                assert old["valid_to"] == items[said]["valid_from"]
            else:
                assert old["superseded_by"] is None

    async def test_off_without_the_setting(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        upstream = FakeUpstream(reply='{"supersedes": [true]}')
        off = llm_settings(settings, llm_summary=False, llm_supersession_judge=False)
        async with app_client(off, embedder, upstream.transport) as (client, _):
            now = time.time()
            await store(client, auth, [("old", "I spend every weekend sailing on the lake.", now - 90 * DAY)])
            said = "These days I spend every weekend climbing instead of sailing on the lake."
            assert (await chat(client, auth, said, session="B")).status_code == 200
            await drain(settings)
            assert upstream.judge_requests() == []
            assert all(m["superseded_by"] is None for m in await listed(client, auth))


class TestBackfill:
    async def test_memories_stored_before_supersession_get_their_claims_and_chain(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        before = settings.model_copy(update={"supersession": False})
        async with app_client(before, embedder) as (client, _):
            now = time.time()
            await store(client, auth, history(now, "我住在杭州。", "我上周搬到苏州了。"))
            assert all(m["superseded_by"] is None for m in await listed(client, auth))
        redis = redis_of(settings)
        try:
            service = build_memory_service(settings, build_store(settings, redis), embedder, redis)
            assert await service.backfill_claims("alice") == 2  # both get claims, the old one its mark
            assert await service.backfill_claims("alice") == 0  # a second run changes nothing
        finally:
            await redis.aclose()
        async with app_client(settings, embedder) as (client, _):
            items = {m["source_message_ids"][0]: m for m in await listed(client, auth)}
            assert items["old"]["superseded_by"] == items["new"]["id"]
            assert items["new"]["superseded_by"] is None
            assert (await search(client, auth, "我现在住在哪？"))[0] == "new"

    async def test_the_cli_finds_every_user(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        before = settings.model_copy(update={"supersession": False})
        async with app_client(before, embedder) as (client, _):
            now = time.time()
            await store(client, auth, history(now, "I live in Hangzhou.", "I moved to Suzhou last week."))
            await store(client, auth, [("b1", "I work at Globex.", now - DAY)], user="bob")
        changed = await claims_cli.run(settings, None)
        assert changed["alice"] == 2
        assert changed["bob"] == 1  # its claim stored; nothing to supersede


class TestArchiveTiers:
    async def test_a_fact_archived_before_it_changed_is_superseded_when_read(
        self, settings: Settings, embedder: Embedder, tmp_path: Path
    ) -> None:
        """The old memory went to the warm tier before the new one came: no write compared them (the
        writer sees the hot index), so recall reads the supersession itself."""
        s = settings.model_copy(update={"archive_cold_url": str(tmp_path / "archive")})
        redis = redis_of(s)
        try:
            store = build_store(s, redis)
            archive = build_archive(s, redis)
            service = build_memory_service(s, store, embedder, redis, None, archive)
            now = time.time()
            old = [Message("user", "I live in Hangzhou.", id="old", timestamp=now - 200 * DAY)]
            await service.ingest("alice", "s1", old)
            mover = Archiver(
                store, archive, redis, tier_policy(s), batch_users=5, batch_size=200, grace_seconds=0.05
            )
            await mover.run(now=now)
            new = [
                Message(
                    "user",
                    "I moved to Suzhou last week, new flat is great.",
                    id="new",
                    timestamp=now - 5 * DAY,
                )
            ]
            await service.ingest("alice", "s2", new)
            found = await service.recall("alice", RecallRequest("Where do I live now?", top_k=5, as_of=now))
            assert "warm" in found.tiers.searched
            hits = {h.memory.source_message_ids[0]: h for h in found.hits}
            assert hits["old"].memory.archive_tier == "warm"
            assert found.hits[0].memory.source_message_ids == ("new",)
            assert hits["old"].memory.superseded_by == hits["new"].memory.id  # marked at read time
            past = await service.recall(
                "alice", RecallRequest("Where did I live before?", top_k=5, as_of=now)
            )
            assert {"old", "new"} <= {h.memory.source_message_ids[0] for h in past.hits}
        finally:
            await redis.aclose()


class TestChangesSaidAsChanges:
    """Issue 24's reproduction: a change of job said as a change ("不…了，现在…") was missed in Chinese."""

    @pytest.mark.parametrize(
        ("old", "new", "present"),
        [
            ("我的工作是在高中教数学", "我不教书了，现在做数据分析师", "我现在做什么工作？"),
            (
                "I teach maths at a high school.",
                "I quit teaching; now I'm a data analyst.",
                "What's my job now?",
            ),
        ],
        ids=["zh", "en"],
    )
    async def test_the_new_job_comes_first_and_the_old_one_is_superseded(
        self, client: httpx.AsyncClient, auth: AuthHeaders, old: str, new: str, present: str
    ) -> None:
        now = time.time()
        await store(client, auth, history(now, old, new))
        items = {m["source_message_ids"][0]: m for m in await listed(client, auth)}
        assert items["old"]["superseded_by"] == items["new"]["id"]
        assert items["new"]["superseded_by"] is None
        ranked = await search(client, auth, present)
        assert ranked[0] == "new", ranked
