"""The write policy and hybrid recall end to end: real Redis, real Chroma, the real model."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import chromadb
import httpx
import pytest
from chromadb.config import Settings as ChromaSettings

from app.settings import Settings
from harness.outbox import drain
from memory import Embedder
from memory.outbox.stream import Outbox
from memory.redis_client import RedisClient
from tests.conftest import AuthHeaders, app_client, redis_of

pytestmark = pytest.mark.integration
DAY = 86400.0

PII_MESSAGE = (
    "我的邮箱是 zhang.san@example.com，手机 13812345678，身份证 11010519491231002X，"
    "card 4111 1111 1111 1111, call me at +44 20 7946 0958 or mail li.lei@corp.cn"
)
PII_STRINGS = [
    "zhang.san@example.com",
    "13812345678",
    "11010519491231002X",
    "4111 1111 1111 1111",
    "4111111111111111",
    "7946 0958",
    "li.lei@corp.cn",
]


async def post_messages(
    client: httpx.AsyncClient,
    auth: AuthHeaders,
    messages: list[dict[str, Any]],
    session: str = "s1",
    user: str = "alice",
) -> httpx.Response:
    resp = await client.post(
        f"/v1/memory/{user}/messages", json={"session_id": session, "messages": messages}, headers=auth(user)
    )
    assert resp.status_code == 200, resp.text
    return resp


async def search(
    client: httpx.AsyncClient, auth: AuthHeaders, query: str, **extra: Any
) -> list[dict[str, Any]]:
    resp = await client.post(
        "/v1/memory/alice/search", json={"query": query, "top_k": 5, **extra}, headers=auth("alice")
    )
    assert resp.status_code == 200, resp.text
    return resp.json()["results"]  # type: ignore[no-any-return]


async def dump_redis(r: RedisClient) -> str:
    chunks: list[str] = []
    async for key in r.scan_iter("*"):
        kind = await r.type(key)
        chunks.append(key)
        if kind == "string":
            chunks.append(str(await r.get(key)))
        elif kind == "hash":
            chunks.append(json.dumps(await r.hgetall(key), ensure_ascii=False))
        elif kind == "zset":
            chunks.extend(str(x) for x in await r.zrange(key, 0, -1))
        elif kind == "stream":
            entries: Any = await r.xrange(key)
            chunks.extend(json.dumps(fields, ensure_ascii=False) for _, fields in entries)
        elif kind == "list":
            chunks.extend(str(x) for x in await r.lrange(key, 0, -1))
        elif kind == "set":
            chunks.extend(str(x) for x in await r.smembers(key))
    await r.aclose()
    return "\n".join(chunks)


def dump_chroma(settings: Settings) -> str:
    host, port = settings.chroma_url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=ChromaSettings(anonymized_telemetry=False)
    )
    chunks: list[str] = []
    for col in client.list_collections():
        name = col if isinstance(col, str) else col.name
        if not name.startswith(settings.chroma_collection_prefix):
            continue
        got = client.get_collection(name).get(include=["documents", "metadatas"])
        chunks.extend(d or "" for d in got["documents"] or [])
        chunks.extend(json.dumps(m, ensure_ascii=False) for m in got["metadatas"] or [])
    return "\n".join(chunks)


class TestPrivacy:
    async def test_pii_never_reaches_chroma_or_redis(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        stored = await post_messages(client, auth, [{"role": "user", "content": PII_MESSAGE, "id": "p1"}])
        assert "[EMAIL]" in stored.json()["memories"][0]["content"]
        chat = await client.post(
            "/v1/chat/completions",
            json={"messages": [{"role": "user", "content": PII_MESSAGE}], "session_id": "pii"},
            headers=auth("alice"),
        )
        assert chat.status_code == 200
        for _ in range(200):  # let the outbox write the chat turn too
            if not await Outbox(redis_of(settings)).pending():
                break
            await asyncio.sleep(0.05)
        everything = await dump_redis(redis_of(settings)) + dump_chroma(settings)
        assert "[PHONE]" in everything
        for secret in PII_STRINGS:
            assert secret not in everything, secret


class TestDuplicates:
    @pytest.fixture(params=["in_process", "vector_store"])
    async def client(
        self, request: pytest.FixtureRequest, settings: Settings, embedder: Embedder
    ) -> AsyncIterator[httpx.AsyncClient]:
        """Both duplicate checks: against the worker's index, and (users above the in-process
        limit) through Chroma."""
        limit = settings.in_process_index_max if request.param == "in_process" else 0
        async with app_client(settings.model_copy(update={"in_process_index_max": limit}), embedder) as (
            c,
            _,
        ):
            yield c

    async def test_ten_parallel_writes_of_one_fact_leave_one_memory(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        fact = [{"role": "user", "content": "我对花生过敏，记住这个 / I am allergic to peanuts"}]
        results = await asyncio.gather(
            *(post_messages(client, auth, fact, session=f"s{i}") for i in range(10))
        )
        assert {r.json()["memories"][0]["id"] for r in results} == {results[0].json()["memories"][0]["id"]}
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 1

    async def test_near_duplicate_merges_newer_text_and_provenance(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await post_messages(
            client,
            auth,
            [{"role": "user", "content": "My favourite colour is deep blue.", "id": "a", "timestamp": 1000}],
        )
        await post_messages(
            client,
            auth,
            [{"role": "user", "content": "My favourite colour is deep blue!!", "id": "b", "timestamp": 2000}],
            session="s2",
        )
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 1, listed
        only = listed["items"][0]
        assert sorted(only["source_message_ids"]) == ["a", "b"]
        assert only["content"].endswith("!!")

    async def test_different_facts_that_look_alike_stay_apart(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await post_messages(client, auth, [{"role": "user", "content": "我住在杭州"}])
        await post_messages(client, auth, [{"role": "user", "content": "我住在苏州"}], session="s2")
        await post_messages(client, auth, [{"role": "user", "content": "order A123 has shipped"}])
        await post_messages(client, auth, [{"role": "user", "content": "order A124 has shipped"}])
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 4


class TestWritePolicy:
    async def test_importance_topic_and_tiers(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        async with app_client(settings, embedder) as (client, _):
            body = (
                await post_messages(
                    client,
                    auth,
                    [
                        {"role": "user", "content": "我最喜欢和王芳去成都吃火锅", "id": "f1"},
                        {"role": "user", "content": "哈哈哈", "id": "f2"},
                        {
                            "role": "user",
                            "content": "I love hiking with my friend Sarah in Yosemite",
                            "id": "f3",
                        },
                        {"role": "user", "content": "ok cool", "id": "f4"},
                    ],
                )
            ).json()
            by_id = {m["source_message_ids"][0]: m for m in body["memories"]}
            assert by_id["f1"]["importance"] >= 0.65
            assert by_id["f1"]["topic"] == "food"
            assert by_id["f3"]["importance"] >= 0.65
            # small talk is no memory at all (issue 24), named in the answer
            assert sorted(by_id) == ["f1", "f3"]
            assert body["skipped"] == [
                {"index": 1, "reason": "small_talk"},
                {"index": 3, "reason": "small_talk"},
            ]
            top = (
                await client.get("/v1/memory/alice/list?sort=importance&limit=2", headers=auth("alice"))
            ).json()
            assert {m["source_message_ids"][0] for m in top["items"]} == {"f1", "f3"}

    async def test_anchors(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        body = (
            await post_messages(
                client,
                auth,
                [
                    {"role": "user", "content": "记住，我的车位是B2-117", "id": "a1"},
                    {"role": "user", "content": "my order number is 88231-X", "id": "a2"},
                    {"role": "user", "content": "怎么把 Excel 转成 CSV？", "id": "a3"},
                    {"role": "assistant", "content": "用“另存为”，格式选 CSV UTF-8 即可。", "id": "a4"},
                    {"role": "user", "content": "好的，谢谢", "id": "a5"},
                ],
            )
        ).json()
        by_id = {m["source_message_ids"][0]: m for m in body["memories"]}
        assert by_id["a1"]["importance"] >= 0.65  # explicit "remember"
        assert by_id["a1"]["content"] == "我的车位是B2-117"  # the anchor is not the fact (issue 40)
        assert by_id["a2"]["importance"] >= 0.65  # order number
        assert by_id["a4"]["importance"] >= 0.65  # the solution the user confirmed
        assert "a3" not in by_id  # a how-to is a request for the assistant: no memory (issue 40)

    async def test_entity_from_an_earlier_session_is_an_anchor_in_a_new_one(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await post_messages(client, auth, [{"role": "user", "content": "we loved Lisbon", "id": "e1"}])
        later = (
            await post_messages(
                client, auth, [{"role": "user", "content": "back to Lisbon soon?", "id": "e2"}], session="s2"
            )
        ).json()
        assert later["memories"][0]["importance"] >= 0.65, later


class TestRecall:
    @pytest.mark.parametrize(
        ("memories", "query", "negated_id"),
        [
            (
                ["我想买一台咖啡机，预算两千", "我也在看烤面包机", "厨房太小了"],
                "不要推荐咖啡机，给我推荐个厨房小家电",
                "m0",
            ),
            (
                [
                    "I was looking at coffee machines for the kitchen",
                    "I might get a toaster",
                    "my kitchen is tiny",
                ],
                "don't suggest coffee machines, recommend a small kitchen appliance",
                "m0",
            ),
        ],
    )
    async def test_negation_keeps_the_negated_thing_off_the_top(
        self, client: httpx.AsyncClient, auth: AuthHeaders, memories: list[str], query: str, negated_id: str
    ) -> None:
        await post_messages(
            client, auth, [{"role": "user", "content": c, "id": f"m{i}"} for i, c in enumerate(memories)]
        )
        plain = await search(
            client,
            auth,
            query.split("，")[0]
            .split(",")[0]
            .replace("不要推荐", "推荐")
            .replace("don't suggest", "suggest"),
        )
        assert plain[0]["source_message_ids"] == [negated_id]  # without the negation it would come first
        ranked = [r["source_message_ids"][0] for r in await search(client, auth, query)]
        assert ranked[0] != negated_id
        # last, or below the relevance floor altogether (a weakly known query's hit needs a word in
        # common, issue 42: once the negated words are set aside the coffee machine shares none)
        assert negated_id not in ranked or ranked[-1] == negated_id

    async def test_document_aliases_cross_languages(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await post_messages(
            client,
            auth,
            [
                {"role": "user", "content": "The invoice from the plumber is 320 euros", "id": "i1"},
                {"role": "user", "content": "我周末去爬山了", "id": "i2"},
                {"role": "user", "content": "上个月的电费账单还没交", "id": "i3"},
            ],
        )
        assert (await search(client, auth, "我的账单"))[0]["source_message_ids"][0] in {"i1", "i3"}
        assert {r["source_message_ids"][0] for r in (await search(client, auth, "my bills"))[:2]} == {
            "i1",
            "i3",
        }

    async def test_quote_from_march(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        march = time.mktime((2026, 3, 12, 10, 0, 0, 0, 0, 0))
        may = time.mktime((2026, 5, 12, 10, 0, 0, 0, 0, 0))
        await post_messages(
            client,
            auth,
            [
                {
                    "role": "user",
                    "content": "报价单已经发给客户了，总价十二万",
                    "id": "q3",
                    "timestamp": march,
                },
                {"role": "user", "content": "新的报价单发过去了，总价十五万", "id": "q5", "timestamp": may},
            ],
        )
        first = (
            await search(
                client, auth, "我3月提交的报价单", as_of=time.mktime((2026, 11, 1, 0, 0, 0, 0, 0, 0))
            )
        )[0]
        assert first["source_message_ids"] == ["q3"]

    async def test_recency_for_now_questions_but_old_facts_not_buried(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        now = time.time()
        await post_messages(
            client,
            auth,
            [
                {"role": "user", "content": "I live in Hangzhou", "id": "old", "timestamp": now - 200 * DAY},
                {
                    "role": "user",
                    "content": "I moved, I live in Suzhou now",
                    "id": "new",
                    "timestamp": now - 2 * DAY,
                },
                {
                    "role": "user",
                    "content": "My sister Mei plays the cello",
                    "id": "mei",
                    "timestamp": now - 300 * DAY,
                },
                {"role": "user", "content": "had a sandwich", "id": "noise", "timestamp": now - 1 * DAY},
            ],
        )
        assert (await search(client, auth, "where do I live now?"))[0]["source_message_ids"] == ["new"]
        # a 300-day-old memory still wins when it is the relevant one
        assert (await search(client, auth, "what instrument does my sister play?"))[0][
            "source_message_ids"
        ] == ["mei"]


class TestWhatIsKept:
    """Issue 24's reproductions: each failed before the write policy's gate, the user-only anchor and the
    health lexicon."""

    @pytest.mark.parametrize(
        ("fact", "ack", "query"),
        [
            ("记住：我对花生过敏", "好的，我记住了", "我记住了什么"),
            ("Remember this: my locker code is behind the calendar", "Sure, noted!", "noted"),
        ],
        ids=["zh", "en"],
    )
    async def test_the_assistants_acknowledgement_is_no_memory(
        self, client: httpx.AsyncClient, auth: AuthHeaders, fact: str, ack: str, query: str
    ) -> None:
        body = (
            await post_messages(
                client,
                auth,
                [
                    {"role": "user", "content": fact, "id": "u1"},
                    {"role": "assistant", "content": ack, "id": "a1"},
                    {"role": "user", "content": "哈哈 thanks", "id": "u2"},
                ],
            )
        ).json()
        assert [m["source_message_ids"] for m in body["memories"]] == [["u1"]]
        assert body["memories"][0]["tier"] == "fact"
        assert body["skipped"] == [{"index": 1, "reason": "small_talk"}, {"index": 2, "reason": "small_talk"}]
        hits = await search(client, auth, query)
        assert all("a1" not in h["source_message_ids"] for h in hits), hits
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 1

    @pytest.mark.parametrize(
        ("statement", "question", "query"),
        [
            ("我住在杭州，离西湖不远。", "我住在哪个城市？", "我住在哪个城市？"),
            ("My dog is called Biscuit, a beagle.", "what's my dog's name?", "what's my dog's name?"),
        ],
        ids=["zh", "en"],
    )
    async def test_a_question_is_not_stored_as_a_statement(
        self, client: httpx.AsyncClient, auth: AuthHeaders, statement: str, question: str, query: str
    ) -> None:
        await post_messages(
            client, auth, [{"role": "user", "content": statement, "id": "s", "timestamp": 1000}]
        )
        body = (
            await post_messages(
                client,
                auth,
                [{"role": "user", "content": question, "id": "q", "timestamp": 2000}],
                session="s2",
            )
        ).json()
        assert body["memories"] == []
        assert body["skipped"] == [{"index": 0, "reason": "question"}]
        hits = await search(client, auth, query)
        assert hits[0]["source_message_ids"] == ["s"], hits
        assert all("q" not in h["source_message_ids"] for h in hits)

    async def test_a_question_that_states_or_names_something_is_kept(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        body = (
            await post_messages(
                client,
                auth,
                [
                    {"role": "user", "content": "我搬到苏州了，有什么好吃的推荐吗？", "id": "z"},
                    {"role": "user", "content": "Can you remind me to call Anna on Friday?", "id": "e"},
                ],
            )
        ).json()
        assert sorted(m["source_message_ids"][0] for m in body["memories"]) == ["e", "z"]
        assert body["skipped"] == []

    @pytest.mark.parametrize(
        "text",
        [
            "I'm allergic to peanuts",
            "I\u2019m allergic to peanuts.",
            "我对花生过敏",
            "I take insulin every morning before breakfast.",
            "我有高血压，每天吃降压药。",
            "My emergency contact is my brother Tom.",
            "我的紧急联系人是我妈妈。",
            "I can't eat gluten, I have celiac disease.",
            "我不能吃海鲜。",
        ],
    )
    async def test_health_and_safety_facts_are_important_facts(
        self, client: httpx.AsyncClient, auth: AuthHeaders, text: str
    ) -> None:
        body = (await post_messages(client, auth, [{"role": "user", "content": text, "id": "h"}])).json()
        (memory,) = body["memories"]
        assert memory["tier"] == "fact"
        assert memory["importance"] >= 0.9, memory

    @pytest.mark.parametrize(
        "echo",
        [
            "好的，我会记住：你对花生过敏，下单时我会提醒你。",
            "Got it, I'll remember that you prefer the window seat on long flights.",
        ],
        ids=["zh", "en"],
    )
    async def test_remember_fires_on_the_users_words_not_the_assistants_echo(
        self, client: httpx.AsyncClient, auth: AuthHeaders, echo: str
    ) -> None:
        body = (
            await post_messages(
                client,
                auth,
                [
                    {"role": "user", "content": "Do you remember what I ordered last time?", "id": "u"},
                    {"role": "assistant", "content": echo, "id": "a"},
                ],
            )
        ).json()
        (memory,) = body["memories"]  # the user's recall question is no memory, and no anchor
        assert memory["source_message_ids"] == ["a"]
        assert memory["tier"] == "episodic"
        assert memory["importance"] < 0.65


class TestWriteHygiene:
    """Issue 40: requests for the assistant and greeting questions are no memory, a request keeps the
    fact it carries, and the user's "remember" pins a memory without being part of it
    (bench/data/write_hygiene.json has the labelled set)."""

    @pytest.mark.parametrize(
        ("statement", "asked", "query"),
        [
            (
                "I went diving in the Red Sea last summer.",
                [
                    "Tell me a fun fact number 0 about the ocean",
                    "write me a poem",
                    "How do I convert 100 Celsius to Fahrenheit?",
                    "Thank you! Where do I live?",
                ],
                "fun fact about the ocean",
            ),
            (
                "我去年夏天在三亚潜水了。",
                ["帮我写一首诗", "给我讲个笑话", "翻译一下", "怎么把 Excel 转成 CSV？", "你好，我住哪？"],
                "给我讲个笑话",
            ),
        ],
        ids=["en", "zh"],
    )
    async def test_requests_and_greeting_questions_are_not_stored(
        self, client: httpx.AsyncClient, auth: AuthHeaders, statement: str, asked: list[str], query: str
    ) -> None:
        messages = [{"role": "user", "content": statement, "id": "s"}]
        messages += [{"role": "user", "content": text, "id": f"q{i}"} for i, text in enumerate(asked)]
        body = (await post_messages(client, auth, messages)).json()
        assert [m["source_message_ids"] for m in body["memories"]] == [["s"]]
        assert body["skipped"] == [{"index": i + 1, "reason": "question"} for i in range(len(asked))]
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert [m["content"] for m in listed["items"]] == [statement]
        hits = await search(client, auth, query, min_relevance=0)
        assert all(h["source_message_ids"] == ["s"] for h in hits), hits

    @pytest.mark.parametrize(
        ("said", "kept", "query"),
        [
            ("记住：我的车牌号是沪A12345", "我的车牌号是沪A12345", "我的车牌号是多少？"),
            ("Please remember: my locker code is 4312", "my locker code is 4312", "what's my locker code?"),
            ("请记住：我的手机号是13812345678", "我的手机号是[PHONE]", "我的手机号"),  # PII is still redacted
        ],
        ids=["zh", "en", "zh-pii"],
    )
    async def test_the_remember_anchor_pins_the_memory_and_is_not_stored(
        self, client: httpx.AsyncClient, auth: AuthHeaders, said: str, kept: str, query: str
    ) -> None:
        (memory,) = (
            await post_messages(client, auth, [{"role": "user", "content": said, "id": "r"}])
        ).json()["memories"]
        assert memory["content"] == kept
        assert memory["tier"] == "fact"
        assert memory["importance"] >= 0.65
        hits = await search(client, auth, query)
        assert [h["content"] for h in hits] == [kept]

    @pytest.mark.parametrize(
        ("said", "kept"),
        [("I'm vegetarian, suggest a recipe", "I'm vegetarian"), ("我是素食者，推荐个菜谱", "我是素食者")],
        ids=["en", "zh"],
    )
    async def test_a_request_keeps_the_fact_it_carries(
        self, client: httpx.AsyncClient, auth: AuthHeaders, said: str, kept: str
    ) -> None:
        (memory,) = (
            await post_messages(client, auth, [{"role": "user", "content": said, "id": "v"}])
        ).json()["memories"]
        assert memory["content"] == kept
        assert memory["tier"] == "fact"  # a dietary restriction: a health and safety fact

    async def test_chat_turns(self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings) -> None:
        """The same rules on chat turns (the outbox and the long-term writer)."""
        said = [
            "Tell me a fun fact number 0 about the ocean",
            "你好，我住哪？",
            "帮我写一首诗",
            "记住：我的车牌号是沪A12345",
            "Please remember: my locker code is 4312",
            "I'm vegetarian, suggest a recipe",
        ]
        for text in said:
            resp = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": text}], "session_id": "hygiene"},
                headers=auth("alice"),
            )
            assert resp.status_code == 200, resp.text
        await drain(settings)
        listed = (await client.get("/v1/memory/alice/list?limit=100", headers=auth("alice"))).json()
        assert sorted(m["content"] for m in listed["items"]) == sorted(
            ["我的车牌号是沪A12345", "my locker code is 4312", "I'm vegetarian"]
        )
        assert all(m["tier"] == "fact" for m in listed["items"])
