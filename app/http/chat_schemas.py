"""The OpenAI chat-completions request/response shapes mnemo accepts and returns (plus its extras).

`FIELDS` says what becomes of every field of OpenAI's request: `pass` (sent to the upstream unchanged),
`mnemo` (read by mnemo itself) or `refuse` (a 422 naming it, never silently dropped); docs/api.md's
table is checked against it (tests/unit/test_chat_fields.py). A field OpenAI does not define (a server's
own: `top_k`, `repetition_penalty`, `chat_template_kwargs`) is passed through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from app.http.fields import MAX_CONTENT_CHARS, RequestBody, TimeZoneName, has_visible_text, iso_utc
from app.http.ids import Id
from memory.chat.conversation import PreparedTurn
from memory.governance.usage import PurposeUsage, UserUsage

_NEEDS_USER = (
    "at least one user message; the last one must have visible text (not only spaces or invisible characters)"
)


class ContentPart(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: str
    text: str | None = None


class FunctionCallIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str = Field(min_length=1, max_length=128)
    arguments: str = Field("", max_length=MAX_CONTENT_CHARS)


class ToolCallIn(BaseModel):
    """A call an assistant message made (`tool_calls`), as the model returned it."""

    model_config = ConfigDict(extra="allow")
    id: str = Field(min_length=1, max_length=256)
    type: Literal["function"] = "function"
    function: FunctionCallIn


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPart] | None = None
    name: str | None = Field(None, max_length=128)
    tool_calls: list[ToolCallIn] | None = Field(None, max_length=128)  # an assistant's calls
    tool_call_id: str | None = Field(None, min_length=1, max_length=256)  # the call a tool message answers

    @model_validator(mode="after")
    def _tool_fields(self) -> ChatMessageIn:
        if self.role == "tool" and self.tool_call_id is None:
            raise ValueError("a tool message needs the tool_call_id it answers")
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only an assistant message has tool_calls")
        return self

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


FIELDS: Mapping[str, Literal["pass", "mnemo", "refuse"]] = MappingProxyType(
    {
        "model": "mnemo",  # passed unless a placeholder (`mnemo`, `default`...): then LLM_MODEL
        "messages": "mnemo",
        "stream": "mnemo",
        "stream_options": "mnemo",
        "n": "mnemo",  # 1 only
        "temperature": "pass",
        "top_p": "pass",
        "max_tokens": "pass",
        "max_completion_tokens": "pass",  # sent as max_tokens
        "stop": "pass",
        "presence_penalty": "pass",
        "frequency_penalty": "pass",
        "logit_bias": "pass",
        "seed": "pass",
        "response_format": "pass",
        "user": "pass",
        "safety_identifier": "pass",
        "prompt_cache_key": "pass",
        "service_tier": "pass",
        "store": "pass",
        "metadata": "pass",
        "prediction": "pass",
        "reasoning_effort": "pass",
        "verbosity": "pass",
        "web_search_options": "pass",
        "tools": "pass",
        "tool_choice": "pass",
        "parallel_tool_calls": "pass",
        "logprobs": "refuse",  # true only; false is accepted
        "top_logprobs": "refuse",
        "modalities": "refuse",  # any but ["text"]
        "audio": "refuse",
        "functions": "refuse",
        "function_call": "refuse",
    }
)
"""Every field of OpenAI's chat-completions request and what mnemo does with it (docs/api.md)."""

REFUSED_WHY = {
    "logprobs": "mnemo does not return log probabilities (logprobs: true is refused; 不支持 logprobs)",
    "top_logprobs": "mnemo does not return log probabilities (不支持 top_logprobs)",
    "modalities": 'mnemo answers text only: modalities must be ["text"] (只支持文本输出)',
    "audio": "mnemo answers text only: no audio output (不支持音频输出)",
    "functions": "functions is deprecated: send tools (已弃用，请用 tools)",
    "function_call": "function_call is deprecated: send tool_choice (已弃用，请用 tool_choice)",
}
MNEMO_EXTRAS = frozenset({"user_id", "session_id", "time_zone", "debug"})
NOT_PASSED = (
    frozenset({k for k, v in FIELDS.items() if v != "pass"}) | MNEMO_EXTRAS | {"max_completion_tokens"}
)


class ChatCompletionRequest(RequestBody):
    """OpenAI's request body: each field passed to the upstream, read by mnemo or refused (`FIELDS`);
    fields OpenAI does not define are passed through unchanged."""

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
    n: int | None = Field(None, ge=1, le=1, description="1 only: one answer is one turn of the session")
    user: str | None = Field(None, max_length=256)
    stream_options: dict[str, Any] | None = None
    presence_penalty: float | None = Field(None, ge=-2, le=2)
    frequency_penalty: float | None = Field(None, ge=-2, le=2)
    logit_bias: dict[str, float] | None = Field(None, max_length=1024)
    seed: int | None = None
    response_format: dict[str, Any] | None = None
    safety_identifier: str | None = Field(None, max_length=256)
    prompt_cache_key: str | None = Field(None, max_length=1024)
    service_tier: str | None = Field(None, max_length=64)
    store: bool | None = None
    metadata: dict[str, Any] | None = None  # OpenAI's is 16 string pairs: the upstream decides
    prediction: dict[str, Any] | None = None
    reasoning_effort: str | None = Field(None, max_length=64)
    verbosity: str | None = Field(None, max_length=64)
    web_search_options: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = Field(None, max_length=128)
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    modalities: list[str] | None = None
    audio: dict[str, Any] | None = None
    functions: list[dict[str, Any]] | None = None
    function_call: str | dict[str, Any] | None = None
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

    @model_validator(mode="after")
    def _refused(self) -> ChatCompletionRequest:
        refused = [
            name
            for name in REFUSED_WHY
            if getattr(self, name) is not None
            and not (name == "logprobs" and self.logprobs is False)
            and not (name == "modalities" and self.modalities == ["text"])
        ]
        if refused:
            raise ValueError("; ".join(f"{name}: {REFUSED_WHY[name]}" for name in refused))
        return self

    def upstream_fields(self) -> dict[str, Any]:
        """What goes to the upstream as given: every `pass` field the request set (`null` included)
        and every field OpenAI does not define, minus what mnemo reads itself."""
        given = self.model_dump(mode="json", exclude_unset=True, exclude={"messages"})
        return {k: v for k, v in given.items() if k not in NOT_PASSED and k not in _TYPED_PARAMS}

    def include_usage(self) -> bool:
        return bool((self.stream_options or {}).get("include_usage"))

    def stop_list(self) -> list[str] | None:
        if self.stop is None:
            return None
        return [self.stop] if isinstance(self.stop, str) else self.stop


_TYPED_PARAMS = frozenset({"temperature", "top_p", "max_tokens", "stop"})  # GenerationParams' own fields


class ChoiceMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None
    tool_calls: list[dict[str, Any]] | None = Field(
        None, description="the calls the model made (then `content` may be null)"
    )


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


class PurposeUsageOut(BaseModel):
    calls: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class UsageOut(BaseModel):
    """A user's model use (`GET /v1/usage`): calls and tokens by purpose, and in total."""

    user_id: str
    since: str | None = Field(description="when the first call was counted (ISO 8601 UTC); null: none yet")
    purposes: dict[str, PurposeUsageOut] = Field(
        description="by purpose: chat, summary, judge, translation, compression (those used)"
    )
    total: PurposeUsageOut

    @classmethod
    def of(cls, usage: UserUsage) -> UsageOut:
        def out(p: PurposeUsage) -> PurposeUsageOut:
            return PurposeUsageOut(
                calls=p.calls,
                prompt_tokens=p.prompt_tokens,
                completion_tokens=p.completion_tokens,
                total_tokens=p.prompt_tokens + p.completion_tokens,
            )

        return cls(
            user_id=usage.user_id,
            since=iso_utc(usage.since) if usage.since is not None else None,
            purposes={k: out(v) for k, v in usage.purposes.items()},
            total=out(usage.total),
        )


class ModelOut(BaseModel):
    """One model in OpenAI's shape (`GET /v1/models`)."""

    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str


class ModelListOut(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelOut]
