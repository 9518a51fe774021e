"""Embedding cost per chat turn: torch sentence-transformers vs the int8 ONNX model on onnxruntime.

    .venv/bin/python bench/embedding_speed.py
    .venv/bin/python bench/embedding_speed.py --threads 1 2 4 --texts 300

For each backend and intra-op thread count: single-text latency (p50/p95 over short zh+en chat texts),
throughput at batch sizes 1/8/32, and "micro-batching" — 10 requests of one text each, embedded one
after another, as 10 concurrent `await embed()` calls (what the service does today: worker threads
serialised by the embedder's lock), or as one batch of 10. Also the cosine between the two backends'
vectors. Prints a markdown table and writes JSON to bench/results/embedding_speed.json.
Timings on a shared machine are noisy: compare rows from the same run, not across runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np  # noqa: E402

from bench.common import machine, percentile  # noqa: E402
from memory.embedding.base import Vectors  # noqa: E402
from memory.embedding.onnx import OnnxEmbedder  # noqa: E402
from memory.embedding.sentence_transformer import SentenceTransformerEmbedder  # noqa: E402

EN = [
    "hey, can you remind me what I said about {thing}?",
    "I moved to {city} last {month}.",
    "my favourite food is {food} lol",
    "ok thanks, talk tomorrow",
    "I'm allergic to {food}, please remember that",
    "what's the weather like in {city} in {month}?",
    "call {name} about the {thing} on friday",
    "I just started learning the {instrument}!",
]
ZH = [
    "我上个{month_zh}搬到了{city_zh}。",
    "我对{food_zh}过敏，记住哦",
    "帮我记一下，周五给{name_zh}打电话说{thing_zh}的事",
    "好的，谢谢！",
    "我最近在学{instrument_zh}",
    "{city_zh}{month_zh}天气怎么样？",
]
VOCAB = {
    "thing": ["laptop", "insurance", "contract", "sofa", "trip"],
    "city": ["Lisbon", "Osaka", "Denver", "Berlin", "Oslo"],
    "month": ["March", "June", "October", "May"],
    "food": ["peanuts", "ramen", "shellfish", "tacos"],
    "name": ["Maria", "Tom", "Aiko", "Sam"],
    "instrument": ["piano", "violin", "guitar"],
    "month_zh": ["三月", "六月", "十月", "五月"],
    "city_zh": ["杭州", "成都", "大连", "厦门"],
    "food_zh": ["花生", "海鲜", "芒果"],
    "name_zh": ["王芳", "李雷", "张伟"],
    "thing_zh": ["电脑", "保险", "合同"],
    "instrument_zh": ["钢琴", "小提琴", "吉他"],
}
BATCH_SIZES = (1, 8, 32)
CONCURRENT = 10

Embed = Callable[[Sequence[str]], Vectors]


def chat_texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        template = rng.choice(EN + ZH)
        texts.append(template.format(**{k: rng.choice(v) for k, v in VOCAB.items()}))
    return texts


def timed(fn: Callable[..., object], *args: Any) -> float:
    t0 = time.perf_counter()
    fn(*args)
    return (time.perf_counter() - t0) * 1000


def measure(
    embed: Embed, async_embed: Callable[[Sequence[str]], Any], texts: list[str], rounds: int
) -> dict[str, float]:
    for text in texts[:10]:  # warm-up: first calls allocate arenas / pick kernels
        embed([text])
    embed(texts[:32])

    single = [timed(embed, [text]) for text in texts]
    row: dict[str, float] = {
        "single_p50_ms": percentile(single, 50),
        "single_p95_ms": percentile(single, 95),
    }
    for bs in BATCH_SIZES:
        batches = [texts[i : i + bs] for i in range(0, len(texts), bs)]
        total_ms = sum(timed(embed, batch) for batch in batches)
        row[f"throughput_bs{bs}_per_s"] = len(texts) / (total_ms / 1000)

    groups = [texts[(r * CONCURRENT) % len(texts) :][:CONCURRENT] for r in range(rounds)]

    def one_by_one(group: list[str]) -> None:
        for text in group:
            embed([text])

    async def concurrent_rounds() -> list[float]:
        # One event loop for every round, so loop and worker-thread start-up are not timed.
        await asyncio.gather(*(async_embed([t]) for t in groups[0]))
        times = []
        for group in groups:
            t0 = time.perf_counter()
            await asyncio.gather(*(async_embed([t]) for t in group))
            times.append((time.perf_counter() - t0) * 1000)
        return times

    sequential = [timed(one_by_one, group) for group in groups]
    gathered = asyncio.run(concurrent_rounds())
    batched = [timed(embed, group) for group in groups]
    row["x10_sequential_ms"] = statistics.median(sequential)
    row["x10_concurrent_ms"] = statistics.median(gathered)
    row["x10_one_batch_ms"] = statistics.median(batched)
    return row


def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch

    texts = chat_texts(args.texts, args.seed)
    load_avg = os.getloadavg()
    rows: list[dict[str, Any]] = []

    t0 = time.perf_counter()
    torch_model = SentenceTransformerEmbedder()
    torch_load_s = time.perf_counter() - t0
    onnx_load_s = 0.0
    for threads in args.threads:
        torch.set_num_threads(threads)
        rows.append(
            {
                "backend": "torch fp32",
                "threads": threads,
                **measure(torch_model.embed_sync, torch_model.embed, texts, args.rounds),
            }
        )
        t0 = time.perf_counter()
        onnx_model = OnnxEmbedder(threads=threads)
        onnx_load_s = time.perf_counter() - t0
        rows.append(
            {
                "backend": "onnx int8",
                "threads": threads,
                **measure(onnx_model.embed_sync, onnx_model.embed, texts, args.rounds),
            }
        )

    torch.set_num_threads(max(args.threads))
    reference = torch_model.embed_sync(texts)
    cosines = (reference * OnnxEmbedder().embed_sync(texts)).sum(axis=1)
    return {
        "texts": len(texts),
        "rounds_x10": args.rounds,
        "rows": [{k: round(v, 2) if isinstance(v, float) else v for k, v in row.items()} for row in rows],
        "cosine_torch_vs_onnx": {
            "mean": round(float(cosines.mean()), 5),
            "min": round(float(cosines.min()), 5),
            "p5": round(float(np.percentile(cosines, 5)), 5),
        },
        "load_seconds": {"torch": round(torch_load_s, 2), "onnx": round(onnx_load_s, 2)},
        "load_average_at_start": [round(x, 2) for x in load_avg],
        "machine": machine(),
    }


def table(result: dict[str, Any]) -> str:
    head = [
        "backend",
        "threads",
        "1 text p50 ms",
        "1 text p95 ms",
        *(f"texts/s bs={bs}" for bs in BATCH_SIZES),
        "10×1 sequential ms",
        "10×1 concurrent ms",
        "1×10 batch ms",
    ]
    keys = [
        "backend",
        "threads",
        "single_p50_ms",
        "single_p95_ms",
        *(f"throughput_bs{bs}_per_s" for bs in BATCH_SIZES),
        "x10_sequential_ms",
        "x10_concurrent_ms",
        "x10_one_batch_ms",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in result["rows"]:
        lines.append("| " + " | ".join(str(row[k]) for k in keys) + " |")
    cos = result["cosine_torch_vs_onnx"]
    lines += [
        "",
        f"cosine torch vs onnx over {result['texts']} texts: mean {cos['mean']}, p5 {cos['p5']}, min {cos['min']}",
        f"model load: torch {result['load_seconds']['torch']} s, onnx {result['load_seconds']['onnx']} s",
        f"{result['machine']}; load average at start {result['load_average_at_start']}",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--texts", type=int, default=200)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=15, help="repetitions of the 10-request scenario")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    result = run(args)
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "embedding_speed.json").write_text(json.dumps(result, indent=2, ensure_ascii=False))
    sys.stdout.write(table(result))


if __name__ == "__main__":
    main()
