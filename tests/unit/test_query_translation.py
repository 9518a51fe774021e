"""Query translation (issue 28): the fusion of the two hit lists (memory/recall/translation.py) and the
upstream model as translator (memory/chat/query_translator.py), with an in-process model double."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from memory.chat.llm import Completion, GenerationParams, PromptMessage, TurnFacts
from memory.chat.query_translator import PROMPTS, LLMQueryTranslator, TranslationParams, cleaned
from memory.models import Memory, ScoredMemory
from memory.recall.translation import fuse, target_of


def hit(mid: str, relevance: float = 0.5) -> ScoredMemory:
    memory = Memory(
        id=mid, user_id="u", content=mid, created_at=0.0, session_id="s", source="user", content_hash=mid
    )
    return ScoredMemory(memory=memory, score=1.0, similarity=0.5, relevance=relevance)


class Model:
    """A chat model double that answers from a table, counts its calls, and can be slow or fail."""

    def __init__(self, answers: dict[str, str], *, delay: float = 0.0, fail: bool = False) -> None:
        self.answers = answers
        self.delay = delay
        self.fail = fail
        self.prompts: list[Sequence[PromptMessage]] = []

    @property
    def name(self) -> str:
        return "double"

    @property
    def remember_replies(self) -> bool:
        return True

    async def complete(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> Completion:
        self.prompts.append(prompt)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.fail:
            raise RuntimeError("upstream down")
        return Completion(self.answers.get(prompt[-1].content, ""), "double")

    async def stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> AsyncIterator[str]:
        yield (await self.complete(prompt, params, facts)).text


class TestFuse:
    def test_found_by_both_ranks_first(self) -> None:
        fused = fuse([hit("a"), hit("b"), hit("c")], [hit("c"), hit("d")], top_k=10)
        assert [h.memory.id for h in fused] == ["c", "a", "b", "d"]  # b and d tie: asked first

    def test_ties_keep_the_question_as_asked_first(self) -> None:
        fused = fuse([hit("a"), hit("b")], [hit("x"), hit("y")], top_k=3)
        assert [h.memory.id for h in fused] == ["a", "x", "b"]

    def test_a_memory_once_with_its_higher_relevance(self) -> None:
        fused = fuse([hit("a", 0.2)], [hit("a", 0.7)], top_k=5)
        assert len(fused) == 1
        assert fused[0].relevance == 0.7

    def test_nothing_translated_changes_nothing(self) -> None:
        asked = [hit("a"), hit("b"), hit("c")]
        assert fuse(asked, [], top_k=2) == asked[:2]

    def test_target_is_the_other_language(self) -> None:
        assert target_of("zh") == "en"
        assert target_of("en") == "zh"


class TestCleaned:
    @pytest.mark.parametrize(
        ("answer", "question", "target", "expected"),
        [
            (
                "我女儿在学什么乐器？",
                "What instrument is my daughter learning?",
                "zh",
                "我女儿在学什么乐器？",
            ),
            (
                "译文：我女儿在学什么乐器？",
                "What instrument is my daughter learning?",
                "zh",
                "我女儿在学什么乐器？",
            ),
            (
                "“我女儿在学什么乐器？”\n(a literal translation)",
                "What is my daughter learning?",
                "zh",
                "我女儿在学什么乐器？",
            ),
            ("Translation: Where did I go in May?", "我五月去了哪里？", "en", "Where did I go in May?"),
            ("", "我五月去了哪里？", "en", None),
            ("我五月去了哪里？", "我五月去了哪里？", "en", None),  # the question itself
            ("Where did I go?", "Where did I go?", "zh", None),  # the wrong language
            ("你五月去了杭州。" * 20, "Where did I go in May?", "zh", None),  # answered at length
        ],
    )
    def test_only_a_translation_passes(
        self, answer: str, question: str, target: str, expected: str | None
    ) -> None:
        assert cleaned(answer, question, target) == expected  # type: ignore[arg-type]


class TestLLMQueryTranslator:
    async def test_asks_in_the_question_language_and_caches(self) -> None:
        model = Model({"我五月去了哪里？": "Where did I go in May?"})
        translator = LLMQueryTranslator(model)
        assert await translator.translate("我五月去了哪里？", "en") == "Where did I go in May?"
        assert await translator.translate(" 我五月去了哪里？ ", "en") == "Where did I go in May?"
        assert len(model.prompts) == 1
        assert model.prompts[0][0].content == PROMPTS["zh"]

    async def test_english_question_asks_for_chinese(self) -> None:
        model = Model({"What pet do I have?": "我养了什么宠物？"})
        assert await LLMQueryTranslator(model).translate("What pet do I have?", "zh") == "我养了什么宠物？"
        assert model.prompts[0][0].content == PROMPTS["en"]

    async def test_slow_model_gives_none_and_is_asked_again(self) -> None:
        model = Model({"What pet do I have?": "我养了什么宠物？"}, delay=0.5)
        translator = LLMQueryTranslator(model, TranslationParams(timeout_seconds=0.05))
        assert await translator.translate("What pet do I have?", "zh") is None
        model.delay = 0.0
        assert await translator.translate("What pet do I have?", "zh") == "我养了什么宠物？"
        assert len(model.prompts) == 2

    async def test_failing_model_gives_none(self) -> None:
        translator = LLMQueryTranslator(Model({}, fail=True))
        assert await translator.translate("What pet do I have?", "zh") is None

    async def test_long_text_is_not_sent(self) -> None:
        model = Model({})
        translator = LLMQueryTranslator(model, TranslationParams(max_chars=20))
        assert (
            await translator.translate("这是一段很长的聊天内容，不是一个问题，所以不需要翻译它。", "en")
            is None
        )
        assert model.prompts == []

    async def test_cache_is_bounded(self) -> None:
        model = Model({f"question {i}?": f"问题{i}？" for i in range(5)})
        translator = LLMQueryTranslator(model, TranslationParams(cache_size=2))
        for i in range(5):
            await translator.translate(f"question {i}?", "zh")
        await translator.translate("question 0?", "zh")  # evicted: asked again
        assert len(model.prompts) == 6
