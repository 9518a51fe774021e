"""A memory's keyword context is the part of each neighbouring message nearest to it (issue 45): the end
of the messages before it and the opening of the one after, at most `WritePolicy.context_chars` of each,
not whole long turns (which cost Chroma ~7 ms of CPU a record and every searching worker their words).
Short messages, a chat's usual size, are kept whole as before. Real Redis and Chroma."""

from __future__ import annotations

import pytest

from app.composition import chroma_client_factory
from app.settings import Settings
from memory import ChromaLongTermStore, Embedder
from memory.longterm.versions import LtmVersions
from memory.models import Message
from memory.write.policy import WritePipeline, WritePolicy
from tests.conftest import redis_of

pytestmark = pytest.mark.integration

EN_TOPICS = [
    "the replica lag",
    "the deploy window",
    "my sister's garden",
    "the invoice queue",
    "the hiking trip",
]
ZH_TOPICS = ["副本延迟", "发布窗口", "妈妈的花园", "发票队列", "爬山的路线"]


def long_turn(opening: str, ending: str, zh: bool, size: int = 2000) -> str:
    """About `size` characters of sentences that differ (not merged as duplicates)."""
    sentences = []
    for i in range(size // 30):
        if zh:
            sentences.append(f"第{i}次我们谈到{ZH_TOPICS[i % 5]}，结论是{'先等等' if i % 2 else '马上改'}。")
        else:
            sentences.append(f"Point {i} was {EN_TOPICS[i % 5]}, and we {'waited' if i % 2 else 'acted'}. ")
    middle = "".join(sentences)[: size - len(opening) - len(ending)]
    return opening + middle + ending


async def test_a_long_turns_neighbours_give_it_their_nearest_words(
    settings: Settings, embedder: Embedder
) -> None:
    redis = redis_of(settings)
    store = ChromaLongTermStore(
        chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
    )
    writer = WritePipeline(store, embedder, redis, LtmVersions(redis))
    first = long_turn("Quokkas opened the meeting notes. ", " The last word was about Zanzibar.", zh=False)
    second = long_turn("鸭嘴兽是第二段的开头。", "第二段最后说的是珠穆朗玛峰。", zh=True)
    third = long_turn("Narwhals open the third turn. ", " The third turn ends with Timbuktu.", zh=False)
    try:
        await writer.write(
            "ctx-long",
            "s1",
            [
                Message("user", first, id="t1", name="Mia"),
                Message("assistant", second, id="t2"),
                Message("user", third, id="t3", name="Mia"),
            ],
        )
        stored = await store.get("ctx-long")
        by_turn = {t: [m for m in stored if m.source_message_ids == (t,)] for t in ("t1", "t2", "t3")}
        assert all(by_turn.values()), {t: len(v) for t, v in by_turn.items()}  # each turn kept
        bound = 3 * (WritePolicy().context_chars + len("Mia: ")) + 2
        assert all(len(m.context) <= bound for m in stored)
        for m in by_turn["t2"]:  # the Chinese turn: the end of the one before, the opening of the one after
            assert "Zanzibar" in m.context
            assert "Quokkas" not in m.context
            assert "Narwhals" in m.context
            assert "Timbuktu" not in m.context
        for m in by_turn["t3"]:  # the two before it, each by its end
            assert "珠穆朗玛峰" in m.context
            assert "鸭嘴兽" not in m.context
            assert "Zanzibar" in m.context
        for m in by_turn["t1"]:
            assert "鸭嘴兽" in m.context
            assert "珠穆朗玛峰" not in m.context
    finally:
        await store.delete_user("ctx-long")
        await redis.aclose()


async def test_short_messages_are_kept_whole_as_context(settings: Settings, embedder: Embedder) -> None:
    redis = redis_of(settings)
    store = ChromaLongTermStore(
        chroma_client_factory(settings), shards=2, collection_prefix=settings.chroma_collection_prefix
    )
    writer = WritePipeline(store, embedder, redis, LtmVersions(redis))
    question = "Which city should I visit in spring, somewhere with good food and not too crowded?"
    answer = "我推荐你去杭州看看，西湖边的春天很美，人也不会太多。"
    try:
        await writer.write(
            "ctx-short",
            "s1",
            [
                Message("user", question, id="q"),
                Message("assistant", answer, id="a"),
                Message("user", "I have been to Hangzhou twice already and loved the tea fields.", id="r"),
            ],
        )
        [reply] = [m for m in await store.get("ctx-short") if m.source_message_ids == ("r",)]
        assert reply.context == f"{question} {answer}"
    finally:
        await store.delete_user("ctx-short")
        await redis.aclose()
