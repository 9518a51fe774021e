"""The profile, profile tags on list and search, and merge/split of entities, through the API against
real Redis, a real Chroma server and the real embedding model; in Chinese and English. With relation
memory off the routes answer empty, never 500."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.composition import build_store
from app.settings import Settings
from bench.archive_data import DAY
from memory import Embedder, keys
from memory.models import Memory, SearchFilters
from memory.relations.store import RelationStore
from tests.conftest import AuthHeaders, app_client, redis_of
from tests.fake_llm import FakeUpstream
from tests.integration.test_archive import rig
from tests.integration.test_chat import llm_settings
from tests.integration.test_relations import ingest

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"relation_memory": True})


PROFILE = [
    {"role": "user", "content": "我是一名小学老师，住在杭州", "id": "p-1", "timestamp": "2026-01-05T09:00:00Z"},
    {"role": "user", "content": "I'm preparing for IELTS this summer", "id": "p-2", "timestamp": "2026-01-06T09:00:00Z"},
    {"role": "user", "content": "我是老师，正在备考雅思，目标7分", "id": "p-3", "timestamp": "2026-01-07T09:00:00Z"},
    {"role": "user", "content": "I love hiking with my dog on weekends", "id": "p-4", "timestamp": "2026-01-08T09:00:00Z"},
    {"role": "assistant", "content": "I'm a nurse, by the way", "id": "p-5", "timestamp": "2026-01-08T09:01:00Z"},
    {"role": "user", "content": "我现在是护士了，不当老师了", "id": "p-6", "timestamp": "2026-03-01T09:00:00Z"},
]  # fmt: skip


async def profile_of(client: httpx.AsyncClient, auth: AuthHeaders, user: str) -> dict[str, Any]:
    resp = await client.get(f"/v1/memory/{user}/profile", headers=auth(user))
    assert resp.status_code == 200, resp.text
    return resp.json()  # type: ignore[no-any-return]


class TestProfile:
    async def test_current_and_past_attributes_with_tags_in_both_languages(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", PROFILE)
        body = await profile_of(client, auth, "alice")
        current = {(a["category"], a["key"]): a for a in body["current"]}
        assert {
            ("occupation", "nurse"),
            ("home", "hangzhou"),
            ("goal", "ielts"),
            ("preference", "hiking"),
        } <= set(current)
        assert ("occupation", "teacher") not in current
        past = {(a["category"], a["key"]): a for a in body["past"]}
        assert past[("occupation", "teacher")]["valid_to"].startswith("2026-03-01")
        assert set(past[("occupation", "teacher")]["memory_ids"]) == {ids["p-1"], ids["p-3"]}
        assert current[("goal", "ielts")]["tags"] == ["#目标_备考雅思", "#goal_ielts"]
        assert set(current[("goal", "ielts")]["memory_ids"]) == {ids["p-2"], ids["p-3"]}
        assert {"#职业_护士", "#occupation_nurse", "#居住地_杭州", "#home_hangzhou"} <= set(body["tags"])
        assert "职业：护士" in body["summary"]["zh"]
        assert "occupation: nurse" in body["summary"]["en"]

    async def test_a_forgotten_memory_takes_what_it_said_of_the_user(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", PROFILE)
        for mid in (ids["p-2"], ids["p-3"]):
            assert (await client.delete(f"/v1/memory/alice/{mid}", headers=auth("alice"))).status_code == 204
        body = await profile_of(client, auth, "alice")
        assert ("goal", "ielts") not in {(a["category"], a["key"]) for a in body["current"]}
        assert "#goal_ielts" not in body["tags"]

    async def test_another_users_profile_is_forbidden(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await ingest(client, auth, "alice", PROFILE[:1])
        resp = await client.get("/v1/memory/alice/profile", headers=auth("bob"))
        assert resp.status_code == 403
        assert resp.json()["error"] == "forbidden"


class TestChatPrompt:
    @pytest.mark.parametrize(
        ("question", "needles"),
        [
            ("我适合考什么证书？", ("[用户资料]", "职业：护士", "目标：备考雅思")),
            ("What should I study next?", ("[user profile]", "occupation: nurse", "goal: ielts")),
        ],
    )
    async def test_a_chat_turn_prompt_holds_the_profile(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        question: str,
        needles: tuple[str, ...],
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            await ingest(client, auth, "alice", PROFILE)
            resp = await client.post(
                "/v1/chat/completions",
                json={
                    "model": "mnemo",
                    "messages": [{"role": "user", "content": question}],
                    "session_id": "B",
                },
                headers=auth("alice"),
            )
            assert resp.status_code == 200, resp.text
            system = upstream.chat_requests()[-1]["messages"][0]["content"]
            for needle in needles:
                assert needle in system, system
            profile = system.split(f"{needles[0]}\n")[1].split("\n")[0]  # the past job is not in it
            assert "teacher" not in profile
            assert "教师" not in profile


# Issue 40: one seeded user's prompt said "工作单位：一家设计院…设备：Pixel、ThinkPad、白色", a book title's
# "one hundred" was a preference, and British, Hundred, One, Pixel, Siemens, Solitude, Years,
# Philharmonic, Lake, West, Oslo, Alibaba and Reykjavik were persons, X1 a document.
SEEDED = [
    {"role": "user", "content": "我是一名护士，住在杭州", "id": "s-1", "timestamp": "2026-01-05T09:00:00Z"},
    {"role": "user", "content": "我老公是建筑师，在一家设计院上班", "id": "s-2", "timestamp": "2026-01-06T09:00:00Z"},
    {"role": "user", "content": "我的新车是白色的，周末刚提的车", "id": "s-3", "timestamp": "2026-01-07T09:00:00Z"},
    {"role": "user", "content": "My favourite book is One Hundred Years of Solitude", "id": "s-4", "timestamp": "2026-01-08T09:00:00Z"},
    {"role": "user", "content": "I use a Pixel 8 for work and a ThinkPad X1 Carbon at home", "id": "s-5", "timestamp": "2026-01-09T09:00:00Z"},
    {"role": "user", "content": "We saw the Berlin Philharmonic, then walked around West Lake", "id": "s-6", "timestamp": "2026-01-10T09:00:00Z"},
    {"role": "user", "content": "My brother works at Siemens and flew to Reykjavik and Oslo for the British Museum's tour", "id": "s-7", "timestamp": "2026-01-11T09:00:00Z"},
    {"role": "user", "content": "Alibaba is hiring again, my friend says", "id": "s-8", "timestamp": "2026-01-12T09:00:00Z"},
]  # fmt: skip


class TestOnlyTrue:
    @pytest.mark.parametrize(
        ("question", "label", "true", "false"),
        [
            (
                "我适合换什么工作？",
                "[用户资料]",
                ("职业：护士", "居住地：杭州", "家人：老公", "设备：Pixel、ThinkPad"),
                ("设计院", "白色", "百年", "孤独", "one hundred"),
            ),
            (
                "What should I do this weekend?",
                "[user profile]",
                ("occupation: nurse", "home: hangzhou", "family: husband", "device: pixel, thinkpad"),
                ("设计院", "白色", "one hundred", "solitude", "siemens"),
            ),
        ],
    )
    async def test_the_seeded_users_prompt_profile_holds_only_what_is_true(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        question: str,
        label: str,
        true: tuple[str, ...],
        false: tuple[str, ...],
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            await ingest(client, auth, "alice", SEEDED)
            resp = await client.post(
                "/v1/chat/completions",
                json={
                    "model": "mnemo",
                    "messages": [{"role": "user", "content": question}],
                    "session_id": "B",
                },
                headers=auth("alice"),
            )
            assert resp.status_code == 200, resp.text
            system = upstream.chat_requests()[-1]["messages"][0]["content"]
            assert f"{label}\n" in system, system
            block = system.split(f"{label}\n")[1].split("\n")[0]
            for needle in true:
                assert needle in block, block
            for needle in false:
                assert needle.lower() not in block.lower(), block
            people = await client.get(
                "/v1/memory/alice/entities", params={"kind": "person", "limit": 100}, headers=auth("alice")
            )
            assert people.status_code == 200, people.text
            names = {e["name"] for e in people.json()["items"]}
            for word in ("British", "Hundred", "One", "Pixel", "Siemens", "Solitude", "Years", "Philharmonic",
                         "Lake", "West", "Oslo", "Alibaba", "Reykjavik"):  # fmt: skip
                assert not any(word in n.split() for n in names), names
            documents = await client.get(
                "/v1/memory/alice/entities", params={"prefix": "doc:"}, headers=auth("alice")
            )
            assert "doc:x1" not in {e["id"] for e in documents.json()["items"]}


class TestTags:
    async def test_list_filters_on_every_tag_given_in_either_language(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", PROFILE)

        async def listed(*tags: str) -> set[str]:
            resp = await client.get(
                "/v1/memory/alice/list", params={"tags": list(tags)}, headers=auth("alice")
            )
            assert resp.status_code == 200, resp.text
            return {m["id"] for m in resp.json()["items"]}

        assert await listed("#职业_教师") == {ids["p-1"], ids["p-3"]}
        assert await listed("#occupation_teacher") == {ids["p-1"], ids["p-3"]}
        assert await listed("#goal_ielts") == {ids["p-2"], ids["p-3"]}
        assert await listed("#职业_教师", "#goal_ielts") == {ids["p-3"]}  # AND
        assert await listed("#职业_教师", "#occupation_teacher") == {ids["p-1"], ids["p-3"]}  # one tag
        assert await listed("#宠物_猫") == set()

    async def test_search_filters_on_tags(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        ids = await ingest(client, auth, "alice", PROFILE)
        for query in ("雅思备考", "IELTS preparation"):
            resp = await client.post(
                "/v1/memory/alice/search",
                json={"query": query, "top_k": 10, "min_relevance": 0, "tags": ["#职业_教师", "#goal_ielts"]},
                headers=auth("alice"),
            )
            assert resp.status_code == 200, resp.text
            assert [h["id"] for h in resp.json()["results"]] == [ids["p-3"]]
        none = await client.post(
            "/v1/memory/alice/search",
            json={"query": "IELTS", "min_relevance": 0, "tags": ["#pet_cat"]},
            headers=auth("alice"),
        )
        assert none.status_code == 200
        assert none.json()["results"] == []

    @pytest.mark.parametrize("bad", ["职业_教师", "#hobby_chess", "#职业_", "#职业_a b", "#" + "x" * 70])
    async def test_a_malformed_tag_is_422_in_the_envelope(
        self, client: httpx.AsyncClient, auth: AuthHeaders, bad: str
    ) -> None:
        listed = await client.get("/v1/memory/alice/list", params={"tags": [bad]}, headers=auth("alice"))
        searched = await client.post(
            "/v1/memory/alice/search", json={"query": "x", "tags": [bad]}, headers=auth("alice")
        )
        for resp in (listed, searched):
            assert resp.status_code == 422, resp.text
            assert resp.json()["error"] == "validation_error"
            assert "标签格式" in resp.json()["detail"]

    async def test_more_than_ten_tags_are_refused(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.get(
            "/v1/memory/alice/list", params={"tags": ["#goal_ielts"] * 11}, headers=auth("alice")
        )
        assert resp.status_code == 422


MERGE = [
    {"role": "user", "content": "I had lunch with Kit yesterday", "id": "k-1", "timestamp": "2026-02-01T09:00:00Z"},
    {"role": "user", "content": "Katherine called about the contract", "id": "k-2", "timestamp": "2026-02-02T09:00:00Z"},
    {"role": "user", "content": "我朋友李雷说周末去爬山", "id": "k-3", "timestamp": "2026-02-03T09:00:00Z"},
]  # fmt: skip


class TestMergeAndSplit:
    async def test_a_merge_holds_for_later_writes_and_a_split_undoes_exactly_it(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        ids = await ingest(client, auth, "alice", MERGE)
        resp = await client.post(
            "/v1/memory/alice/entities/merges",
            json={"source": "person:kit", "target": "person:katherine"},
            headers=auth("alice"),
        )
        assert resp.status_code == 201, resp.text
        merge = resp.json()
        assert merge["id"].startswith("mg-")
        assert merge["source"] == "person:kit"
        later = await ingest(
            client,
            auth,
            "alice",
            [
                {
                    "role": "user",
                    "content": "Kit sent me the photos",
                    "id": "k-4",
                    "timestamp": "2026-02-05T09:00:00Z",
                }
            ],
        )
        one = (await client.get("/v1/memory/alice/entities/person:kit", headers=auth("alice"))).json()
        assert one["id"] == "person:katherine"
        assert "Kit" in one["aliases"]
        assert {m["id"] for m in one["memory_items"]} == {ids["k-1"], ids["k-2"], later["k-4"]}
        listed = (await client.get("/v1/memory/alice/entities/merges", headers=auth("alice"))).json()
        assert [m["id"] for m in listed["items"]] == [merge["id"]]

        split = await client.delete(f"/v1/memory/alice/entities/merges/{merge['id']}", headers=auth("alice"))
        assert split.status_code == 200, split.text
        kit = (await client.get("/v1/memory/alice/entities/person:kit", headers=auth("alice"))).json()
        assert kit["id"] == "person:kit"
        assert {m["id"] for m in kit["memory_items"]} == {ids["k-1"], later["k-4"]}
        kat = (await client.get("/v1/memory/alice/entities/person:katherine", headers=auth("alice"))).json()
        assert {m["id"] for m in kat["memory_items"]} == {ids["k-2"]}
        again = await client.delete(f"/v1/memory/alice/entities/merges/{merge['id']}", headers=auth("alice"))
        assert again.status_code == 404
        assert again.json()["error"] == "not_found"

        admin = auth("ops", role="admin")
        audit = (await client.get("/v1/audit", params={"user_id": "alice"}, headers=admin)).json()["items"]
        actions = [(e["action"], e["details"].get("merge_id")) for e in audit]
        assert ("merge", merge["id"]) in actions
        assert ("split", merge["id"]) in actions
        # the audit trail outlives an erase: no entity id (a name) goes into it
        assert "kit" not in str(audit).lower()
        r = redis_of(settings)
        try:
            assert not await r.hlen(keys.relation_merges("alice"))
        finally:
            await r.aclose()

    @pytest.mark.parametrize(
        ("body", "status", "needle"),
        [
            ({"source": "person:kit", "target": "person:kit"}, 422, "自身"),
            ({"source": "person:kit", "target": "person:nobody"}, 404, "person:nobody"),
            ({"source": "person:kit", "target": "doc:c-1"}, 404, "doc:c-1"),
            ({"source": "person:kit", "target": "event:lunch", "x": 1}, 422, "x"),
            ({"source": "person:k{it}", "target": "person:katherine"}, 422, "source"),
            ({"source": "person:kit"}, 422, "target"),
        ],
    )
    async def test_a_merge_names_exactly_two_entities(
        self, client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, object], status: int, needle: str
    ) -> None:
        await ingest(client, auth, "alice", MERGE)
        resp = await client.post("/v1/memory/alice/entities/merges", json=body, headers=auth("alice"))
        assert resp.status_code == status, resp.text
        assert set(resp.json()) == {"error", "detail", "request_id"}
        assert needle in resp.json()["detail"]

    async def test_an_alias_or_another_kind_is_refused(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await ingest(
            client,
            auth,
            "alice",
            [
                {"role": "user", "content": "My sister Anna lives in Hangzhou", "id": "a-1"},
                {"role": "user", "content": "I met Bella in Paris", "id": "a-2"},
            ],
        )
        alias = await client.post(
            "/v1/memory/alice/entities/merges",
            json={"source": "kin:sister", "target": "person:bella"},
            headers=auth("alice"),
        )
        assert alias.status_code == 422
        assert "person:anna" in alias.json()["detail"]
        kinds = await client.post(
            "/v1/memory/alice/entities/merges",
            json={"source": "person:bella", "target": "place:hangzhou"},
            headers=auth("alice"),
        )
        assert kinds.status_code == 422
        assert "类型不同" in kinds.json()["detail"]

    @pytest.mark.parametrize("merge_id", ["mg-123", "mg-0123456789ABCDEF", "..", "mg-0123456789abcdef0", "x"])
    async def test_a_split_needs_a_well_formed_merge_id(
        self, client: httpx.AsyncClient, auth: AuthHeaders, merge_id: str
    ) -> None:
        resp = await client.delete(f"/v1/memory/alice/entities/merges/{merge_id}", headers=auth("alice"))
        assert resp.status_code in (404, 405, 422), resp.text
        assert "error" in resp.json()
        if merge_id.startswith("mg-"):
            assert resp.status_code == 422

    async def test_another_user_cannot_merge_or_split(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await ingest(client, auth, "alice", MERGE)
        body = {"source": "person:kit", "target": "person:katherine"}
        assert (
            await client.post("/v1/memory/alice/entities/merges", json=body, headers=auth("bob"))
        ).status_code == 403
        made = await client.post("/v1/memory/alice/entities/merges", json=body, headers=auth("alice"))
        split = await client.delete(
            f"/v1/memory/alice/entities/merges/{made.json()['id']}", headers=auth("bob")
        )
        assert split.status_code == 403
        # bob's own merges do not hold alice's
        own = await client.delete(f"/v1/memory/bob/entities/merges/{made.json()['id']}", headers=auth("bob"))
        assert own.status_code == 404


async def test_with_relation_memory_off_the_routes_answer_empty_never_500(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    off = settings.model_copy(update={"relation_memory": False})
    async with app_client(off, embedder) as (client, _):
        await ingest(client, auth, "alice", PROFILE + MERGE)
        profile = await profile_of(client, auth, "alice")
        assert profile["current"] == []
        assert profile["past"] == []
        assert profile["tags"] == []
        merges = await client.get("/v1/memory/alice/entities/merges", headers=auth("alice"))
        assert merges.status_code == 200
        assert merges.json()["items"] == []
        listed = await client.get(
            "/v1/memory/alice/list", params={"tags": ["#职业_教师"]}, headers=auth("alice")
        )
        assert listed.status_code == 200
        assert listed.json()["items"] == []
        searched = await client.post(
            "/v1/memory/alice/search", json={"query": "老师", "tags": ["#goal_ielts"]}, headers=auth("alice")
        )
        assert searched.status_code == 200
        assert searched.json()["results"] == []
        merge = await client.post(
            "/v1/memory/alice/entities/merges",
            json={"source": "person:kit", "target": "person:katherine"},
            headers=auth("alice"),
        )
        assert merge.status_code == 404
        assert "RELATION_MEMORY" in merge.json()["detail"]
        split = await client.delete(
            "/v1/memory/alice/entities/merges/mg-0123456789abcdef", headers=auth("alice")
        )
        assert split.status_code == 404


class TestForget:
    async def test_a_forgotten_session_takes_its_entities_relations_profile_and_merges(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        me = auth("alice")
        await ingest(client, auth, "alice", MERGE)  # session s1
        kept = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "keep", "messages": [{"role": "user", "content": "我住在杭州"}]},
            headers=me,
        )
        assert kept.status_code == 200, kept.text
        made = await client.post(
            "/v1/memory/alice/entities/merges",
            json={"source": "person:kit", "target": "person:katherine"},
            headers=me,
        )
        assert made.status_code == 201, made.text
        gone = await client.post(
            "/v1/memory/alice/forget",
            json={"session_id": "s1", "dry_run": False, "expected_count": 3},
            headers=me,
        )
        assert gone.status_code == 200, gone.text
        assert gone.json()["count"] == 3
        listed = (await client.get("/v1/memory/alice/entities", headers=me)).json()
        assert {e["id"] for e in listed["items"]} == {"place:hangzhou"}
        for entity in ("person:kit", "person:katherine"):
            assert (await client.get(f"/v1/memory/alice/entities/{entity}", headers=me)).status_code == 404
        merges = (await client.get("/v1/memory/alice/entities/merges", headers=me)).json()
        assert merges["items"] == []  # its ids are names: they go with the last memory naming them
        profile = await profile_of(client, auth, "alice")
        assert [a["key"] for a in profile["current"]] == ["hangzhou"]
        r = redis_of(settings)
        try:
            stored = str(await r.hgetall(keys.relations("alice"))) + str(
                await r.hgetall(keys.relation_merges("alice"))
            )
        finally:
            await r.aclose()
        for name in ("Kit", "kit", "Katherine", "katherine", "李雷"):
            assert name not in stored

    async def test_export_holds_entities_merges_and_the_profile(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", PROFILE + MERGE)
        made = await client.post(
            "/v1/memory/alice/entities/merges",
            json={"source": "person:kit", "target": "person:katherine"},
            headers=auth("alice"),
        )
        doc = (await client.get("/v1/memory/alice/export", headers=auth("alice"))).json()
        katherine = next(e for e in doc["entities"] if e["id"] == "person:katherine")
        assert set(katherine["memory_ids"]) == {ids["k-1"], ids["k-2"]}
        assert "Kit" in katherine["aliases"]
        assert [m["id"] for m in doc["entity_merges"]] == [made.json()["id"]]
        assert {"#职业_护士", "#occupation_nurse"} <= {
            t for a in doc["profile"]["current"] for t in a["tags"]
        }
        assert [a["key"] for a in doc["profile"]["past"]] == ["teacher"]
        assert {"category": "goal", "key": "ielts", "value": "雅思"} in doc["relations"][ids["p-3"]][
            "profile"
        ]
        assert doc["counts"]["entities"] == len(doc["entities"])
        assert doc["counts"]["entity_merges"] == 1


class TestArchival:
    async def test_an_archived_memory_keeps_its_entities_profile_and_tags_until_deleted(
        self, settings: Settings, embedder: Embedder, tmp_path: Path, auth: AuthHeaders
    ) -> None:
        """Records stay keyed by memory id in the user's Redis hash: archival moves the memory to the warm
        or cold tier and the graph still names it; deleting it there takes its relations."""
        cold_url = str(tmp_path / "archive")
        s = settings.model_copy(update={"archive_cold_url": cold_url, "relation_memory": True})
        texts = [
            ("我是一名小学老师，住在杭州", 200),
            ("I'm preparing for IELTS this summer", 500),
            ("I met Bella in Paris", 1),
        ]
        batch = [
            Memory(
                id=f"a{i}",
                user_id="alice",
                content=t,
                created_at=time.time() - age * DAY,
                session_id="s1",
                source="user",
                content_hash=f"h{i}",
            )
            for i, (t, age) in enumerate(texts)
        ]
        async with rig(s, cold_url) as r:
            await r.store.upsert(batch, await embedder.embed([m.embed_text for m in batch]))
            assert await RelationStore(r.redis).index("alice", batch) == 3  # the write hook's step
            await r.archiver().run()
        me = auth("alice")
        async with app_client(s, embedder) as (client, _):
            tiers = {
                m["id"]: m["archive_tier"]
                for m in (await client.get("/v1/memory/alice/list", headers=me)).json()["items"]
            }
            assert tiers == {"a0": "warm", "a1": "cold", "a2": "hot"}
            place = (await client.get("/v1/memory/alice/entities/place:hangzhou", headers=me)).json()
            assert [(m["id"], m["archive_tier"]) for m in place["memory_items"]] == [("a0", "warm")]
            profile = await profile_of(client, auth, "alice")
            assert {(a["key"], tuple(a["memory_ids"])) for a in profile["current"]} >= {
                ("teacher", ("a0",)),
                ("hangzhou", ("a0",)),
                ("ielts", ("a1",)),
            }
            listed = await client.get("/v1/memory/alice/list", params={"tags": ["#goal_ielts"]}, headers=me)
            assert [m["id"] for m in listed.json()["items"]] == ["a1"]  # in the cold tier
            assert (await client.delete("/v1/memory/alice/a0", headers=me)).status_code == 204
            assert (
                await client.get("/v1/memory/alice/entities/place:hangzhou", headers=me)
            ).status_code == 404
            after = await profile_of(client, auth, "alice")
            assert {a["key"] for a in after["current"]} == {"ielts"}


async def test_chroma_answers_a_tag_filter_as_ids(settings: Settings, embedder: Embedder) -> None:
    """The dense channel of a user above `in_process_dense_max` is a Chroma query: the ids the tags
    select go to it as `ids`, with the other filters; no id selected answers nothing without a call."""
    redis = redis_of(settings)
    store = build_store(settings, redis)
    try:
        texts = ["我是一名小学老师", "I'm a teacher at a middle school", "I love hiking with my dog"]
        batch = [
            Memory(
                id=f"c{i}",
                user_id="alice",
                content=t,
                created_at=time.time() - i,
                session_id="s1" if i < 2 else "s2",
                source="user",
                content_hash=f"h{i}",
            )
            for i, t in enumerate(texts)
        ]
        await store.upsert(batch, await embedder.embed([m.embed_text for m in batch]))
        query = (await embedder.embed(["teacher"]))[0].tolist()
        only = await store.query(
            "alice", query, n_results=10, filters=SearchFilters(ids=frozenset({"c1", "c2"}))
        )
        assert {m.id for m, _ in only} == {"c1", "c2"}
        both = SearchFilters(ids=frozenset({"c1", "c2"}), session_id="s1")
        assert [m.id for m, _ in await store.query("alice", query, n_results=10, filters=both)] == ["c1"]
        assert await store.query("alice", query, n_results=10, filters=SearchFilters(ids=frozenset())) == []
    finally:
        await redis.aclose()
