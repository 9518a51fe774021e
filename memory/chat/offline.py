"""The offline responder: what answers when no LLM is configured (model name `mnemo-offline`).

No generation: a short deterministic reply in the user's language that says no language model is
configured and lists what mnemo recalled for this turn. It keeps `make run` useful without an LLM and
gives load tests a zero-cost upstream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from memory.chat.context import compress, humanize_age
from memory.chat.llm import Completion, GenerationParams, PromptMessage, TurnFacts, estimate_tokens

OFFLINE_MODEL = "mnemo-offline"


def offline_reply(facts: TurnFacts) -> str:
    zh = facts.language == "zh"
    head = (
        "（未配置语言模型，这是 mnemo 的离线回复。）"
        if zh
        else "(No language model is configured; this is mnemo's offline reply.)"
    )
    if facts.recall_degraded:
        body = (
            "长期记忆暂时不可用，本轮没有检索。"
            if zh
            else "Long-term memory is temporarily unavailable; nothing was recalled."
        )
    elif not facts.recalled:
        body = "本轮没有检索到相关的记忆。" if zh else "Nothing relevant was recalled for this message."
    else:
        lines = [
            f"- {humanize_age(facts.now - h.memory.created_at, facts.language)}：{compress(h.memory.content, 80)}"
            if zh
            else f"- {humanize_age(facts.now - h.memory.created_at, facts.language)}: {compress(h.memory.content, 80)}"
            for h in facts.recalled
        ]
        body = ("我记得这些相关内容：\n" if zh else "Here is what I recalled:\n") + "\n".join(lines)
    return f"{head}\n{body}"


class OfflineResponder:
    name = OFFLINE_MODEL
    remember_replies = False  # canned text listing recalled memories: not conversation to remember

    async def complete(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> Completion:
        text = offline_reply(facts)
        return Completion(
            text=text,
            model=OFFLINE_MODEL,
            prompt_tokens=sum(estimate_tokens(m.content) for m in prompt),
            completion_tokens=estimate_tokens(text),
        )

    async def stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> AsyncIterator[str]:
        for line in offline_reply(facts).splitlines(keepends=True):
            yield line
