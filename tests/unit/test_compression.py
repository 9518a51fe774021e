from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from memory.chat.compression import LLMCompressor
from memory.chat.context import assemble_prompt
from memory.chat.llm import Completion, GenerationParams, PromptMessage, TurnFacts
from memory.models import Memory, ScoredMemory


class ScriptedModel:
    """A ChatModel double that answers with a fixed text (or raises)."""

    name = "scripted"
    remember_replies = True

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.prompts: list[Sequence[PromptMessage]] = []

    async def complete(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> Completion:
        self.prompts.append(prompt)
        if isinstance(self.answer, Exception):
            raise self.answer
        return Completion(text=self.answer, model=self.name)

    async def stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> AsyncIterator[str]:
        yield ""


LONG_ZH = "我们上周末去了杭州西湖，" + "风景特别好，" * 40
LONG_EN = "Last weekend we drove to the lake house, " + "and the weather was lovely, " * 20


class TestLLMCompressor:
    async def test_long_memories_are_compressed_by_the_model(self) -> None:
        model = ScriptedModel("1. 上周末去杭州西湖，风景好\n2. Drove to the lake house last weekend")
        out = await LLMCompressor(model).compress(["短的", LONG_ZH, LONG_EN], "zh")
        assert out == ["短的", "上周末去杭州西湖，风景好", "Drove to the lake house last weekend"]
        assert len(model.prompts) == 1
        assert "150" in model.prompts[0][0].content

    async def test_failure_falls_back_to_extractive(self) -> None:
        out = await LLMCompressor(ScriptedModel(RuntimeError("down"))).compress([LONG_EN], "en")
        assert len(out[0]) <= 150
        assert out[0].startswith("Last weekend we drove")

    async def test_nothing_to_do_makes_no_call(self) -> None:
        model = ScriptedModel("unused")
        assert await LLMCompressor(model).compress(["short", "短"], "en") == ["short", "短"]
        assert model.prompts == []


def _hit(text: str) -> ScoredMemory:
    m = Memory(
        id=text[:8],
        user_id="u",
        content=text,
        created_at=0.0,
        session_id="s",
        source="user",
        content_hash="h",
    )
    return ScoredMemory(memory=m, score=1.0, similarity=1.0)


def test_memory_block_respects_the_token_budget() -> None:
    hits = [_hit(f"fact number {i} " + "word " * 25) for i in range(10)]
    prompt = assemble_prompt(
        language="en",
        new_message=PromptMessage("user", "q"),
        now=0.0,
        summary=None,
        recalled=hits,
        buffer=[],
        memory_token_budget=100,
    )
    system = prompt.messages[0].content
    assert "fact number 0" in system
    assert "fact number 9" not in system
