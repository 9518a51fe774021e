"""A fake OpenAI-compatible upstream behind httpx.MockTransport: records every request it gets.

Besides plain answers it lists models (`GET /models`, when `models` is set) and calls tools: with
`tool_calls` set, a request that offers `tools` and does not end with a tool result is answered with
those calls (`finish_reason: "tool_calls"`), streamed as OpenAI does (the first delta of a call names it,
the next ones carry pieces of its arguments). A stream asked with `stream_options.include_usage` ends
with a usage chunk (no choices)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx

from bench.fake_llm import completion, tool_call_events

TRANSLATE = ("Translate the question below", "把下面这个问题翻译成英文")


class FakeUpstream:
    def __init__(self, reply: str = "好的，我记住了。OK, noted.", mode: str = "ok") -> None:
        self.reply = reply
        self.mode = mode  # ok | down | error500 | timeout | break_stream (fails after the first chunk)
        self.requests: list[dict[str, Any]] = []
        self.stream_delay = 0.0
        # awaited once a stream's first chunk is out: lets a test break something mid-stream
        self.after_first_chunk: Callable[[], Awaitable[None]] | None = None
        # query translation (memory/chat/query_translator.py): question -> the reply to a request for it
        self.translations: dict[str, str] = {}
        self.models: list[str] | None = None  # GET /models lists these; None: 404 (a server without it)
        self.model_list_reads = 0
        # answered to a request offering `tools` whose last message is not a tool result
        self.tool_calls: list[dict[str, Any]] | None = None
        self.usage = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}

    @property
    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    def chat_requests(self) -> list[dict[str, Any]]:
        """Requests for chat turns (not the background summary refinements)."""
        return [
            r
            for r in self.requests
            if "previous summary:" not in r["messages"][-1]["content"]
            and not r["messages"][0]["content"].startswith(
                ("Compress each memory", "把下面每条记忆", "Each pair below", "下面每一对", *TRANSLATE)
            )
        ]

    def translation_requests(self) -> list[str]:
        """The questions query translation asked about."""
        return [
            r["messages"][-1]["content"]
            for r in self.requests
            if r["messages"][0]["content"].startswith(TRANSLATE)
        ]

    def judge_requests(self) -> list[dict[str, Any]]:
        """Requests of the writer's supersession judge."""
        return [
            r
            for r in self.requests
            if r["messages"][0]["content"].startswith(("Each pair below", "下面每一对"))
        ]

    def system_prompts(self) -> list[str]:
        return [
            r["messages"][0]["content"] for r in self.chat_requests() if r["messages"][0]["role"] == "system"
        ]

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and request.url.path.endswith("/models"):
            return self._model_list(request)
        body = json.loads(request.content)
        self.requests.append(body)
        if self.mode == "down":
            raise httpx.ConnectError("connection refused", request=request)
        if self.mode == "timeout":
            raise httpx.ReadTimeout("read timed out", request=request)
        if self.mode == "error500":
            return httpx.Response(500, json={"error": {"message": "boom"}})
        reply = self.reply
        if body["messages"][0]["content"].startswith(TRANSLATE):
            reply = self.translations.get(body["messages"][-1]["content"], reply)
        calls = self._calls_for(body)
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        if body.get("stream"):
            content = tool_call_events(body["model"], calls) if calls else self._sse(body["model"])
            return httpx.Response(
                200,
                headers={"content-type": "text/event-stream"},
                content=self._with_usage(content, body["model"]) if include_usage else content,
            )
        answer = completion(reply, body["model"], completion_id="up-1", created=1, usage=self.usage)
        if calls:
            answer["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": calls}
            answer["choices"][0]["finish_reason"] = "tool_calls"
        # ASCII-escaped like the SSE chunks, so a reply may hold what a real server could send (a lone
        # surrogate escape too: httpx's own encoder would refuse it)
        return httpx.Response(
            200, headers={"content-type": "application/json"}, content=json.dumps(answer).encode()
        )

    def _model_list(self, request: httpx.Request) -> httpx.Response:
        self.model_list_reads += 1
        if self.mode == "down":
            raise httpx.ConnectError("connection refused", request=request)
        if self.models is None:
            return httpx.Response(404, json={"error": {"message": "not found"}})
        data = [{"id": m, "object": "model", "created": 1700000000, "owned_by": "fake"} for m in self.models]
        return httpx.Response(200, json={"object": "list", "data": data})

    def _calls_for(self, body: dict[str, Any]) -> list[dict[str, Any]] | None:
        if self.tool_calls is None or not body.get("tools") or body["messages"][-1]["role"] == "tool":
            return None
        return self.tool_calls

    async def _with_usage(self, events: AsyncIterator[bytes], model: str) -> AsyncIterator[bytes]:
        async for event in events:
            if event == b"data: [DONE]\n\n":
                yield f"data: {json.dumps({'choices': [], 'model': model, 'usage': self.usage})}\n\n".encode()
            yield event

    async def _sse(self, model: str) -> AsyncIterator[bytes]:
        for i, word in enumerate(self.reply.split(" ")):
            if i == 1:
                if self.after_first_chunk is not None:
                    await self.after_first_chunk()
                if self.mode == "break_stream":
                    raise httpx.ReadError("connection reset mid-stream")
            if self.stream_delay:
                await asyncio.sleep(self.stream_delay)
            chunk = {
                "choices": [{"index": 0, "delta": {"content": word + " "}, "finish_reason": None}],
                "model": model,
            }
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"
