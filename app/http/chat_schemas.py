"""The OpenAI chat-completions request/response shapes mnemo accepts and returns (plus its extras)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.http.ids import Id
from app.http.schemas import MAX_CONTENT_CHARS, RequestBody, TimeZoneName, has_visible_text, iso_utc
from memory.chat.conversation import PreparedTurn

_NEEDS_USER = (
    "at least one user message; the last one must have visible text (not only spaces or invisible characters)"
)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None
    name: str | None = Field(None, max_length=128)

    @field_validator("content")
    @classmethod
    def _length(cls, value: str | list[ContentPart] | None) -> str | list[ContentPart] | None:
        text = value if isinstance(value, str) else "".join(p.text or "" for p in value or [])
        if len(text) > MAX_CONTENT_CHARS:
            raise ValueError(f"content longer than {MAX_CONTENT_CHARS} characters")
        return value

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text or "" for p in self.content or [] if p.type in {"text", "input_text"})


class ChatCompletionRequest(RequestBody):
    """OpenAI's request body; unknown OpenAI parameters are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str | None = Field(None, max_length=200)
    messages: list[ChatMessageIn] = Field(
        min_length=1,
        max_length=500,
        description=_NEEDS_USER,
        json_schema_extra={
            "contains": {"type": "object", "properties": {"role": {"const": "user"}}, "required": ["role"]}
        },
    )
    stream: bool = False
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, ge=0, le=1)
    max_tokens: int | None = Field(None, ge=1, le=1_000_000)
    max_completion_tokens: int | None = Field(None, ge=1, le=1_000_000)
    stop: str | list[str] | None = None
    n: int | None = Field(None, ge=1, le=1)
    user: str | None = Field(None, max_length=256)
    # mnemo's extras (the openai SDK sends them with extra_body=...)
    user_id: Id | None = None
    session_id: Id | None = None
    time_zone: TimeZoneName | None = None
    debug: bool = False

    @model_validator(mode="after")
    def _needs_user_message(self) -> ChatCompletionRequest:
        users = [m for m in self.messages if m.role == "user"]
        if not users or not has_visible_text(users[-1].text):
            raise ValueError(f"messages must hold {_NEEDS_USER}")
        return self

    def stop_list(self) -> list[str] | None:
        if self.stop is None:
            return None
        return [self.stop] if isinstance(self.stop, str) else self.stop


class ChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str


class Choice(BaseModel):
    index: int = 0
    message: ChoiceMessage
    finish_reason: str = "stop"


class Usage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class RecalledOut(BaseModel):
    """A memory recall found for the turn, with its calibrated relevance (as search gives it)."""

    id: str
    content: str
    relevance: float = Field(description="calibrated probability that it is relevant to the message, 0..1")
    score: float
    similarity: float
    tier: str | None
    topic: str | None
    session_id: str
    created_at: str
    in_prompt: bool = Field(description="false when the prompt's memory budget left it out")


class PromptMessageOut(BaseModel):
    role: str
    content: str
    name: str | None = None


class TurnDebugOut(BaseModel):
    redis_summary_used: bool
    chroma_retrieved_count: int
    context_length: int
    total_tokens: int
    memory_ids: list[str] = Field(description="the memories in the prompt, best first")
    memory_tokens: int = Field(0, description="estimated tokens of those memories' lines (and the profile)")
    mode: str
    recall_degraded: str | None
    session_id: str
    recalled: list[RecalledOut] | None = Field(
        None, description="with `debug: true` in the request: each recalled memory and its relevance"
    )
    prompt: list[PromptMessageOut] | None = Field(
        None, description="with `debug: true` in the request: the messages sent to the model"
    )


def turn_trace(prepared: PreparedTurn | None) -> dict[str, Any]:
    """`recalled` and `prompt` of a turn asked with `debug: true` (a replayed turn has neither: empty)."""
    if prepared is None:
        return {"recalled": [], "prompt": []}
    used = prepared.prompt.memories_used
    recalled = [
        RecalledOut(
            id=h.memory.id,
            content=h.memory.content,
            relevance=round(h.relevance, 4),
            score=round(h.score, 4),
            similarity=round(h.similarity, 4),
            tier=h.memory.tier,
            topic=h.memory.topic,
            session_id=h.memory.session_id,
            created_at=iso_utc(h.memory.created_at),
            in_prompt=i < used,
        )
        for i, h in enumerate(prepared.recalled)
    ]
    prompt = [PromptMessageOut(role=m.role, content=m.content, name=m.name) for m in prepared.prompt.messages]
    return {"recalled": recalled, "prompt": prompt}


class ChatCompletionResponse(BaseModel):
    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: Usage
    response: str
    debug: TurnDebugOut | None = None


def chunk(
    completion_id: str, created: int, model: str, delta: dict[str, Any], finish_reason: str | None = None
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
    }


class ModelOut(BaseModel):
    """One model in OpenAI's shape (`GET /v1/models`)."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelListOut(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]
