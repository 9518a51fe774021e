"""What the conversation needs from a language model, in our own types (no HTTP here)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory.models import ScoredMemory

ToolCall = dict[str, Any]  # `{"id", "type": "function", "function": {"name", "arguments"}}`, as OpenAI's


@dataclass(frozen=True, slots=True)
class PromptMessage:
    role: str  # system | user | assistant | tool
    content: str
    name: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()  # an assistant message's calls
    tool_call_id: str | None = None  # the call a tool message answers


@dataclass(frozen=True, slots=True)
class GenerationParams:
    model: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: Sequence[str] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # what the call is for, in the model-use ledger: chat | summary | judge | translation | compression
    purpose: str = "chat"


@dataclass(frozen=True, slots=True)
class Completion:
    text: str
    model: str
    finish_reason: str = "stop"
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a streamed tool call (`delta.tool_calls` of one chunk), relayed unchanged."""

    calls: tuple[ToolCall, ...]


@dataclass(frozen=True, slots=True)
class StreamEnd:
    """The last item of a stream when the upstream said how it ended or what it counted."""

    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


StreamItem = str | ToolCallDelta | StreamEnd
"""What `ChatModel.stream` yields: text deltas, tool-call pieces, and at most one StreamEnd, last."""


def merge_tool_deltas(deltas: Sequence[ToolCallDelta]) -> tuple[ToolCall, ...]:
    """The calls a stream's tool-call pieces make up: by `index`, the first piece naming the call (id,
    name), the next ones adding to its arguments."""
    calls: dict[int, ToolCall] = {}
    for delta in deltas:
        for piece in delta.calls:
            index = piece.get("index", 0)
            index = index if isinstance(index, int) else 0
            call = calls.setdefault(
                index, {"id": "", "type": "function", "function": {"name": "", "arguments": ""}}
            )
            if piece.get("id"):
                call["id"] = str(piece["id"])
            function = piece.get("function") or {}
            if isinstance(function, dict):
                call["function"]["name"] += str(function.get("name") or "")
                call["function"]["arguments"] += str(function.get("arguments") or "")
    return tuple(calls[i] for i in sorted(calls))


def coherent_tool_history(messages: Sequence[PromptMessage]) -> list[PromptMessage]:
    """`messages` as an upstream accepts them: a tool result whose call no earlier assistant message
    made (its call was trimmed from the buffer) is dropped, and so are the calls of an assistant
    message that no tool result follows (a client that never ran them); an assistant message left
    with neither text nor calls is dropped too."""
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    out: list[PromptMessage] = []
    called: set[str] = set()
    for m in messages:
        if m.role == "tool":
            if m.tool_call_id in called:
                out.append(m)
            continue
        if m.tool_calls:
            if all(c.get("id") in answered for c in m.tool_calls):
                called.update(str(c.get("id")) for c in m.tool_calls)
            else:
                m = PromptMessage(m.role, m.content, m.name)
                if not m.content.strip():
                    continue
        out.append(m)
    return out


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
    ) -> AsyncIterator[StreamItem]:
        """Text deltas and tool-call pieces, then maybe a StreamEnd. Raises `UpstreamFailed` before the
        first item when the call cannot start."""
        ...


def estimate_tokens(text: str) -> int:
    """Rough count when the upstream reports none: one per CJK character, one per ~4 other chars."""
    cjk = sum(1 for ch in text if "\u3400" <= ch <= "\u9fff")
    return cjk + max(0, len(text) - cjk + 3) // 4
