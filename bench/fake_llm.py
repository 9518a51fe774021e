"""An OpenAI-compatible upstream for benchmarks and fault drills, as a real HTTP server.

    python -m bench.fake_llm --port 9100 --first-token-ms 300 --tokens-per-second 40

Its replies are real conversational turns (the second speaker's lines of the Chinese set in
`bench/data/zh_conversation.json`, and of the LoCoMo dev slice when `../shared/data` has it), so a writer
that stores replies embeds text of a real model's length and language, not a canned "OK". Latency is a
first-token delay plus a token rate (a token here is a whitespace word or one CJK character), for plain
and streamed (`"stream": true`) completions alike.

It also behaves as a model front ends and agent frameworks meet (tests/clients/test_frontends.py):
- `--replies recall`: a chat turn is answered with the long-term memories mnemo put in its prompt
  ("I recall: ..." / "我记得：..."), so any client shows in its own reply whether recall worked;
- tools: a request offering `tools` whose last message is not a tool result is answered with a call of
  the tool `tool_choice` names (else the first), its required arguments filled from the JSON schema
  (strings with the user's last message); a request ending with tool results is answered with them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import time
import zlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

ROOT = Path(__file__).resolve().parents[1]
ZH_SET = ROOT / "bench" / "data" / "zh_conversation.json"
LOCOMO_SET = ROOT.parent / "shared" / "data" / "locomo_dev.json"
_TOKEN_RE = re.compile(r"[\u4e00-\u9fff]|[^\s\u4e00-\u9fff]+\s*")

log = logging.getLogger("bench.fake_llm")


def assistant_turns(*paths: Path) -> list[str]:
    """The second speaker's lines of every conversation in the given LoCoMo-format files that exist."""
    replies: list[str] = []
    for path in paths:
        if not path.exists():
            continue
        for sample in json.loads(path.read_text()):
            conv = sample["conversation"]
            second = conv["speaker_b"]
            for key, turns in conv.items():
                if key.startswith("session_") and isinstance(turns, list):
                    replies += [t["text"] for t in turns if t.get("speaker") == second and t.get("text")]
    if not replies:
        raise FileNotFoundError(f"no conversation turns found in {[str(p) for p in paths]}")
    return replies


@dataclass(frozen=True)
class Pace:
    first_token_seconds: float = 0.0
    tokens_per_second: float = 0.0  # 0 = all at once

    def gap(self) -> float:
        return 1.0 / self.tokens_per_second if self.tokens_per_second > 0 else 0.0


def tokens_of(text: str) -> list[str]:
    return _TOKEN_RE.findall(text) or [text]


def completion(
    reply: str,
    model: str,
    *,
    completion_id: str = "fake",
    created: int = 0,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    """An OpenAI chat completion answering `reply`: the body every fake upstream here returns (this
    server, the tests' in-process one, `bench/locomo.py`'s translation oracle)."""
    body: dict[str, Any] = {
        "id": completion_id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}
        ],
    }
    if usage is not None:
        body["usage"] = usage
    return body


MEMORY_LABELS = ("[long-term memories]", "[长期记忆]")


def recalled_lines(messages: list[dict[str, Any]]) -> list[str]:
    """The lines of the long-term memory block mnemo put in the system prompt (memory/chat/context.py
    LABELS): from the label to the next blank line or `[label]`."""
    lines: list[str] = []
    for m in messages:
        if m.get("role") != "system" or not isinstance(m.get("content"), str):
            continue
        inside = False
        for line in m["content"].splitlines():
            if line.strip() in MEMORY_LABELS:
                inside = True
            elif inside and (not line.strip() or line.startswith("[")):
                inside = False
            elif inside:
                lines.append(line.strip())
    return lines


def recall_reply(messages: list[dict[str, Any]]) -> str | None:
    """'I recall: ...' in the language of the last user message, or None for a request without mnemo's
    memory block (a summary, judge or translation request)."""
    if not any(
        isinstance(m.get("content"), str) and any(label in m["content"] for label in MEMORY_LABELS)
        for m in messages
    ):
        return None
    users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    zh = bool(users) and bool(re.search(r"[\u4e00-\u9fff]", users[-1]["content"]))
    lines = recalled_lines(messages)
    if zh:
        return "我记得：" + "；".join(lines) if lines else "我不记得。"
    return "I recall: " + "; ".join(lines) if lines else "I don't remember."


def _argument(schema: dict[str, Any], text: str) -> Any:
    kind = schema.get("type")
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    if kind == "integer":
        return 1
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return text


def tool_calls_for(body: dict[str, Any]) -> list[dict[str, Any]] | None:
    """A call of the offered tool `tool_choice` names (else the first), or None when no tool is offered,
    `tool_choice` is "none", or the conversation ends with a tool result (the model answers it)."""
    tools = body.get("tools") or []
    messages = body.get("messages") or []
    choice = body.get("tool_choice")
    if not tools or choice == "none" or (messages and messages[-1].get("role") == "tool"):
        return None
    named = choice.get("function", {}).get("name") if isinstance(choice, dict) else None
    tool = next((t for t in tools if t.get("function", {}).get("name") == named), tools[0])
    function = tool.get("function", {})
    params = function.get("parameters") or {}
    users = [m for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)]
    text = users[-1]["content"][:80] if users else ""
    props: dict[str, Any] = params.get("properties") or {}
    arguments = {key: _argument(props.get(key, {}), text) for key in params.get("required") or props}
    name = str(function.get("name", ""))
    return [
        {
            "id": f"call_{zlib.crc32(f'{name}:{text}'.encode()):08x}",
            "type": "function",
            "function": {
                "name": name,
                "arguments": json.dumps(arguments, ensure_ascii=False),
            },
        }
    ]


def tool_results_reply(messages: list[dict[str, Any]]) -> str | None:
    """The reply to a conversation ending with tool results: the results, quoted."""
    results: list[str] = []
    for m in reversed(messages):
        if m.get("role") != "tool":
            break
        results.insert(0, str(m.get("content")))
    return "Tool result: " + " | ".join(results) if results else None


def chunk_event(
    model: str, delta: dict[str, Any], finish: str | None = None, completion_id: str = "fake"
) -> bytes:
    chunk = {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    return f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()


async def tool_call_events(model: str, calls: list[dict[str, Any]]) -> AsyncIterator[bytes]:
    """Tool calls streamed as OpenAI streams them: the first delta of a call names it, the next ones
    carry pieces of its arguments; the stream ends with `finish_reason: "tool_calls"`."""
    yield chunk_event(model, {"role": "assistant", "content": None})
    for i, call in enumerate(calls):
        head = {"index": i, "id": call["id"], "type": "function"}
        yield chunk_event(
            model, {"tool_calls": [{**head, "function": {"name": call["function"]["name"], "arguments": ""}}]}
        )
        arguments = call["function"]["arguments"]
        for start in range(0, len(arguments), 8):
            yield chunk_event(
                model, {"tool_calls": [{"index": i, "function": {"arguments": arguments[start : start + 8]}}]}
            )
    yield chunk_event(model, {}, "tool_calls")
    yield b"data: [DONE]\n\n"


def create_app(pace: Pace, replies: list[str], *, recall: bool = False) -> Starlette:
    counter = {"n": 0}

    def next_reply(body: dict[str, Any]) -> str:
        counter["n"] += 1
        messages = body.get("messages") or []
        answer = tool_results_reply(messages) or (recall_reply(messages) if recall else None)
        return answer if answer is not None else replies[(counter["n"] - 1) % len(replies)]

    async def completions(request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        model = str(body.get("model", "fake"))
        created = int(time.time())
        calls = tool_calls_for(body)
        if calls:
            if body.get("stream"):
                return StreamingResponse(tool_call_events(model, calls), media_type="text/event-stream")
            answer = completion("", model, completion_id=f"fake-{counter['n']}", created=created)
            answer["choices"][0]["message"] = {"role": "assistant", "content": None, "tool_calls": calls}
            answer["choices"][0]["finish_reason"] = "tool_calls"
            return JSONResponse(answer)
        reply = next_reply(body)
        if not body.get("stream"):
            await asyncio.sleep(pace.first_token_seconds + pace.gap() * len(tokens_of(reply)))
            return JSONResponse(
                completion(
                    reply,
                    model,
                    completion_id=f"fake-{counter['n']}",
                    created=created,
                    usage={"prompt_tokens": 0, "completion_tokens": len(tokens_of(reply)), "total_tokens": 0},
                )
            )

        async def events() -> AsyncIterator[bytes]:
            await asyncio.sleep(pace.first_token_seconds)
            for token in tokens_of(reply):
                chunk = {
                    "id": f"fake-{counter['n']}",
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "choices": [{"index": 0, "delta": {"content": token}, "finish_reason": None}],
                }
                yield f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n".encode()
                if pace.gap():
                    await asyncio.sleep(pace.gap())
            done = {
                "id": f"fake-{counter['n']}",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            yield f"data: {json.dumps(done)}\n\ndata: [DONE]\n\n".encode()

        return StreamingResponse(events(), media_type="text/event-stream")

    async def models(_: Request) -> Response:
        data = [{"id": "fake", "object": "model", "created": 1700000000, "owned_by": "bench"}]
        return JSONResponse({"object": "list", "data": data})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/v1/models", models, methods=["GET"]),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fake_llm", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=9100)
    parser.add_argument("--first-token-ms", type=float, default=0.0)
    parser.add_argument("--tokens-per-second", type=float, default=0.0, help="0 = the whole reply at once")
    parser.add_argument(
        "--replies",
        choices=("turns", "recall"),
        default="turns",
        help="turns: real conversational turns; recall: a chat turn answered with the memories it recalled",
    )
    args = parser.parse_args(argv)
    import uvicorn

    pace = Pace(args.first_token_ms / 1000.0, args.tokens_per_second)
    uvicorn.run(
        create_app(pace, assistant_turns(ZH_SET, LOCOMO_SET), recall=args.replies == "recall"),
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
