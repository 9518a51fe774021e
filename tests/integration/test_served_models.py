"""Models served over HTTP (issue 44): the bundled models behind the real `/v1/embeddings` and
`/rerank` protocols (harness/model_server.py, a real subprocess), against real Redis and Chroma.

- recall through the served models is what it is in process (same hits, same relevance);
- an outage of the model server under writes and searches: no 500, searches degrade to the keyword
  channel (flagged), a write that needs the model answers 503 with Retry-After, and everything written
  meanwhile (a chat turn's memory, a retried write) is searchable once the server is back;
- the reranking stage reorders as the reranker says and never past its budget;
- a switch of the bridge model under search load: no failed search, the new model's vectors in
  collections of their own; a dense model that differs from the one the collections hold is refused.
"""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from app.clients.embeddings import HttpEmbedder, ServedModel
from app.composition import (
    bridge_name,
    build_bridge,
    build_embedder,
    build_store,
    model_collection_prefix,
)
from app.composition.dense import dense_layout
from app.settings import Settings, StartError
from harness.model_server import DIMENSIONS, MINILM, USE, start_model_server
from harness.services import ServerProcess, start_chroma
from memory import Embedder
from memory.embedding.base import Vectors
from memory.errors import EmbeddingUnavailable
from memory.longterm.bridge import BridgedStore, bridge_prefix
from memory.longterm.reembed import Reembedder
from monitoring import metrics
from tests.conftest import (
    AuthHeaders,
    app_client,
    drop_collections,
    error_code,
    make_settings,
    records_on,
    redis_of,
    until,
)
from tests.integration.test_chat import chat
from tests.integration.test_crosslingual import ASKED, FACTS, NOW, SMALL_TALK, seed, top

pytestmark = pytest.mark.integration
QUERIES = [
    *(q for q, _ in ASKED),
    "我的猫叫什么名字？",
    "Where do I work?",
    "peanut allergy",
    "午饭吃了什么",
]


@pytest.fixture(scope="module")
def model_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    server = start_model_server(tmp_path_factory.mktemp("models"))
    yield server
    server.stop()


def served(settings: Settings, server: ServerProcess, **overrides: Any) -> Settings:
    """`settings` with both channels served by `server` (its own collections unless a prefix is given)."""
    values: dict[str, Any] = {
        "embeddings_url": f"{server.url}/v1",
        "embeddings_model": MINILM,
        "embeddings_dimensions": DIMENSIONS[MINILM],
        "bridge_embeddings_url": f"{server.url}/v1",
        "bridge_embeddings_model": USE,
        "bridge_embeddings_dimensions": DIMENSIONS[USE],
        **overrides,
    }
    return make_settings(settings.redis_url.removesuffix("/0"), settings.chroma_url, **values)


async def hits(client: httpx.AsyncClient, auth: AuthHeaders, query: str, user: str = "alice") -> list[Any]:
    resp = await client.post(
        f"/v1/memory/{user}/search", json={"query": query, "top_k": 5, "as_of": NOW}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return [(r["source_message_ids"][0], round(r["relevance"], 4)) for r in resp.json()["results"]]


class TestServedEqualsInProcess:
    async def test_same_hits_and_relevance_for_zh_and_en_queries(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, model_server: ServerProcess
    ) -> None:
        over_http = served(settings, model_server)
        try:
            async with app_client(settings, embedder) as (client, _):
                await seed(client, auth)
                local = [await hits(client, auth, q) for q in QUERIES]
            async with app_client(over_http, build_embedder(over_http)) as (client, _):
                await seed(client, auth)
                remote = [await hits(client, auth, q) for q in QUERIES]
            # the served bridge model's vectors live in collections of their own
            prefix = bridge_prefix(over_http.chroma_collection_prefix)
            own = model_collection_prefix(prefix, bridge_name(over_http))
            assert own != prefix
            assert len(records_on(settings.chroma_url, own)) == len(FACTS + SMALL_TALK)
            assert records_on(settings.chroma_url, prefix) == []
        finally:
            drop_collections(settings.chroma_url, over_http.chroma_collection_prefix)
        assert all(local), local  # every query finds something: the comparison is not of empty lists
        assert remote == local


class TestOutage:
    async def test_no_500_no_lost_write_and_searchable_once_back(
        self, settings: Settings, auth: AuthHeaders, tmp_path: Path
    ) -> None:
        server = start_model_server(tmp_path)
        over_http = served(
            settings,
            server,
            embeddings_max_attempts=1,
            embeddings_timeout_seconds=2.0,
            embeddings_breaker_failures=2,
            embeddings_breaker_reset_seconds=0.5,
        )
        try:
            async with app_client(over_http, build_embedder(over_http)) as (client, _):
                await seed(client, auth)
                assert "f-peanut" in await top(client, auth, "Is my daughter allergic to peanuts?")
                server.stop()  # the model server goes down
                degraded_before = metrics.SEARCHES_DEGRADED._value.get()
                statuses: list[int] = []
                for query in ["peanuts allergic daughter", "青霉素 过敏"]:
                    resp = await client.post(
                        "/v1/memory/alice/search", json={"query": query, "as_of": NOW}, headers=auth("alice")
                    )
                    statuses.append(resp.status_code)
                    assert resp.status_code == 200, resp.text
                    body = resp.json()
                    assert body["degraded"] == "embeddings_unavailable"
                    assert body["results"], "the keyword channel still answers"
                assert metrics.SEARCHES_DEGRADED._value.get() >= degraded_before + 2
                written = {"role": "user", "content": "My brother lives in Lisbon.", "id": "f-lisbon"}
                resp = await client.post(
                    "/v1/memory/alice/messages",
                    json={"session_id": "s2", "messages": [written]},
                    headers=auth("alice"),
                )
                statuses.append(resp.status_code)
                assert resp.status_code == 503, resp.text
                assert error_code(resp) == "embeddings_unavailable"
                assert int(resp.headers["Retry-After"]) > 0
                said = "我妹妹在成都开了一家火锅店。"
                turn = await chat(client, auth, said, session="c1")
                statuses.append(turn.status_code)
                assert turn.status_code == 200, turn.text  # recall degraded; the write waits in the outbox
                assert 500 not in statuses

                server = start_model_server(tmp_path, port=server.port)  # back, on the same port

                async def retried() -> bool:  # the client's retry, after Retry-After
                    resp = await client.post(
                        "/v1/memory/alice/messages",
                        json={"session_id": "s2", "messages": [written]},
                        headers=auth("alice"),
                    )
                    assert resp.status_code in {200, 503}, resp.text
                    if resp.status_code == 503:
                        await asyncio.sleep(float(resp.headers["Retry-After"]) / 10)
                    return resp.status_code == 200

                await until(retried, timeout=30)

                async def found(query: str, mid_or_text: str) -> bool:
                    resp = await client.post(
                        "/v1/memory/alice/search", json={"query": query, "as_of": NOW}, headers=auth("alice")
                    )
                    results = resp.json()["results"] if resp.status_code == 200 else []
                    return resp.json().get("degraded") is None and any(
                        mid_or_text in (r["content"], *r["source_message_ids"]) for r in results
                    )

                assert await found("Where does my brother live?", "f-lisbon")
                await until(lambda: found("我妹妹开了什么店？", said), timeout=60)
        finally:
            server.stop()
            drop_collections(settings.chroma_url, over_http.chroma_collection_prefix)


class TestRerank:
    async def test_the_stage_orders_as_told_and_never_past_its_budget(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, model_server: ServerProcess
    ) -> None:
        query = "allergic"
        async with app_client(settings, embedder) as (client, _):
            await seed(client, auth)
            first = [m for m, _ in await hits(client, auth, query)]
        assert len(first) >= 2
        told = list(reversed(first))
        contents = dict(FACTS + SMALL_TALK)
        reranked = settings.model_copy(
            update={
                "rerank_url": model_server.url,
                "rerank_model": "stand-in",
                "rerank_weight": 1.0,
                "rerank_timeout_seconds": 0.5,
            }
        )
        async with httpx.AsyncClient(base_url=model_server.url) as control:
            for style in ("cohere", "tei"):
                scores = {contents[mid]: float(len(told) - i) for i, mid in enumerate(told)}
                await control.post("/control", json={"scores": scores})
                styled = reranked.model_copy(update={"rerank_style": style})
                async with app_client(styled, embedder) as (client, _):
                    assert [m for m, _ in await hits(client, auth, query)] == told, style
                    timeouts = metrics.RERANKS.labels("timeout")._value.get()
                    await control.post("/control", json={"scores": scores, "delay_seconds": 5})
                    t0 = time.monotonic()
                    kept = [m for m, _ in await hits(client, auth, query)]
                    elapsed = time.monotonic() - t0
                    await control.post("/control", json={})
                assert kept == first, "past its budget the first-stage order stands"
                assert metrics.RERANKS.labels("timeout")._value.get() == timeouts + 1
                assert elapsed < 5, "the search did not wait for the reranker's answer"


class PausingChroma:
    """The served bridge model, which pauses the Chroma process (SIGSTOP) for `seconds` right after its
    `after`-th call: the next store call of the batch meets a Chroma that answers nothing, as a
    single-node Chroma compacting the collection a backfill writes into does on a loaded machine."""

    def __init__(self, model: HttpEmbedder, chroma: ServerProcess, *, after: int, seconds: float) -> None:
        self.model, self.chroma, self.left, self.seconds = model, chroma, after, seconds
        self.paused = False

    @property
    def dimension(self) -> int:
        return self.model.dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        vectors = await self.model.embed(texts)
        self.left -= 1
        if self.left == 0:
            self.chroma.proc.send_signal(signal.SIGSTOP)
            self.paused = True
            asyncio.get_running_loop().call_later(self.seconds, self.chroma.proc.send_signal, signal.SIGCONT)
        return vectors


def served_bridge(settings: Settings, server: ServerProcess) -> Settings:
    """`settings` with the bridge from USE served over HTTP: another model name, so new collections."""
    return settings.model_copy(
        update={
            "bridge_embeddings_url": f"{server.url}/v1",
            "bridge_embeddings_model": USE,
            "bridge_embeddings_dimensions": DIMENSIONS[USE],
        }
    )


class TestModelSwitch:
    async def test_bridge_switch_under_search_load_then_dense_mismatch_refused(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders, model_server: ServerProcess
    ) -> None:
        users = ["alice", "bob", "carol"]
        async with app_client(settings, embedder) as (client, _):
            for user in users:
                await seed(client, auth, user)
        # the new bridge model (here: USE served over HTTP, another model name) beside the old one
        switched = served_bridge(settings, model_server)
        redis = redis_of(settings)
        new_bridge = build_bridge(switched)
        assert new_bridge is not None
        failures: list[str] = []
        done = asyncio.Event()
        async with app_client(switched, embedder) as (client, _):

            async def load() -> int:
                n = 0
                while not done.is_set():
                    for user in users:
                        for question, _fact in ASKED:
                            resp = await client.post(
                                f"/v1/memory/{user}/search",
                                json={"query": question, "as_of": NOW},
                                headers=auth(user),
                            )
                            n += 1
                            if resp.status_code != 200:
                                failures.append(resp.text)
                return n

            searching = asyncio.create_task(load())
            store = build_store(switched, redis, new_bridge)
            assert isinstance(store, BridgedStore)
            report = await Reembedder(store, new_bridge, redis, batch_size=3, max_per_second=500).run()
            done.set()
            searched = await searching
            assert report.failures == 0
            assert report.users_filled == len(users)
            assert searched > 0
            assert failures == []
            # complete: every user's cross-language questions find their facts through the new model
            for question, fact in ASKED:
                assert fact in await top(client, auth, question, user="bob")
        # the old model's collections are untouched (the way back), the new one's are apart
        prefix = bridge_prefix(settings.chroma_collection_prefix)
        assert len(records_on(settings.chroma_url, prefix)) == len(users) * len(FACTS + SMALL_TALK)
        new = model_collection_prefix(prefix, bridge_name(switched))
        assert len(records_on(settings.chroma_url, new)) == len(users) * len(FACTS + SMALL_TALK)
        # a served dense model over collections that hold the bundled model's vectors: refused
        dense = served(settings, model_server).model_copy(
            update={"chroma_collection_prefix": settings.chroma_collection_prefix}
        )
        with pytest.raises(StartError, match="PREVIOUS_EMBEDDINGS"):
            await dense_layout(dense, redis)

    async def test_a_chroma_pause_mid_switch_is_waited_out(
        self,
        settings: Settings,
        embedder: Embedder,
        auth: AuthHeaders,
        model_server: ServerProcess,
        tmp_path: Path,
    ) -> None:
        """Issue 44: a 2 x 2,000 switch lost a user's backfill to one upsert that a compacting Chroma left
        unanswered past its timeout. A pause of Chroma in the middle of a batch now costs a retry, not
        the user: both users complete, every vector written once."""
        chroma = start_chroma(tmp_path / "chroma")
        try:
            own = make_settings(settings.redis_url.removesuffix("/0"), chroma.url, chroma_timeout_seconds=1.0)
            users = ["alice", "bob"]
            async with app_client(own, embedder) as (client, _):
                for user in users:
                    await seed(client, auth, user)
            switched = served_bridge(own, model_server)
            redis = redis_of(own)
            bridge = build_bridge(switched)
            assert isinstance(bridge, HttpEmbedder)
            store = build_store(switched, redis, bridge)
            assert isinstance(store, BridgedStore)
            pausing = PausingChroma(bridge, chroma, after=2, seconds=2.5)
            report = await Reembedder(store, pausing, redis, batch_size=3).run()
            assert pausing.paused, "Chroma was paused in the middle of the switch"
            assert (report.failures, report.failed_users) == (0, [])
            assert report.users_filled == len(users)
            assert report.batches_retried >= 1
            assert report.vectors_written == len(users) * len(FACTS + SMALL_TALK)
            new = model_collection_prefix(bridge_prefix(own.chroma_collection_prefix), bridge_name(switched))
            assert len(records_on(chroma.url, new)) == len(users) * len(FACTS + SMALL_TALK)
        finally:
            chroma.proc.send_signal(signal.SIGCONT)
            chroma.stop()


class TestEmbedderOverHttp:
    async def test_batches_in_order_and_refuses_a_wrong_size_or_model(
        self, embedder: Embedder, model_server: ServerProcess
    ) -> None:
        url = f"{model_server.url}/v1"
        texts = [f"第{i}条记忆 memory number {i}" for i in range(150)]
        served = HttpEmbedder(ServedModel(url=url, model=MINILM, dimension=384, batch_size=64))
        ok = metrics.MODEL_REQUESTS.labels("embeddings", MINILM, "ok")._value.get()
        vectors = await served.embed(texts)
        assert metrics.MODEL_REQUESTS.labels("embeddings", MINILM, "ok")._value.get() == ok + 3  # 64+64+22
        assert np.allclose(vectors, await embedder.embed(texts), atol=1e-6)
        wrong_size = HttpEmbedder(ServedModel(url=url, model=MINILM, dimension=512))
        with pytest.raises(EmbeddingUnavailable, match="refused"):
            await wrong_size.embed(["hello", "你好"])
        unknown = HttpEmbedder(ServedModel(url=url, model="no-such-model", dimension=384, max_attempts=3))
        retries = metrics.MODEL_REQUESTS.labels("embeddings", "no-such-model", "retry")._value.get()
        with pytest.raises(EmbeddingUnavailable, match="400"):
            await unknown.embed(["hello"])
        assert metrics.MODEL_REQUESTS.labels("embeddings", "no-such-model", "retry")._value.get() == retries
        for client in (served, wrong_size, unknown):
            await client.aclose()
