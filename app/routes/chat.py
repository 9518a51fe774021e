"""POST /v1/chat/completions: OpenAI-compatible, with memory. Thin: map to ChatInput and back."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Header, Response
from sse_starlette import EventSourceResponse

from app.http.auth import ensure_can_act_for
from app.http.body import StrictJSONRoute
from app.http.chat_schemas import (
    ChatCompletionRequest,
    ChatCompletionResponse,
    ChatMessageIn,
    Choice,
    ChoiceMessage,
    TurnDebugOut,
    Usage,
    chunk,
    turn_trace,
)
from app.http.deps import AuditDep, ConversationDep, LLMDep, PrincipalDep
from app.http.errors import OpenAIErrorResponses
from app.http.idempotency import REPLAYED_HEADER, IdempotencyHeader, idempotency_key
from app.http.ids import Id
from memory.chat.conversation import ChatInput, PreparedTurn, TurnStream
from memory.chat.llm import GenerationParams, PromptMessage, estimate_tokens
from memory.chat.replay import ReplayedStream, TurnDebug
from memory.errors import REDIS_UNAVAILABLE, SessionLockLost, StoreUnavailable, UpstreamFailed
from memory.governance.usage import billed_user
from memory.session.idempotency import IdempotencyKey
from monitoring import metrics

router = APIRouter(tags=["chat"], route_class=StrictJSONRoute, responses=OpenAIErrorResponses)
log = logging.getLogger(__name__)
DEFAULT_SESSION = "default"
_PLACEHOLDER_MODELS = {"", "mnemo", "default", "mnemo-offline"}
_STORE_DOWN: tuple[type[Exception], ...] = (*REDIS_UNAVAILABLE, StoreUnavailable)


def _prompt_message(m: ChatMessageIn) -> PromptMessage:
    calls = tuple(c.model_dump(mode="json") for c in m.tool_calls or ())
    return PromptMessage(m.role, m.text, m.name, calls, m.tool_call_id)


def _to_input(
    body: ChatCompletionRequest, user_id: str, session_id: str, idempotency: IdempotencyKey | None
) -> ChatInput:
    last_user = max(i for i, m in enumerate(body.messages) if m.role == "user")
    history = [
        _prompt_message(m)
        for m in body.messages[:last_user]
        if m.role in {"user", "assistant", "tool"} and (m.text.strip() or m.tool_calls or m.role == "tool")
    ]
    # the assistant's tool calls and the tool results after the newest user message: a tool loop
    tool_turn = [
        _prompt_message(m)
        for m in body.messages[last_user + 1 :]
        if m.role == "tool" or (m.role == "assistant" and (m.tool_calls or m.text.strip()))
    ]
    model = body.model if body.model and body.model not in _PLACEHOLDER_MODELS else None
    extra: dict[str, Any] = body.upstream_fields()
    return ChatInput(
        user_id=user_id,
        session_id=session_id,
        message=body.messages[last_user].text,
        name=body.messages[last_user].name,
        client_system=[m.text for m in body.messages if m.role in {"system", "developer"} and m.text.strip()],
        client_history=history,
        params=GenerationParams(
            model=model,
            temperature=body.temperature,
            top_p=body.top_p,
            max_tokens=body.max_completion_tokens or body.max_tokens,
            stop=body.stop_list(),
            extra=extra,
        ),
        idempotency=idempotency,
        zone=body.time_zone,
        tool_turn=tool_turn,
    )


def _debug_out(
    debug: TurnDebug,
    total_tokens: int,
    session_id: str,
    *,
    trace: bool = False,
    prepared: PreparedTurn | None = None,
) -> TurnDebugOut:
    """With `trace` (the request asked `debug: true`), what was recalled and the prompt, from the
    turn's preparation (`prepared`; None for a replay: both empty); without, both null."""
    return TurnDebugOut(
        **(turn_trace(prepared) if trace else {}),
        redis_summary_used=debug.redis_summary_used,
        chroma_retrieved_count=debug.chroma_retrieved_count,
        context_length=debug.context_length,
        total_tokens=total_tokens,
        memory_ids=debug.memory_ids,
        memory_tokens=debug.memory_tokens,
        mode=debug.mode,
        recall_degraded=debug.recall_degraded,
        session_id=session_id,
    )


@router.post(
    "/v1/chat/completions",
    response_model=ChatCompletionResponse,
    responses={
        200: {
            "description": 'the chat.completion; with "stream": true, server-sent events instead: one '
            "`data:` line per chat.completion.chunk, the last with `debug`, then `data: [DONE]`",
            "content": {"text/event-stream": {}},
        }
    },
)
async def chat_completions(
    body: ChatCompletionRequest,
    principal: PrincipalDep,
    audit: AuditDep,
    conversation: ConversationDep,
    llm: LLMDep,
    response: Response,
    x_session_id: Annotated[Id | None, Header()] = None,
    idempotency_key_header: IdempotencyHeader = None,
) -> Any:
    """One chat turn that remembers: recalls, answers through the upstream LLM, updates memory. With an
    `Idempotency-Key`, a retry of a turn that was committed gets the recorded answer (header
    `Idempotent-Replayed: true`) instead of a second turn; the same key with another body is 422."""
    user_id = body.user_id or principal.user_id
    ensure_can_act_for(principal, user_id)
    billed_user.set(user_id)  # the turn's model calls (and its summary's) count to this user
    session_id = body.session_id or x_session_id or DEFAULT_SESSION
    # an admin chatting as a user reads (recalls) and writes their memories: recorded before the turn
    await audit.record_access("chat", user_id, 1, {"session_id": session_id})
    idempotency = idempotency_key(
        idempotency_key_header, "chat", user_id, session_id, body.model_dump(mode="json")
    )
    chat = _to_input(body, user_id, session_id, idempotency)

    if body.stream:
        turn = await conversation.open_stream(chat, llm)
        headers = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
        if turn.replayed:
            headers[REPLAYED_HEADER] = "true"
        return EventSourceResponse(
            _sse(turn, session_id, body.debug, body.include_usage()), ping=15, headers=headers
        )

    result = await conversation.turn(chat, llm)
    if result.replayed:
        response.headers[REPLAYED_HEADER] = "true"
    c = result.completion
    prompt_tokens = c.prompt_tokens if c.prompt_tokens is not None else result.debug.estimated_prompt_tokens
    completion_tokens = c.completion_tokens if c.completion_tokens is not None else estimate_tokens(c.text)
    total = prompt_tokens + completion_tokens
    return ChatCompletionResponse(
        id=result.completion_id,
        created=int(result.created),
        model=c.model,
        choices=[
            Choice(
                message=ChoiceMessage(
                    content=c.text if c.text or not c.tool_calls else None,
                    tool_calls=list(c.tool_calls) or None,
                ),
                finish_reason="tool_calls" if c.tool_calls and c.finish_reason == "stop" else c.finish_reason,
            )
        ],
        usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, total_tokens=total),
        response=c.text,
        debug=_debug_out(result.debug, total, session_id, trace=body.debug, prepared=result.prepared),
    )


def _stream_error(exc: Exception) -> dict[str, Any]:
    """The in-band error event of a stream that failed after it started, with the code the same
    failure gets as an HTTP answer (docs/api.md, Errors)."""
    if isinstance(exc, UpstreamFailed):
        code = "upstream_timeout" if exc.timeout else "upstream_error"
        log.warning("upstream failed mid-stream", extra={"reason": exc.reason})
        message = exc.reason
    elif isinstance(exc, _STORE_DOWN):  # the answer streamed; its commit failed, or its outcome is unknown
        store = exc.store if isinstance(exc, StoreUnavailable) else "redis"
        metrics.STORE_UNAVAILABLE.labels(store).inc()
        log.warning(
            "turn not committed: store unavailable at the end of a stream",
            extra={"store": store, "reason": f"{type(exc).__name__}: {exc}"},
        )
        code = f"{store}_unavailable"
        message = (
            f"{store} is unavailable; the turn may not be recorded: retry it with the same Idempotency-Key"
        )
    elif isinstance(exc, SessionLockLost):
        code = "session_lock_lost"
        log.warning("turn not saved: its session lock was lost before the commit of a stream")
        message = str(exc)
    else:
        code = "internal_error"
        log.exception("stream failed after it started")
        message = "internal server error; this turn was not saved"
    return {"error": {"message": message, "type": code, "code": code}}


async def _sse(
    turn: TurnStream | ReplayedStream, session_id: str, trace: bool, include_usage: bool = False
) -> AsyncIterator[str]:
    """Chunks (text deltas; tool-call deltas relayed as the upstream sent them), then the final chunk
    (and, with `stream_options.include_usage`, OpenAI's usage chunk with no choices) and `[DONE]`.
    Output has started, so the status line is already
    200: whatever fails from here on (the upstream, the commit, building the final chunk) is reported
    in-band as OpenAI does, and the stream still ends with `[DONE]`. A client that goes away cancels
    the generator (CancelledError is no Exception): nothing more is sent."""
    completion_id, created, model = f"chatcmpl-{turn.turn_id}", int(turn.created), turn.model_name
    yield json.dumps(
        chunk(completion_id, created, model, {"role": "assistant", "content": ""}), ensure_ascii=False
    )
    try:
        async for delta in turn.deltas():
            piece = {"content": delta} if isinstance(delta, str) else {"tool_calls": list(delta.calls)}
            yield json.dumps(chunk(completion_id, created, model, piece), ensure_ascii=False)
        final = _final_chunk(turn, completion_id, created, model, session_id, trace)
    except Exception as exc:
        yield json.dumps(_stream_error(exc), ensure_ascii=False)
        yield "[DONE]"
        return
    yield json.dumps(final, ensure_ascii=False)
    if include_usage:
        usage = {**chunk(completion_id, created, model, {}), "choices": [], "usage": final["usage"]}
        yield json.dumps(usage, ensure_ascii=False)
    yield "[DONE]"


def _final_chunk(
    turn: TurnStream | ReplayedStream,
    completion_id: str,
    created: int,
    model: str,
    session_id: str,
    trace: bool,
) -> dict[str, Any]:
    final = chunk(completion_id, created, model, {}, finish_reason=turn.finish_reason)
    prompt_tokens = turn.prompt_tokens
    final["usage"] = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": turn.completion_tokens,
        "total_tokens": prompt_tokens + turn.completion_tokens,
    }
    final["response"] = turn.text
    total = prompt_tokens + turn.completion_tokens
    final["debug"] = _debug_out(
        turn.debug(), total, session_id, trace=trace, prepared=turn.prepared
    ).model_dump()
    return final
