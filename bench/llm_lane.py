"""The real-model lane's figures (issue 41): mnemo's model steps through a local Gemma 3 270M
(llama-cpp-python's server, harness/llm_server.py) on fresh Redis and Chroma, and the same model asked
directly with the same prompts in the same run.

Per purpose (chat, summary, judge, translation, compression): the upstream calls mnemo made, their
failures (a call that errored, timed out or answered empty, and an answer the step could not use and
replaced with its offline behaviour: `mnemo_llm_fallbacks_total`), and the calls' p50/p95 latency as
the upstream answered them. For chat, the turn's p50/p95 through mnemo and the same prompt's straight to
the model (alternating), and mnemo's overhead at p95 (through mnemo minus direct).

    .venv/bin/python bench/llm_lane.py [--turns 24] [--off translation --off compression ...]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx
from prometheus_client import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.http.auth import TokenCodec  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, app_on, bench_stores, machine, percentile  # noqa: E402
from harness.llm_server import MODEL_ALIAS, start_llm_server  # noqa: E402
from harness.outbox import drain  # noqa: E402
from memory.chat.query_translator import PROMPTS as TRANSLATION_PROMPTS  # noqa: E402
from memory.text.language import detect_language  # noqa: E402

SHORT = 48  # max_tokens of a chat answer, through mnemo and direct alike
FACTS = [  # 12 in English and 12 in Chinese, alternating: `--turns N` takes the first N
    ("My dog is named Biscuit.", "What is my dog called?"),
    ("我的车是一辆红色的沃尔沃。", "我开的是什么车？"),
    # over 150 characters: recalled, they are compressed for the prompt (the compression step)
    (
        "My grandmother's apple cake recipe, which I bake every autumn for the whole family, needs six "
        "Bramley apples, two teaspoons of cinnamon, brown sugar, a pinch of nutmeg and exactly forty "
        "minutes at 180 degrees in the old blue tin.",
        "How long do I bake my grandmother's apple cake?",
    ),
    (
        "我奶奶传下来的红烧肉做法是这样的：五花肉先冷水下锅焯水，切成三厘米见方的块，再用冰糖小火炒出糖色，"
        "加生抽、老抽、料酒、葱段、姜片、八角和桂皮，最后加开水没过肉，盖上锅盖用小火慢慢炖一个半小时，"
        "大火收汁就可以出锅了。每年过年我都会照着做一大锅，全家人都说比饭店里的还好吃，"
        "孩子们每次都要多添一碗米饭，连平时不爱吃肉的姑姑也会夹好几块。",
        "奶奶的红烧肉要炖多久？",
    ),
    ("I work as a nurse at the city hospital.", "What is my job?"),
    ("我对花生过敏。", "我对什么过敏？"),
    ("I play the cello on weekends.", "Which instrument do I play?"),
    ("我住在杭州，离西湖不远。", "我住在哪个城市？"),
    ("My sister Clara lives in Lisbon.", "Where does my sister live?"),
    ("我女儿每周六上午去学游泳。", "我女儿周六上午做什么？"),
    ("My favourite food is spicy ramen.", "What is my favourite food?"),
    ("我每天早上六点起床跑步。", "我每天早上几点起床？"),
    ("I am learning Japanese for a trip to Kyoto in April.", "Which language am I learning?"),
    ("我的生日是十月十二号。", "我的生日是哪天？"),
    ("My son's teacher is called Mr Patel.", "What is my son's teacher called?"),
    ("我养了两只猫，一只叫米粒，一只叫豆包。", "我的猫叫什么名字？"),
    ("My wife and I got married in 2015 in Dublin.", "Where did I get married?"),
    ("我在一家银行做会计，已经五年了。", "我是做什么工作的？"),
    ("I support Arsenal and go to two matches a season.", "Which football club do I support?"),
    ("我最喜欢的电影是《大话西游》。", "我最喜欢哪部电影？"),
    ("My bike is a green Brompton I ride to work.", "What bike do I ride?"),
    ("我下个月要去成都出差。", "我下个月去哪里出差？"),
    ("I grow tomatoes and basil on my balcony.", "What do I grow on my balcony?"),
    ("我妈妈每周三来我家吃饭。", "我妈妈哪天来吃饭？"),
]
# (older statement, a later one the rules do not read: the writer asks the judge)
CHANGES = [
    ("I spend every weekend sailing on the lake.", "These days I spend every weekend climbing instead."),
    ("我每个周末都去湖上划船。", "最近周末我都改去爬山了，不再划船。"),
]
# a question in the other language than what is stored: the search asks for a translation
CROSS = ["What car do I drive?", "What am I allergic to?", "我的狗叫什么？", "我是做什么工作的？"]
PURPOSES = ("chat", "summary", "judge", "translation", "compression")
# `--off STEP`: the setting that turns a model step off (the chat itself always asks the model)
STEPS = {
    "summary": "llm_summary",
    "judge": "llm_supersession_judge",
    "translation": "query_translation",
    "compression": "llm_compress_memories",
}
OUTCOMES = ("ok", "empty", "error", "timeout", "cancelled")
FAILED = ("empty", "error", "timeout", "cancelled")
REASONS = ("failed", "unparseable", "unusable", "lost_facts")


def purpose_of(body: dict[str, Any]) -> str:
    """Which of mnemo's steps sent this request, read from its prompt."""
    messages = body.get("messages") or [{}]
    first, last = str(messages[0].get("content") or ""), str(messages[-1].get("content") or "")
    if first.startswith(("Each pair below", "下面每一对")):
        return "judge"
    if first in TRANSLATION_PROMPTS.values():
        return "translation"
    if "previous summary:" in last:
        return "summary"
    if first.startswith(("Compress each memory", "把下面每条记忆压缩")):
        return "compression"
    return "chat"


class TimedTransport(httpx.AsyncBaseTransport):
    """The real network transport, timing each chat-completions call by purpose and knowing how many
    are in flight (the summary refinement runs after a turn has answered)."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.seconds: dict[str, list[float]] = defaultdict(list)
        self.in_flight = 0

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        started = time.perf_counter()
        self.in_flight += 1
        try:
            response = await self._inner.handle_async_request(request)
            if request.url.path.endswith("/chat/completions"):
                await response.aread()
                self.seconds[purpose_of(json.loads(request.content or b"{}"))].append(
                    time.perf_counter() - started
                )
            return response
        finally:
            self.in_flight -= 1

    async def aclose(self) -> None:
        await self._inner.aclose()


def counted() -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for p in PURPOSES:
        row = {
            o: REGISTRY.get_sample_value("mnemo_llm_calls_total", {"purpose": p, "outcome": o}) or 0.0
            for o in OUTCOMES
        }
        for r in REASONS:
            row[f"fallback_{r}"] = (
                REGISTRY.get_sample_value("mnemo_llm_fallbacks_total", {"purpose": p, "reason": r}) or 0.0
            )
        out[p] = row
    return out


def ms(values: list[float], q: float) -> float | None:
    return round(percentile(values, q) * 1000, 1) if values else None


async def settle(transport: TimedTransport, quiet: float = 10.0, timeout: float = 300.0) -> None:
    """Wait until mnemo's background model calls (summary refinements, the writer's judge) stop: none in
    flight and none finished for `quiet` s."""
    deadline, last, quiet_since = time.monotonic() + timeout, -1.0, time.monotonic()
    while time.monotonic() < deadline:
        now = sum(sum(v for k, v in row.items() if k in OUTCOMES) for row in counted().values())
        if now != last or transport.in_flight:
            last, quiet_since = now, time.monotonic()
        elif time.monotonic() - quiet_since > quiet:
            return
        await asyncio.sleep(0.5)


async def run(turns: int, off: frozenset[str] = frozenset()) -> dict[str, Any]:
    codec = TokenCodec(SECRET)
    headers = {"Authorization": f"Bearer {codec.mint('alice')}"}
    load_before = os.getloadavg()[0]
    before = counted()
    transport = TimedTransport()
    through: list[float] = []
    direct: list[float] = []
    upstream: list[float] = []  # mnemo's own upstream call in each question's turn
    workdir = Path(tempfile.mkdtemp(prefix="mnemo-llm-lane-"))
    llm = start_llm_server(workdir / "llama")
    try:
        with bench_stores() as (redis_url, chroma_url):
            config = Settings(
                _env_file=None, redis_url=redis_url, chroma_url=chroma_url, auth_jwt_secret=SECRET
            )
            llm_settings = {
                "llm_base_url": llm.url,
                "llm_model": MODEL_ALIAS,
                "llm_timeout_seconds": 180.0,
                "llm_max_attempts": 1,
                "query_translation": True,
                "query_translation_timeout_seconds": 30.0,
                **{STEPS[step]: False for step in off},
            }
            async with (
                app_on(redis_url, chroma_url, transport, **llm_settings) as client,
                httpx.AsyncClient(base_url=llm.url, timeout=300) as model,
            ):

                async def say(text: str, session: str) -> dict[str, Any]:
                    started = time.perf_counter()
                    resp = await client.post(
                        "/v1/chat/completions",
                        json={
                            "messages": [{"role": "user", "content": text}],
                            "session_id": session,
                            "max_tokens": SHORT,
                            "temperature": 0,
                            "debug": True,
                        },
                        headers=headers,
                    )
                    resp.raise_for_status()
                    through.append(time.perf_counter() - started)
                    body: dict[str, Any] = resp.json()
                    return body

                for n, (old, new) in enumerate(CHANGES):
                    resp = await client.post(
                        "/v1/memory/alice/messages",
                        json={
                            "session_id": "s0",
                            "messages": [
                                {
                                    "role": "user",
                                    "content": old,
                                    "id": f"c{n}",
                                    "timestamp": time.time() - 90 * 86400,
                                }
                            ],
                        },
                        headers=headers,
                    )
                    resp.raise_for_status()
                    await say(new, "C")
                for fact, _ in FACTS[:turns]:
                    await say(fact, "A")
                await drain(config)

                async def forget_prefix() -> None:
                    """One tiny unrelated call: the server reuses the previous prompt's cached prefix,
                    which would favour whichever of the two asks second."""
                    await model.post(
                        "chat/completions",
                        json={
                            "model": MODEL_ALIAS,
                            "messages": [{"role": "user", "content": "ok"}],
                            "max_tokens": 1,
                        },
                    )

                for _, question in FACTS[:turns]:
                    await settle(transport, quiet=2.0)  # no summary refinement queued ahead of the turn
                    await forget_prefix()
                    body = await say(question, "B")
                    upstream.append(transport.seconds["chat"][-1])
                    await settle(transport, quiet=2.0)  # nor ahead of the direct call: the turn's own
                    await forget_prefix()
                    started = time.perf_counter()  # the same prompt, straight to the model
                    resp = await model.post(
                        "chat/completions",
                        json={
                            "model": MODEL_ALIAS,
                            "messages": body["debug"]["prompt"],
                            "max_tokens": SHORT,
                            "temperature": 0,
                        },
                    )
                    resp.raise_for_status()
                    direct.append(time.perf_counter() - started)
                for question in CROSS:
                    (
                        await client.post(
                            "/v1/memory/alice/search", json={"query": question}, headers=headers
                        )
                    ).raise_for_status()
                await drain(config)
                await settle(transport)
    finally:
        llm.stop()
    after = counted()
    purposes: dict[str, Any] = {}
    for p in PURPOSES:
        delta = {k: after[p][k] - before[p][k] for k in after[p]}
        calls = sum(delta[o] for o in OUTCOMES)
        if not calls:
            continue
        failed = {o: int(delta[o]) for o in FAILED if delta[o]}
        unused = {r: int(delta[f"fallback_{r}"]) for r in REASONS if delta[f"fallback_{r}"]}
        purposes[p] = {
            "calls": int(calls),
            # calls that gave the step nothing it used: failed (outcome not ok), or answered something
            # it could not use (a fallback other than "failed", which counts a failed call again)
            "failures": sum(failed.values()) + sum(n for r, n in unused.items() if r != "failed"),
            "failed_calls": failed,
            "fell_back": unused,
            "upstream_p50_ms": ms(transport.seconds[p], 50),
            "upstream_p95_ms": ms(transport.seconds[p], 95),
        }
    asked = through[-len(direct) :] if direct else []
    p95_through, p95_direct = ms(asked, 95), ms(direct, 95)
    in_turn = [t - u for t, u in zip(asked, upstream, strict=True)]
    return {
        "machine": machine(),
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        # other jobs on the machine (load average over 1 min) when the run started and ended
        "load_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "model": f"{MODEL_ALIAS} (llama-cpp-python server, 2 threads)",
        "steps_off": sorted(off),
        "purposes": purposes,
        "chat_turn": {
            "through_mnemo_p50_ms": ms(asked, 50),
            "through_mnemo_p95_ms": p95_through,
            "direct_p50_ms": ms(direct, 50),
            "direct_p95_ms": p95_direct,
            "overhead_p95_ms": round(p95_through - p95_direct, 1) if p95_through and p95_direct else None,
            # the turn minus mnemo's own upstream call in it: recall, prompt, bookkeeping
            "in_turn_overhead_p50_ms": ms(in_turn, 50),
            "in_turn_overhead_p95_ms": ms(in_turn, 95),
            "questions": len(direct),
            "questions_by_language": {
                lang: sum(1 for _, q in FACTS[:turns] if detect_language(q) == lang) for lang in ("en", "zh")
            },
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=len(FACTS), help="questions asked (and facts told)")
    parser.add_argument(
        "--off",
        action="append",
        choices=sorted(STEPS),
        default=[],
        help="a model step turned off (repeatable)",
    )
    args = parser.parse_args()
    result = asyncio.run(run(max(1, min(args.turns, len(FACTS))), frozenset(args.off)))
    json.dump(result, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
