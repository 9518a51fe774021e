"""What a chat prompt's memory block looks like: the best memories within the budget, shown in the order
they were said, neighbouring turns of one session merged into one line; and an LLM's session summary
checked against what the user said of themselves (issue 40)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from memory.chat.context import assemble_prompt, said_lines
from memory.chat.llm import Completion, GenerationParams, PromptMessage, TurnFacts
from memory.chat.summary import LLMSummarizer, missing_facts
from memory.models import Memory, ScoredMemory

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC).timestamp()
DAY = 86_400.0


def hit(mid: str, content: str, *, age: float, session: str = "s1", score: float = 0.5) -> ScoredMemory:
    memory = Memory(
        id=mid,
        user_id="u",
        content=content,
        created_at=NOW - age,
        session_id=session,
        source="user",
        content_hash=mid,
    )
    return ScoredMemory(memory=memory, score=score, similarity=score)


def block(lines: Sequence[str]) -> str:
    return "\n".join(lines)


@pytest.mark.parametrize(
    ("first", "second", "far"),
    [
        ("我的车是一辆红色的沃尔沃", "它是2019年买的。", "我住在杭州。"),
        ("My car is a red Volvo", "I bought it in 2019.", "I live in Hangzhou."),
    ],
)
def test_neighbouring_turns_merge_and_lines_read_newest_first(first: str, second: str, far: str) -> None:
    lang = "zh" if "车" in first else "en"
    chosen = [
        (hit("b", second, age=3 * DAY - 60, score=0.9), second),  # best first
        (hit("c", far, age=10 * DAY, session="s0", score=0.8), far),
        (hit("a", first, age=3 * DAY, score=0.7), first),
    ]
    lines = said_lines(chosen, now=NOW, language=lang)
    assert len(lines) == 2, lines
    assert far in lines[1]  # ten days ago comes after three days ago
    # one line, the first turn's age, both sentences in the order they were said
    assert lines[0].index(first) < lines[0].index(second), lines[0]
    assert ("3天前" if lang == "zh" else "3 days ago") in lines[0]
    if lang == "zh":
        assert "沃尔沃。 它是" in lines[0]  # a sentence end added where the turn had none
    else:
        assert "Volvo. I bought" in lines[0]


def test_turns_apart_in_time_or_session_stay_apart() -> None:
    chosen = [
        (hit("a", "我养了一只猫。", age=3 * DAY), "我养了一只猫。"),
        (hit("b", "I like jazz.", age=3 * DAY - 3600), "I like jazz."),  # an hour later
        (hit("c", "我喜欢爬山。", age=3 * DAY - 30, session="s2"), "我喜欢爬山。"),  # another session
    ]
    assert len(said_lines(chosen, now=NOW, language="zh")) == 3
    work, pets = hit("w", "I work at a bank.", age=DAY), hit("p", "我家的猫叫团子。", age=DAY - 20)
    work = ScoredMemory(memory=replace(work.memory, topic="work"), score=0.5, similarity=0.5)
    pets = ScoredMemory(memory=replace(pets.memory, topic="pets"), score=0.5, similarity=0.5)
    lines = said_lines([(work, work.memory.content), (pets, pets.memory.content)], now=NOW, language="en")
    assert len(lines) == 2, lines  # one topic a line
    assert "about pets" in lines[0]
    assert "about work" in lines[1]


def test_budget_picks_best_first_then_orders_by_time() -> None:
    recalled = [
        hit(f"m{i}", f"Fact number {i} about my life, said on day {i}.", age=(i + 1) * DAY) for i in range(30)
    ]
    recalled.sort(key=lambda h: h.memory.id)  # an order that is neither time nor id-of-age
    prompt = assemble_prompt(
        language="en",
        new_message=PromptMessage("user", "What did I say?"),
        now=NOW,
        summary=None,
        recalled=recalled,
        buffer=[],
        memory_token_budget=120,
    )
    system = prompt.messages[0].content
    kept = list(recalled[: prompt.memories_used])
    assert 0 < prompt.memories_used < 30
    assert all(h.memory.content in system for h in kept)
    assert not any(h.memory.content in system for h in recalled[prompt.memories_used :])
    newest_first = sorted(kept, key=lambda h: -h.memory.created_at)
    positions = [system.index(h.memory.content) for h in newest_first]
    assert positions == sorted(positions)
    assert prompt.memory_tokens <= 120


class ScriptedModel:
    """An upstream LLM double that answers every summary request with `reply`."""

    def __init__(self, reply: str) -> None:
        self.reply = reply

    @property
    def name(self) -> str:
        return "scripted"

    @property
    def remember_replies(self) -> bool:
        return True

    async def complete(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> Completion:
        return Completion(text=self.reply, model="scripted")

    def stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> AsyncIterator[str]:
        raise NotImplementedError


@pytest.mark.parametrize(
    ("said", "faithful", "lossy"),
    [
        (
            ["我的车是一辆红色的沃尔沃。我在杭州的一家银行上班。"],
            "用户开一辆红色沃尔沃，在杭州一家银行工作。",
            "用户在杭州工作。",
        ),
        (
            ["My car is a red Volvo. I work at a bank in Hangzhou."],
            "User drives a red Volvo and works at a bank in Hangzhou.",
            "User works in Hangzhou.",
        ),
    ],
)
async def test_an_llm_summary_that_drops_a_fact_is_replaced(
    said: list[str], faithful: str, lossy: str
) -> None:
    lang = "zh" if "车" in said[0] else "en"
    kept = await LLMSummarizer(ScriptedModel(faithful)).summarize(None, said, lang, max_chars=200)
    assert kept == faithful
    replaced = await LLMSummarizer(ScriptedModel(lossy)).summarize(None, said, lang, max_chars=200)
    assert replaced != lossy
    assert ("沃尔沃" if lang == "zh" else "Volvo") in replaced
    assert ("银行" if lang == "zh" else "bank") in replaced


def test_missing_facts_reads_words_not_wording() -> None:
    assert missing_facts("用户养了一只叫米粒的猫", ["我养了一只猫叫米粒"]) == []
    assert missing_facts("User has a cat named Miri", ["I have a cat called Miri"]) == []
    assert missing_facts("用户喜欢爬山", ["我对花生过敏"]) == ["我对花生过敏"]
    assert missing_facts("User likes hiking", ["I am allergic to peanuts"]) == ["I am allergic to peanuts"]
