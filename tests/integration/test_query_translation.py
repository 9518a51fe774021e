"""Query translation through the upstream LLM (issue 28; real Redis, real Chroma, the real models, a
fake upstream that translates from a table): a question asked in one language is also searched in the
language of the user's memories, only when the user has memories in it, never for forget, and a model
that is down or answers nonsense costs nothing but the translation."""

from __future__ import annotations

import httpx
import pytest

from app.settings import Settings
from harness.outbox import drain
from memory import Embedder
from tests.conftest import AuthHeaders, app_client
from tests.fake_llm import FakeUpstream

pytestmark = pytest.mark.integration
NOW = 1_790_000_000.0

ZH_FACTS = [
    ("zh-plate", "我的车牌号是浙A8K2M7，上个月刚换的新车。"),
    ("zh-violin", "我女儿每周六上午去少年宫学小提琴。"),
    ("zh-peanut", "我对花生过敏，吃了会起疹子。"),
    ("zh-dog", "我们家的狗叫豆豆，是一只柯基。"),
    ("zh-job", "我在一家银行做会计，已经五年了。"),
    ("zh-trip", "国庆节我们打算去成都吃火锅。"),
]
EN_FACTS = [
    ("en-plate", "My licence plate is ZJ-8K2M7, I changed cars last month."),
    ("en-violin", "My daughter takes violin lessons at the youth centre every Saturday morning."),
    ("en-peanut", "I'm allergic to peanuts, they give me a rash."),
    ("en-dog", "Our dog is called Doudou, he's a corgi."),
]
# the questions, and what the fake upstream answers when asked to translate them
TRANSLATED = {
    "Which number is on the car I drive?": "我开的车的车牌号是多少？",
    "What does my kid do on the weekend?": "我孩子周末做什么？",
    "我女儿周六上什么课？": "What lessons does my daughter take on Saturdays?",
    "我对什么过敏？": "What am I allergic to?",
    # none of these words are in the other language's memories, and the bridge does not carry them
    # there (without translation: no hit above the relevance floor)
    "What can't I eat?": "我不能吃什么？",
    "我不能吃什么？": "What can't I eat?",
}


def upstream(mode: str = "ok") -> FakeUpstream:
    fake = FakeUpstream(reply="Sure! Here is a long answer that is no translation at all.", mode=mode)
    fake.translations = dict(TRANSLATED)
    return fake


def translating(settings: Settings, **more: object) -> Settings:
    return settings.model_copy(
        update={
            "llm_base_url": "http://upstream.test/v1",
            "llm_model": "fake-model",
            "query_translation": True,
            "llm_supersession_judge": False,
            **more,
        }
    )


async def seed(client: httpx.AsyncClient, auth: AuthHeaders, user: str, facts: list[tuple[str, str]]) -> None:
    for i, (mid, text) in enumerate(facts):
        message = {"role": "user", "content": text, "id": mid, "timestamp": NOW - 1000 + i}
        resp = await client.post(
            f"/v1/memory/{user}/messages",
            json={"session_id": f"s{i}", "messages": [message]},
            headers=auth(user),
        )
        assert resp.status_code == 200, resp.text


async def hits(client: httpx.AsyncClient, auth: AuthHeaders, user: str, query: str) -> list[str]:
    resp = await client.post(
        f"/v1/memory/{user}/search", json={"query": query, "top_k": 3, "as_of": NOW}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return [mid for r in resp.json()["results"] for mid in r["source_message_ids"]]


async def test_a_question_is_also_searched_in_the_memories_language(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    fake = upstream()
    async with app_client(translating(settings), embedder, fake.transport) as (client, _):
        await seed(client, auth, "mei", ZH_FACTS)
        await seed(client, auth, "tom", EN_FACTS)
        asked = [
            ("mei", "Which number is on the car I drive?", "zh-plate"),
            ("mei", "What does my kid do on the weekend?", "zh-violin"),
            ("tom", "我女儿周六上什么课？", "en-violin"),
            ("mei", "What can't I eat?", "zh-peanut"),
            ("tom", "我不能吃什么？", "en-peanut"),
        ]
        for user, query, expected in asked:
            assert (await hits(client, auth, user, query))[:1] == [expected], query
        assert sorted(fake.translation_requests()) == sorted(q for _, q, _ in asked)


async def test_only_for_users_with_memories_in_the_other_language(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    fake = upstream()
    async with app_client(translating(settings), embedder, fake.transport) as (client, _):
        await seed(client, auth, "mei", ZH_FACTS)
        await hits(client, auth, "mei", "我对什么过敏？")  # the worker learns the user's languages
        before = len(fake.translation_requests())
        assert (await hits(client, auth, "mei", "我对什么过敏？"))[:1] == ["zh-peanut"]
        assert len(fake.translation_requests()) == before  # Chinese over Chinese: nothing asked


async def test_forget_is_judged_on_the_users_own_words(
    settings: Settings, embedder: Embedder, auth: AuthHeaders
) -> None:
    fake = upstream()
    async with app_client(translating(settings), embedder, fake.transport) as (client, _):
        await seed(client, auth, "mei", ZH_FACTS)
        resp = await client.post(
            "/v1/memory/mei/forget",
            json={"query": "Which number is on the car I drive?", "dry_run": True},
            headers=auth("mei"),
        )
        assert resp.status_code == 200, resp.text
        assert fake.translation_requests() == []


@pytest.mark.parametrize("mode", ["down", "timeout", "error500", "nonsense"])
async def test_no_translation_costs_only_the_translation(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, mode: str
) -> None:
    fake = upstream("ok" if mode == "nonsense" else mode)
    if mode == "nonsense":  # the model answers the question instead of translating it
        fake.translations = {}
    config = translating(settings, query_translation_timeout_seconds=2.0, llm_max_attempts=1)
    async with app_client(config, embedder, fake.transport) as (client, _):
        await seed(client, auth, "tom", EN_FACTS)
        assert (await hits(client, auth, "tom", "我对什么过敏？"))[:1] == ["en-peanut"]
        assert fake.translation_requests() == ["我对什么过敏？"]


@pytest.mark.parametrize(
    ("stored", "question"),
    [(ZH_FACTS[2], "What can't I eat?"), (EN_FACTS[2], "我不能吃什么？")],
)
async def test_the_first_search_after_a_users_first_memory_is_translated(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, stored: tuple[str, str], question: str
) -> None:
    """The writer caches the user's index while they have no memory yet; the retriever's check before
    the search read that stale empty index as "nothing to translate for". It is judged again once the
    search has brought the index up to date (found by the real-model lane, tests/llm)."""
    fake = upstream()
    async with app_client(translating(settings), embedder, fake.transport) as (client, _):
        await seed(client, auth, "mei", [stored])
        await drain(settings)
        assert (await hits(client, auth, "mei", question))[:1] == [stored[0]]
        assert fake.translation_requests() == [question]
