"""Cross-lingual recall end to end (real Redis, real Chroma, the real models): a fact said in English is
found by a question in Chinese and the reverse, in the API and in a chat turn; the reembed migration
fills the bridge channel for memories written without it; delete, forget, erase and export cover it."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.composition import bridge_shared_vectors, build_store
from app.settings import Settings
from memory import Embedder
from memory.embedding.base import Vectors
from memory.embedding.multilingual import MultilingualEmbedder, bridge_model_name
from memory.longterm.bridge import PREPARED_MAX, BridgedStore
from memory.longterm.reembed import Reembedder, ReembedReport
from memory.models import Memory
from tests.conftest import TEST_SECRET, AuthHeaders, app_client, records_on, redis_of, until
from tests.fake_llm import FakeUpstream
from tests.integration.test_chat import chat, llm_settings

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
DAY = 86400.0
NOW = 1_790_000_000.0

FACTS = [
    ("f-peanut", "My daughter is allergic to peanuts."),
    ("f-nurse", "I work as a nurse at St. Mary's Hospital."),
    ("f-penicillin", "我对青霉素过敏，打针前一定要提醒医生。"),
    ("f-cat", "我家的猫叫团子，是一只英短。"),
]
SMALL_TALK = [
    ("d-weather", "The weather is lovely today, isn't it?"),
    ("d-traffic", "Traffic was terrible on the way home."),
    ("d-noodles", "中午随便吃了碗面。"),
    ("d-nap", "下午可能要睡个午觉。"),
]
ASKED = [
    ("我女儿对什么过敏？", "f-peanut"),  # English fact, Chinese question
    ("我在哪家医院上班？", "f-nurse"),
    ("Which medicine am I allergic to?", "f-penicillin"),  # Chinese fact, English question
    ("What is our cat called?", "f-cat"),
]


async def seed(client: httpx.AsyncClient, auth: AuthHeaders, user: str = "alice", now: float = NOW) -> None:
    messages = [
        {"role": "user", "content": text, "id": mid, "timestamp": now - 3 * DAY + i}
        for i, (mid, text) in enumerate(FACTS + SMALL_TALK)
    ]
    resp = await client.post(
        f"/v1/memory/{user}/messages", json={"session_id": "s1", "messages": messages}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text


async def top(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, k: int = 3, user: str = "alice"
) -> list[str]:
    resp = await client.post(
        f"/v1/memory/{user}/search", json={"query": query, "top_k": k, "as_of": NOW}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return [r["source_message_ids"][0] for r in resp.json()["results"]]


def bridge_records(settings: Settings) -> list[tuple[str, str]]:
    return records_on(settings.chroma_url, f"{settings.chroma_collection_prefix}-xl")


class TestSearchAcrossLanguages:
    @pytest.mark.parametrize(("question", "fact"), ASKED)
    async def test_a_fact_is_found_by_a_question_in_the_other_language(
        self, client: httpx.AsyncClient, auth: AuthHeaders, question: str, fact: str
    ) -> None:
        await seed(client, auth)
        assert fact in await top(client, auth, question)

    async def test_every_memory_gets_a_bridge_vector_of_the_current_model(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        await seed(client, auth)
        listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
        bridged = bridge_records(settings)
        assert {i for i, _ in bridged} == {m["id"] for m in listed["items"]}
        assert {u for _, u in bridged} == {"alice"}
        # the writer handed what it computed to the next search through Redis (5 min): no Chroma read
        shared = bridge_shared_vectors(redis_of(settings), MultilingualEmbedder())
        published = await shared.fetch("alice", [text for _, text in FACTS], 512)
        assert sorted(published) == list(range(len(FACTS)))


class TestBridgePreparedAhead:
    async def test_vectors_prepared_beside_the_main_model_are_the_ones_stored(
        self, settings: Settings
    ) -> None:
        bridge = MultilingualEmbedder()
        store = build_store(settings, redis_of(settings), bridge)
        assert isinstance(store, BridgedStore)
        memories = [
            Memory(
                id=mid,
                user_id="alice",
                content=text,
                created_at=NOW,
                session_id="s1",
                source="user",
                content_hash=mid,
            )
            for mid, text in FACTS
        ]
        await store.prepare(memories)  # what the writer runs while MiniLM embeds the same memories
        await store.upsert(memories, np.zeros((len(memories), 384), dtype=np.float32))
        stored = await store.bridge.get("alice")
        expected = await bridge.embed([m.embed_text for m in memories])
        assert sorted(stored) == sorted(mid for mid, _ in FACTS)
        for row, (mid, _) in enumerate(FACTS):
            assert np.allclose(stored[mid], expected[row], atol=1e-5)
        assert not store._prepared  # taken by the upsert, nothing left waiting

    async def test_bridge_vectors_read_by_id_are_the_named_users_only(self, settings: Settings) -> None:
        """By id the bridge store sends no filter (a scan per id in chromadb 1.5.9 beside one): the
        rows kept are the named user's of the current model, never another user's, in zh and en."""
        store = build_store(settings, redis_of(settings), MultilingualEmbedder())
        assert isinstance(store, BridgedStore)
        for user, (mid, text) in (("bo", FACTS[0]), ("cy", FACTS[2])):
            memory = Memory(
                id=f"{user}-{mid}",
                user_id=user,
                content=text,
                created_at=NOW,
                session_id="s1",
                source="user",
                content_hash=mid,
            )
            await store.upsert([memory], np.zeros((1, 384), dtype=np.float32))
        both = [f"bo-{FACTS[0][0]}", f"cy-{FACTS[2][0]}"]
        assert sorted(await store.bridge.get("bo", both)) == [both[0]]
        assert await store.bridge.held("cy", both) == {both[1]}
        assert await store.bridge.get("bo", []) == {}

    async def test_vectors_no_upsert_takes_are_bounded(self, settings: Settings) -> None:
        store = build_store(settings, redis_of(settings), MultilingualEmbedder())
        assert isinstance(store, BridgedStore)
        memories = [
            Memory(
                id=f"m{i}",
                user_id="bob",
                content=f"note {i}",
                created_at=NOW,
                session_id="s1",
                source="user",
                content_hash=f"h{i}",
            )
            for i in range(PREPARED_MAX + 5)
        ]
        await store.prepare(memories)
        assert len(store._prepared) == PREPARED_MAX
        assert ("bob", "note 0") not in store._prepared  # the oldest went first


class TestChatTurn:
    @pytest.mark.parametrize(
        ("question", "fact", "annotation"),
        [
            ("我女儿对什么过敏？", "My daughter is allergic to peanuts.", r"- \([23]天前，你说，关于家庭\) "),
            (
                "Which medicine am I allergic to?",
                "我对青霉素过敏",
                r"- \([23] days ago, you said, about health\) ",
            ),
        ],
    )
    async def test_a_memory_in_the_other_language_reaches_the_prompt_annotated_in_the_users(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        question: str,
        fact: str,
        annotation: str,
    ) -> None:
        upstream = FakeUpstream()
        async with app_client(llm_settings(settings), embedder, upstream.transport) as (client, _):
            await seed(client, auth, now=time.time())
            resp = await chat(client, auth, question, session="s2", debug=True)
            assert resp.status_code == 200, resp.text
        [prompt] = upstream.system_prompts()
        # the memory block is the last section headed so (the rules name it first)
        memories = prompt.split("[长期记忆]" if "天前" in annotation else "[long-term memories]")[-1]
        lines = [line for line in memories.splitlines() if fact in line]
        assert lines, prompt
        line = lines[0]
        assert re.match(annotation, line), line


class FailingAfter(MultilingualEmbedder):
    """The real bridge model that fails after `calls` calls: a reembed interrupted mid-user."""

    def __init__(self, model: MultilingualEmbedder, calls: int) -> None:
        super().__init__(caller="reembed", _model=model._model, _lock=model._lock)
        self.left = calls

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if self.left == 0:
            raise OSError("interrupted")
        self.left -= 1
        return await super().embed(texts)


class TestReembed:
    async def test_old_vectors_only_then_reembed_resumes_and_completes(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, tmp_path: Path
    ) -> None:
        old = settings.model_copy(update={"bridge_embedding": False})
        async with app_client(old, embedder) as (client, _):
            await seed(client, auth, "alice")
            await seed(client, auth, "bob")
        assert bridge_records(settings) == []  # the old pipeline writes nothing of the channel

        async with app_client(settings, embedder) as (client, _):
            # search keeps working from the main channel while the bridge is incomplete
            assert await top(client, auth, "Which medicine am I allergic to?", k=10)
            assert "f-penicillin" in await top(client, auth, "我对什么药过敏？")  # same language
            bridge = MultilingualEmbedder()
            redis = redis_of(settings)
            store = build_store(settings, redis, bridge)  # as the CLI builds it, beside the app's
            assert isinstance(store, BridgedStore)

            interrupted = Reembedder(store, FailingAfter(bridge, calls=1), redis, batch_size=3)
            report = ReembedReport(model=store.bridge.model)
            with pytest.raises(OSError, match="interrupted"):
                await interrupted.user("alice", report)
            assert report.vectors_written == 3
            assert len(await store.bridge.ids("alice")) == 3  # the first batch stays

            resumed = await Reembedder(store, bridge.for_caller("reembed"), redis, batch_size=3).user(
                "alice", ReembedReport(model=store.bridge.model)
            )
            assert resumed == len(FACTS + SMALL_TALK) - 3  # only what was left
            # alice is complete: her next search uses the channel (the reembed bumped her version)
            assert "f-peanut" in await top(client, auth, "我女儿对什么过敏？")

            # the CLI fills the rest (bob), leaves alice alone, and says so
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "app.cli.reembed",
                "--batch-size",
                "2",
                env=cli_env(settings),
                cwd=tmp_path,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(proc.communicate(), 180)
            assert proc.returncode == 0, err.decode()
            summary = json.loads(out)
            assert summary["model"] == bridge_model_name()
            assert summary["users_seen"] == 2
            assert summary["users_complete_before"] == 1
            assert summary["users_filled"] == 1
            assert summary["vectors_written"] == len(FACTS + SMALL_TALK)
            assert b"reembed progress" in err
            assert "f-cat" in await top(client, auth, "What is our cat called?", user="bob")
        assert len(bridge_records(settings)) == 2 * len(FACTS + SMALL_TALK)


def cli_env(settings: Settings) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CHROMA_", "PROMETHEUS_MULTIPROC"))}
    return {
        **env,
        "REDIS_URL": settings.redis_url,
        **({"REDIS_CLUSTER_NODES": settings.redis_cluster_nodes} if settings.redis_cluster_nodes else {}),
        "CHROMA_URL": settings.chroma_url,
        "CHROMA_COLLECTION_PREFIX": settings.chroma_collection_prefix,
        "MEMORY_SHARDS": str(settings.memory_shards),
        "AUTH_JWT_SECRET": TEST_SECRET,
        "LOG_LEVEL": "INFO",
        "PYTHONPATH": str(ROOT),
    }


class TestGovernanceCoversTheChannel:
    async def test_delete_and_forget_remove_bridge_vectors(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        await seed(client, auth)
        listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
        by_message = {m["source_message_ids"][0]: m["id"] for m in listed["items"]}
        gone = await client.delete(f"/v1/memory/alice/{by_message['f-peanut']}", headers=auth("alice"))
        assert gone.status_code == 204
        forgot = await client.post(
            "/v1/memory/alice/forget",
            json={"before": NOW - 3 * DAY + 2, "dry_run": False},
            headers=auth("alice"),
        )  # f-peanut (already gone) and f-nurse
        assert forgot.status_code == 200, forgot.text
        gone_ids = {by_message["f-peanut"], by_message["f-nurse"]}
        await until(lambda: not gone_ids & {i for i, _ in bridge_records(settings)})  # purged after the 204
        assert by_message["f-cat"] in {i for i, _ in bridge_records(settings)}
        assert "f-peanut" not in await top(client, auth, "我女儿对什么过敏？", k=10)

    async def test_erase_removes_one_users_channel_and_export_names_it(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        await seed(client, auth, "alice")
        await seed(client, auth, "bob")
        exported = await client.get("/v1/memory/alice/export", headers=auth("alice"))
        assert exported.status_code == 200
        doc = exported.json()
        assert doc["memories"]
        assert all(
            m["embedded_by"] == ["all-MiniLM-L6-v2 (onnx)", bridge_model_name()] for m in doc["memories"]
        )
        assert all("embedding" not in m for m in doc["memories"])  # vectors stay out of the export
        erased = await client.delete("/v1/memory/alice", params={"confirm": "alice"}, headers=auth("alice"))
        assert erased.status_code == 200, erased.text
        owners = {u for _, u in bridge_records(settings)}
        assert owners == {"bob"}
