"""The upstream LLM: one httpx client for any OpenAI-compatible server (Ollama, vLLM, llama.cpp, OpenAI).

Retries (tenacity, exponential backoff with jitter) on connect errors, 429 and 5xx, before any output;
failures become `UpstreamFailed` (timeouts flagged, so the route can answer 504 rather than 502).

Every call is counted in the ledger of model use: Prometheus counters of calls, tokens (the upstream's
`usage`, else estimated) and latency by purpose and outcome, and the tokens of the user the call served
(`billed_user`) in their Redis ledger (memory/governance/usage.py).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import httpx
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from memory.chat.llm import (
    Completion,
    GenerationParams,
    PromptMessage,
    StreamEnd,
    StreamItem,
    ToolCallDelta,
    TurnFacts,
    estimate_tokens,
)
from memory.errors import UpstreamFailed
from memory.governance.usage import UsageLedger, billed_user
from monitoring import metrics

log = logging.getLogger(__name__)
RETRY_STATUS = {429, 500, 502, 503, 504}
_SURROGATE_RE = re.compile("[\ud800-\udfff]")


def well_formed(text: str) -> str:
    """The model's text with lone surrogates (JSON can spell `"\\udfff"`; a pair is already one code
    point once parsed) replaced by U+FFFD: they could not be sent to the client, hashed or stored."""
    return text if text.isascii() else _SURROGATE_RE.sub("\ufffd", text)


class _Retryable(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"upstream answered {status}: {body[:200]}")
        self.status = status


def _observe(purpose: str, outcome: str, seconds: float) -> None:
    """An upstream call in Prometheus: by outcome, and by purpose and outcome."""
    metrics.LLM_DURATION.labels(outcome).observe(seconds)
    metrics.LLM_CALL_DURATION.labels(purpose, outcome).observe(seconds)
    metrics.LLM_CALLS.labels(purpose, outcome).inc()


def _message(m: PromptMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.name:
        out["name"] = m.name
    if m.tool_calls:
        out["tool_calls"] = list(m.tool_calls)
        out["content"] = m.content or None
    if m.tool_call_id is not None:
        out["tool_call_id"] = m.tool_call_id
    return out


def _tool_calls(message: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    calls = message.get("tool_calls")
    return tuple(c for c in calls if isinstance(c, dict)) if isinstance(calls, list) else ()


def _or(counted: object, estimate: int) -> int:
    """The upstream's count when it gave a number, else the estimate."""
    return (
        counted if isinstance(counted, int) and not isinstance(counted, bool) and counted >= 0 else estimate
    )


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, _Retryable | httpx.ConnectError | httpx.ConnectTimeout | httpx.RemoteProtocolError)


class OpenAICompatibleLLM:
    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        model: str,
        max_attempts: int = 3,
        ledger: UsageLedger | None = None,
    ) -> None:
        self._client = client
        self._model = model
        self._max_attempts = max_attempts
        self._ledger = ledger

    @property
    def name(self) -> str:
        return self._model

    @property
    def remember_replies(self) -> bool:
        return True

    def _payload(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, stream: bool
    ) -> dict[str, Any]:
        payload: dict[str, Any] = {
            **params.extra,
            "model": params.model or self._model,
            "messages": [_message(m) for m in prompt],
            "stream": stream,
        }
        if stream:  # the upstream's own token counts for the ledger, where the server gives them
            payload["stream_options"] = {**(payload.get("stream_options") or {}), "include_usage": True}
        for key in ("temperature", "top_p", "max_tokens"):
            value = getattr(params, key)
            if value is not None:
                payload[key] = value
        if params.stop:
            payload["stop"] = list(params.stop)
        return payload

    async def list_models(self) -> list[dict[str, Any]]:
        """The upstream's `GET models` list (`data`), each entry at least `{"id"}`; raises
        `UpstreamFailed` when it cannot be read (unreachable, an error status, not OpenAI's shape)."""
        try:
            resp = await self._client.get("models")
        except httpx.TimeoutException as exc:
            raise UpstreamFailed(f"upstream timed out: {type(exc).__name__}", timeout=True) from exc
        except httpx.HTTPError as exc:
            raise UpstreamFailed(f"upstream unreachable: {type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 400:
            raise UpstreamFailed(f"upstream answered {resp.status_code}", status=resp.status_code)
        try:
            data = resp.json()["data"]
            models = [m for m in data if isinstance(m, dict) and isinstance(m.get("id"), str) and m["id"]]
        except (ValueError, KeyError, TypeError) as exc:
            raise UpstreamFailed("upstream answered with an unreadable model list") from exc
        return models

    def _retrying(self) -> AsyncRetrying:
        return AsyncRetrying(
            retry=retry_if_exception(_is_retryable),
            stop=stop_after_attempt(self._max_attempts),
            wait=wait_exponential_jitter(multiplier=0.2, max=2.0),
            reraise=True,
        )

    async def _count(
        self, purpose: str, outcome: str, seconds: float, tokens_in: int = 0, tokens_out: int = 0
    ) -> None:
        """The call in the ledger: Prometheus always, the user's Redis ledger for a call that answered."""
        _observe(purpose, outcome, seconds)
        metrics.LLM_TOKENS.labels(purpose, "in").inc(tokens_in)
        metrics.LLM_TOKENS.labels(purpose, "out").inc(tokens_out)
        user = billed_user.get()
        if self._ledger is not None and user is not None and outcome in {"ok", "empty"}:
            await self._ledger.add(user, purpose, tokens_in, tokens_out)

    async def complete(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> Completion:
        started = time.perf_counter()
        try:
            completion = await self._complete(prompt, params)
        except UpstreamFailed as exc:
            await self._count(
                params.purpose, "timeout" if exc.timeout else "error", time.perf_counter() - started
            )
            raise
        except asyncio.CancelledError:  # the caller stopped waiting (a step's own time limit): not billed
            _observe(params.purpose, "cancelled", time.perf_counter() - started)
            raise
        except BaseException:
            await self._count(params.purpose, "error", time.perf_counter() - started)
            raise
        await self._count(
            params.purpose,
            "ok" if completion.text.strip() or completion.tool_calls else "empty",
            time.perf_counter() - started,
            _or(completion.prompt_tokens, sum(estimate_tokens(m.content) for m in prompt)),
            _or(completion.completion_tokens, estimate_tokens(completion.text)),
        )
        return completion

    async def _complete(self, prompt: Sequence[PromptMessage], params: GenerationParams) -> Completion:
        payload = self._payload(prompt, params, stream=False)
        try:
            async for attempt in self._retrying():
                with attempt:
                    resp = await self._client.post("chat/completions", json=payload)
                    if resp.status_code in RETRY_STATUS:
                        raise _Retryable(resp.status_code, resp.text)
        except httpx.TimeoutException as exc:
            raise UpstreamFailed(f"upstream timed out: {type(exc).__name__}", timeout=True) from exc
        except _Retryable as exc:
            raise UpstreamFailed(str(exc), status=exc.status) from exc
        except httpx.HTTPError as exc:
            raise UpstreamFailed(f"upstream unreachable: {type(exc).__name__}: {exc}") from exc
        if resp.status_code >= 400:
            raise UpstreamFailed(
                f"upstream answered {resp.status_code}: {resp.text[:200]}", status=resp.status_code
            )
        try:
            data = resp.json()
            choice = data["choices"][0]
            text = well_formed(choice["message"].get("content") or "")
            calls = _tool_calls(choice["message"])
            usage = data.get("usage") or {}
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise UpstreamFailed("upstream answered with an unreadable completion") from exc
        return Completion(
            text=text,
            model=str(data.get("model") or payload["model"]),
            finish_reason=str(choice.get("finish_reason") or "stop"),
            prompt_tokens=usage.get("prompt_tokens"),
            completion_tokens=usage.get("completion_tokens"),
            tool_calls=calls,
        )

    async def stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams, facts: TurnFacts
    ) -> AsyncIterator[StreamItem]:
        started = time.perf_counter()
        text: list[str] = []
        end, calls = StreamEnd(), False
        try:
            async for item in self._stream(prompt, params):
                if isinstance(item, StreamEnd):
                    end = item
                elif isinstance(item, str):
                    text.append(item)
                else:
                    calls = True
                yield item
        except (GeneratorExit, asyncio.CancelledError):
            # the client went away, or the caller stopped waiting: counted, not billed (no await here)
            _observe(params.purpose, "cancelled", time.perf_counter() - started)
            raise
        except UpstreamFailed as exc:
            await self._count(
                params.purpose, "timeout" if exc.timeout else "error", time.perf_counter() - started
            )
            raise
        answer = "".join(text)
        await self._count(
            params.purpose,
            "ok" if answer.strip() or calls else "empty",
            time.perf_counter() - started,
            _or(end.prompt_tokens, sum(estimate_tokens(m.content) for m in prompt)),
            _or(end.completion_tokens, estimate_tokens(answer)),
        )

    async def _stream(
        self, prompt: Sequence[PromptMessage], params: GenerationParams
    ) -> AsyncIterator[StreamItem]:
        payload = self._payload(prompt, params, stream=True)
        response: httpx.Response | None = None
        try:
            async for attempt in self._retrying():
                with attempt:
                    request = self._client.build_request("POST", "chat/completions", json=payload)
                    response = await self._client.send(request, stream=True)
                    if response.status_code in RETRY_STATUS:
                        body = (await response.aread()).decode(errors="replace")
                        await response.aclose()
                        raise _Retryable(response.status_code, body)
        except httpx.TimeoutException as exc:
            raise UpstreamFailed(f"upstream timed out: {type(exc).__name__}", timeout=True) from exc
        except _Retryable as exc:
            raise UpstreamFailed(str(exc), status=exc.status) from exc
        except httpx.HTTPError as exc:
            raise UpstreamFailed(f"upstream unreachable: {type(exc).__name__}: {exc}") from exc
        assert response is not None
        try:
            if response.status_code >= 400:
                body = (await response.aread()).decode(errors="replace")
                raise UpstreamFailed(
                    f"upstream answered {response.status_code}: {body[:200]}", status=response.status_code
                )
            end = StreamEnd()
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    break
                try:
                    event = json.loads(data)
                    usage = event.get("usage") or {}
                    if usage:
                        end = StreamEnd(
                            end.finish_reason, usage.get("prompt_tokens"), usage.get("completion_tokens")
                        )
                    if not event.get("choices"):
                        continue
                    choice = event["choices"][0]
                    delta = choice.get("delta") or {}
                    if choice.get("finish_reason"):
                        end = StreamEnd(
                            str(choice["finish_reason"]), end.prompt_tokens, end.completion_tokens
                        )
                    text, calls = delta.get("content"), delta.get("tool_calls")
                except (ValueError, KeyError, IndexError, TypeError, AttributeError):
                    continue
                if isinstance(calls, list) and calls:
                    yield ToolCallDelta(tuple(c for c in calls if isinstance(c, dict)))
                if text:
                    yield well_formed(text)
            if end != StreamEnd():
                yield end
        except httpx.TimeoutException as exc:
            raise UpstreamFailed("upstream stream timed out", timeout=True) from exc
        except httpx.HTTPError as exc:
            raise UpstreamFailed(f"upstream stream broke: {type(exc).__name__}") from exc
        finally:
            await response.aclose()
