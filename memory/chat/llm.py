"""What the conversation needs from a language model, in our own types (no HTTP here)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.models import ScoredMemory


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: str  # system | user | assistant
    content: str
    name: str | None = None


@dataclass(frozen=True, slots=True)
class GenerationParams:
    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: Sequence[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    model: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What mnemo knows about the turn; an offline responder answers from it, a real LLM ignores it."""

    language: str
    recalled: Sequence[ScoredMemory]
    now: float
    recall_degraded: str | None = None


class ChatModel(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def remember_replies(self) -> bool:
        """Whether its replies belong in long-term memory: a model's answers do; the offline
        responder's do not (they only echo what was recalled, and would be recalled as memories)."""
        ...

    async def complete(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> Completion: ...

    def stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> AsyncIterator[str]:
        """Text deltas. Raises `UpstreamFailed` before the first delta when the call cannot start."""
        ...


def estimate_tokens(text: str) -> int:
    """Rough count when the upstream reports none: one per CJK character, one per ~4 other chars."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + max(0, len(text) - cjk + 3) // 4
