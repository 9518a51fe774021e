"""Relation memory through the API, against real Redis, a real Chroma server and the real embedding
model: the design's example in Chinese and English (a quote submitted in March, approved weeks later),
the entity routes (and their place before `/{user}/{memory_id}`), delete, export and erase."""

from __future__ import annotations

from collections.abc import Mapping

import httpx
import pytest

from app.settings import Settings
from memory import Embedder, keys
from memory.models import Memory
from memory.recall.keyword_index import BM25Index, KeywordIndexCache
from memory.relations.graph import Graph
from memory.relations.store import RelationStore, records_of
from tests.conftest import AuthHeaders, app_client, redis_of
from tests.fake_llm import FakeUpstream
from tests.integration.test_chat import llm_settings

pytestmark = pytest.mark.integration


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """Relation memory is on by default (RELATION_MEMORY); these tests are about it, whatever the default."""
    return settings.model_copy(update={"relation_memory": True})


ZH = [
    {
        "role": "user",
        "content": "我3月提交了报价单 Q-2024-031",
        "id": "zh-1",
        "timestamp": "2026-03-10T09:00:00Z",
    },
    {
        "role": "user",
        "content": "我3月提交了报销单，金额两千元",
        "id": "zh-2",
        "timestamp": "2026-03-11T09:00:00Z",
    },
    {
        "role": "user",
        "content": "供应商的报价单 Q-2024-077 价格太高了",
        "id": "zh-3",
        "timestamp": "2026-03-20T09:00:00Z",
    },
    {
        "role": "user",
        "content": "报价单 Q-2024-031 已经审批通过了",
        "id": "zh-4",
        "timestamp": "2026-04-08T09:00:00Z",
    },
    {"role": "user", "content": "我住在杭州，记住这个", "id": "zh-5", "timestamp": "2026-04-09T09:00:00Z"},
]
EN = [
    {
        "role": "user",
        "content": "I submitted quote Q-2025-114 in March",
        "id": "en-1",
        "timestamp": "2026-03-10T09:00:00Z",
    },
    {
        "role": "user",
        "content": "I submitted my expense report in March too",
        "id": "en-2",
        "timestamp": "2026-03-12T09:00:00Z",
    },
    {
        "role": "user",
        "content": "The vendor's quote Q-2025-200 looks too expensive",
        "id": "en-3",
        "timestamp": "2026-03-21T09:00:00Z",
    },
    {
        "role": "user",
        "content": "Quote Q-2025-114 has been approved by finance",
        "id": "en-4",
        "timestamp": "2026-04-08T09:00:00Z",
    },
    {
        "role": "user",
        "content": "My sister Anna lives in Hangzhou, remember that",
        "id": "en-5",
        "timestamp": "2026-04-09T09:00:00Z",
    },
]


async def ingest(
    client: httpx.AsyncClient, auth: AuthHeaders, user: str, messages: list[dict[str, str]]
) -> dict[str, str]:
    resp = await client.post(
        f"/v1/memory/{user}/messages", json={"session_id": "s1", "messages": messages}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return {m["source_message_ids"][0]: m["id"] for m in resp.json()["memories"]}


async def search(
    client: httpx.AsyncClient, auth: AuthHeaders, user: str, query: str
) -> list[dict[str, object]]:
    resp = await client.post(
        f"/v1/memory/{user}/search", json={"query": query, "top_k": 5, "explain": True}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return resp.json()["results"]  # type: ignore[no-any-return]


class TestTheDesignsExample:
    @pytest.mark.parametrize(
        ("messages", "query", "submitted", "approved", "path"),
        [
            (ZH, "我3月提交的报价单审批到哪了？", "zh-1", "zh-4", "Q-2024-031 → approved"),
            (
                EN,
                "Where is the approval of the quote I submitted in March?",
                "en-1",
                "en-4",
                "Q-2025-114 → approved",
            ),
        ],
    )
    async def test_the_quote_and_its_approval_are_both_found(
        self,
        client: httpx.AsyncClient,
        auth: AuthHeaders,
        messages: list[dict[str, str]],
        query: str,
        submitted: str,
        approved: str,
        path: str,
    ) -> None:
        ids = await ingest(client, auth, "alice", messages)
        hits = await search(client, auth, "alice", query)
        top = [h["id"] for h in hits]
        assert ids[submitted] in top
        assert ids[approved] in top
        linked = next(h for h in hits if h["id"] == ids[approved])
        assert path in linked["explain"]["links"]  # type: ignore[index]


class TestAWorkersFirstSearch:
    @pytest.mark.parametrize(
        ("messages", "query", "approved"), [(ZH, "我3月提交的报价单审批到哪了？", "zh-4")]
    )
    async def test_loads_the_graph_once_beside_the_index(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        monkeypatch: pytest.MonkeyPatch,
        messages: list[dict[str, str]],
        query: str,
        approved: str,
    ) -> None:
        """The graph starts loading with the index (warm), and the links wait for that load, not a
        second one: one read of the user's relation records, begun before the user's index is built
        (without the warm-up it would begin after, when the links are asked for)."""
        async with app_client(settings, embedder) as (client, _):
            ids = await ingest(client, auth, "alice", messages)
        events: list[str] = []
        read, put = RelationStore._read, KeywordIndexCache.put

        async def counted(store: RelationStore, user_id: str) -> Mapping[str | bytes, str | bytes]:
            events.append("records")
            return await read(store, user_id)

        def cached(cache: KeywordIndexCache, user_id: str, version: int, index: BM25Index) -> None:
            events.append("index")
            put(cache, user_id, version, index)

        monkeypatch.setattr(RelationStore, "_read", counted)
        monkeypatch.setattr(KeywordIndexCache, "put", cached)
        async with app_client(settings, embedder) as (client, _):  # another worker: nothing cached
            hits = await search(client, auth, "alice", query)
        assert ids[approved] in [h["id"] for h in hits]
        assert events[:2] == ["records", "index"]
        assert events.count("records") == 1


class TestALargeGraph:
    async def test_parsed_and_folded_in_a_thread_as_inline(self, settings: Settings) -> None:
        """Past 500 records a worker parses and folds the graph in a thread (its event loop reads the
        user's index snapshot meanwhile): the graph is the one the records make, in both languages."""
        said = [
            "My sister Anna lives in Hangzhou",
            "我3月提交了报价单 Q-2024-{i:03d}",
            "I met Bella in Paris last week",
            "我住在杭州，记住这个",
        ]
        memories = [
            Memory(
                id=f"m{i}",
                user_id="alice",
                content=said[i % 4].format(i=i),
                created_at=1.77e9 + i,
                session_id="s1",
                source="user",
                content_hash=f"h{i}",
            )
            for i in range(640)
        ]
        r = redis_of(settings)
        try:
            store = RelationStore(r)
            assert await store.index("alice", memories) == 640
            graph = await store.graph("alice")
            records = await store.records("alice")
        finally:
            await r.aclose()
        inline = Graph(records_of(memories))
        assert records == inline.records
        assert {n.id: (n.name, n.memories) for n in graph.nodes.values()} == {
            n.id: (n.name, n.memories) for n in inline.nodes.values()
        }
        assert graph.facts == inline.facts
        assert {"person:anna", "doc:q-2024-005", "person:bella", "place:hangzhou"} <= set(graph.nodes)


class TestThroughAChatTurn:
    @pytest.mark.parametrize(
        ("messages", "question", "needles"),
        [
            (
                ZH,
                "我3月提交的报价单审批到哪了？",
                ("我3月提交了报价单 Q-2024-031", "Q-2024-031 已经审批通过了"),
            ),
            (
                EN,
                "Where is the approval of the quote I submitted in March?",
                ("I submitted quote Q-2025-114 in March", "Quote Q-2025-114 has been approved"),
            ),
        ],
    )
    async def test_the_prompt_holds_the_quote_and_its_approval(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        messages: list[dict[str, str]],
        question: str,
        needles: tuple[str, str],
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            await ingest(client, auth, "alice", messages)
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


class TestEntityRoutes:
    async def test_list_search_and_read_an_entity(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        ids = await ingest(client, auth, "alice", ZH + EN)
        resp = await client.get("/v1/memory/alice/entities", headers=auth("alice"))
        assert resp.status_code == 200, resp.text  # not read as a memory id (route order)
        names = {e["id"] for e in resp.json()["items"]}
        assert {"doc:q-2024-031", "doc:q-2025-114", "place:hangzhou", "person:anna"} <= names
        # a prefix in either language finds the one place
        for prefix in ("杭", "hang"):
            found = await client.get(
                "/v1/memory/alice/entities", params={"prefix": prefix}, headers=auth("alice")
            )
            assert [e["id"] for e in found.json()["items"]] == ["place:hangzhou"]
            assert set(found.json()["items"][0]["aliases"]) >= {"杭州"} | {"Hangzhou"} - {
                found.json()["items"][0]["name"]
            }
        quote = await client.get("/v1/memory/alice/entities/doc:q-2024-031", headers=auth("alice"))
        assert quote.status_code == 200, quote.text
        body = quote.json()
        assert body["kind"] == "quote"
        rels = {(r["relation"], r["current"], r["memory_id"]) for r in body["relations"]}
        assert ("submitted", True, ids["zh-1"]) in rels
        assert ("approved", True, ids["zh-4"]) in rels
        assert {m["id"] for m in body["memory_items"]} == {ids["zh-1"], ids["zh-4"]}
        # "my sister" is Anna once named: the role's id answers with her
        sister = await client.get("/v1/memory/alice/entities/kin:sister", headers=auth("alice"))
        assert sister.json()["id"] == "person:anna"

    async def test_ids_are_checked_and_unknown_entities_are_404(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await ingest(client, auth, "alice", ZH[:1])
        assert (
            await client.get("/v1/memory/alice/entities/nobody:here", headers=auth("alice"))
        ).status_code == 404
        bad = await client.get("/v1/memory/alice/entities/a%7Bb%7D", headers=auth("alice"))
        assert bad.status_code == 422
        other = await client.get("/v1/memory/alice/entities", headers=auth("bob"))
        assert other.status_code == 403

    async def test_a_memory_id_route_still_reads_a_memory(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", ZH[:1])
        resp = await client.get(f"/v1/memory/alice/{ids['zh-1']}", headers=auth("alice"))
        assert resp.status_code == 200, resp.text
        assert resp.json()["id"] == ids["zh-1"]


class TestGovernance:
    async def test_a_deleted_memory_takes_its_relations(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", ZH)
        assert (
            await client.delete(f"/v1/memory/alice/{ids['zh-4']}", headers=auth("alice"))
        ).status_code == 204
        body = (await client.get("/v1/memory/alice/entities/doc:q-2024-031", headers=auth("alice"))).json()
        assert {r["relation"] for r in body["relations"]} == {"submitted"}

    async def test_an_edited_memory_says_what_it_names_now(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        ids = await ingest(client, auth, "alice", ZH[:1])
        read = await client.get(f"/v1/memory/alice/{ids['zh-1']}", headers=auth("alice"))
        edited = await client.patch(
            f"/v1/memory/alice/{ids['zh-1']}",
            json={"content": "我3月提交了报价单 Q-2024-032"},
            headers={**auth("alice"), "If-Match": read.headers["etag"]},
        )
        assert edited.status_code == 200, edited.text
        found = (
            await client.get("/v1/memory/alice/entities", params={"prefix": "doc:"}, headers=auth("alice"))
        ).json()
        assert [e["id"] for e in found["items"]] == ["doc:q-2024-032"]

    async def test_export_holds_the_relations(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        ids = await ingest(client, auth, "alice", ZH)
        doc = (await client.get("/v1/memory/alice/export", headers=auth("alice"))).json()
        assert ids["zh-4"] in doc["relations"]
        assert any(e["id"] == "doc:q-2024-031" for e in doc["relations"][ids["zh-4"]]["entities"])

    async def test_erase_leaves_no_relation_key(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        await ingest(client, auth, "alice", ZH + EN)
        r = redis_of(settings)
        try:
            assert await r.hlen(keys.relations("alice"))
            resp = await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=auth("alice"))
            assert resp.status_code == 200, resp.text
            assert not await r.exists(keys.relations("alice"), keys.relations_version("alice"))
            left = (await client.get("/v1/memory/alice/entities", headers=auth("alice"))).json()
            assert left["items"] == []
        finally:
            await r.aclose()
