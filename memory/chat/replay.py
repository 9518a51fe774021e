"""A committed chat turn as its Idempotency-Key record keeps it (memory/session/idempotency.py) and as a
retry with the same key gets it again: the turn's debug view, its result, the record and the replay."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memory.chat.llm import Completion, ToolCallDelta, estimate_tokens

if TYPE_CHECKING:
    from memory.chat.conversation import PreparedTurn


@dataclass(frozen=True, slots=True)
class TurnDebug:
    turn_id: str
    redis_summary_used: bool
    chroma_retrieved_count: int
    context_length: int
    estimated_prompt_tokens: int
    memory_ids: list[str]
    mode: str
    recall_degraded: str | None
    memory_tokens: int = 0  # estimated tokens of the memory lines in the prompt (0 in older records)


@dataclass(frozen=True, slots=True)
class TurnResult:
    completion: Completion  # token counts filled in (the upstream's, else estimates)
    debug: TurnDebug
    created: float = 0.0  # when the turn started (the completion's `created`)
    replayed: bool = False  # answered from the record of an earlier request with the same key
    prepared: PreparedTurn | None = None  # what was recalled and the prompt sent (None when replayed)

    @property
    def completion_id(self) -> str:
        return f"chatcmpl-{self.debug.turn_id}"


def turn_record(completion: Completion, debug: TurnDebug, created: float) -> dict[str, Any]:
    return {
        "completion": dataclasses.asdict(completion),
        "debug": dataclasses.asdict(debug),
        "created": created,
    }


def replayed_result(payload: dict[str, Any]) -> TurnResult:
    return TurnResult(
        completion=Completion(**payload["completion"]),
        debug=TurnDebug(**payload["debug"]),
        created=float(payload["created"]),
        replayed=True,
    )


class ReplayedStream:
    """The recorded answer of a turn, streamed again for a retry with the same Idempotency-Key."""

    replayed = True
    completed = True
    prepared: PreparedTurn | None = None  # a replay recalls nothing and sends no prompt

    def __init__(self, result: TurnResult) -> None:
        self._result = result
        self.model_name = result.completion.model
        self.text = result.completion.text
        self.tool_calls = tuple(result.completion.tool_calls)
        self.turn_id = result.debug.turn_id
        self.created = result.created
        self.finish_reason = "tool_calls" if self.tool_calls else "stop"

    @property
    def prompt_tokens(self) -> int:
        return self._result.completion.prompt_tokens or 0

    @property
    def completion_tokens(self) -> int:
        tokens = self._result.completion.completion_tokens
        return tokens if tokens is not None else estimate_tokens(self.text)

    def debug(self) -> TurnDebug:
        return self._result.debug

    async def deltas(self) -> AsyncIterator[str | ToolCallDelta]:
        if self.text:
            yield self.text
        if self.tool_calls:
            yield ToolCallDelta(tuple({"index": i, **call} for i, call in enumerate(self.tool_calls)))
