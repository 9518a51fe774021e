"""An OpenAI-compatible upstream for benchmarks and fault drills, as a real HTTP server.

    python -m bench.fake_llm --port 9100 --first-token-ms 300 --tokens-per-second 40

Its replies are real conversational turns (the second speaker's lines of the Chinese set in
`bench/data/zh_conversation.json`, and of the LoCoMo dev slice when `../shared/data` has it), so a writer
that stores replies embeds text of a real model's length and language, not a canned "OK". Latency is a
first-token delay plus a token rate (a token here is a whitespace word or one CJK character), for plain
and streamed (`"stream": true`) completions alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import time
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


def create_app(pace: Pace, replies: list[str]) -> Starlette:
    counter = {"n": 0}

    def next_reply() -> str:
        counter["n"] += 1
        return replies[(counter["n"] - 1) % len(replies)]

    async def completions(request: Request) -> Response:
        body: dict[str, Any] = await request.json()
        model = str(body.get("model", "fake"))
        reply = next_reply()
        created = int(time.time())
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
        return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model"}]})

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
    args = parser.parse_args(argv)
    import uvicorn

    pace = Pace(args.first_token_ms / 1000.0, args.tokens_per_second)
    uvicorn.run(
        create_app(pace, assistant_turns(ZH_SET, LOCOMO_SET)),
        host=args.host,
        port=args.port,
        log_level="warning",
        access_log=False,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
