"""What the models cost a long turn's segments (issue 45: an import's CPU is mostly embedding).

    PYTHONPATH=. .venv/bin/python bench/segment_embedding.py --turns 24
    PYTHONPATH=. .venv/bin/python bench/segment_embedding.py --turns 40 --sizes 8 16 32 64 --bf16-slice-tokens 2048

The first `--turns` turns of `bench/make_token_history.py`'s 1M set (~2,000 characters each, zh and en),
cut as the writer cuts them (`memory.text.cleaning.segment`), embedded on one thread by: MiniLM as the
int8 ONNX graph (the default), MiniLM through sentence-transformers in fp32 and with bf16 weights
(`EMBEDDING_BACKEND=torch`, `EMBEDDING_PRECISION`), all cut at `EMBEDDING_MAX_TOKENS` (128), and the
USE v3 bridge. For each: CPU milliseconds a segment in calls of 1, 2 and 8 segments (`--sizes`; a writer's
slices are 1-3 segments in the int8 graph, ~8 in bf16) and the cosine of its vectors to fp32's (MiniLM
only). `--bf16-slice-tokens`: the tokens a bf16 call embeds at once (`BF16_SLICE_TOKENS`, 768), to see
whether longer slices would pay (issue 45's import).
CPU time (`time.process_time`), so the host's load moves it less than wall time; best of `--repeat`.
Prints one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
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

from bench.common import machine  # noqa: E402
from bench.make_token_history import load_or_build  # noqa: E402
from memory.embedding import sentence_transformer  # noqa: E402
from memory.embedding.base import Vectors  # noqa: E402
from memory.embedding.multilingual import MultilingualEmbedder  # noqa: E402
from memory.embedding.onnx import OnnxEmbedder  # noqa: E402
from memory.embedding.sentence_transformer import SentenceTransformerEmbedder, native_bf16  # noqa: E402

Embed = Callable[[Sequence[str]], Vectors]


def cpu_ms_per_segment(embed: Embed, segments: list[str], size: int, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        for i in range(0, len(segments), size):
            embed(segments[i : i + size])
        best = min(best, time.process_time() - started)
    return round(1000 * best / len(segments), 2)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=24)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 8], help="segments a call")
    parser.add_argument("--bf16-slice-tokens", type=int, default=0, help="BF16_SLICE_TOKENS (0: as shipped)")
    args = parser.parse_args(argv)
    from memory.text.cleaning import segment

    if args.bf16_slice_tokens:
        sentence_transformer.BF16_SLICE_TOKENS = args.bf16_slice_tokens
    user = load_or_build(1_000_000)
    turns = [t["content"] for s in user["sessions"] for t in s["turns"]][: args.turns]
    segments = [piece for turn in turns for piece in segment(turn)]
    fp32 = SentenceTransformerEmbedder(torch_threads=1, max_tokens=128, precision="fp32")
    models: dict[str, Any] = {
        "minilm_int8_onnx": OnnxEmbedder(threads=1, max_tokens=128),
        "minilm_fp32_torch": fp32,
        "minilm_bf16_torch": SentenceTransformerEmbedder(torch_threads=1, max_tokens=128, precision="bf16"),
        "use_v3_bridge": MultilingualEmbedder(threads=1),
    }
    reference = fp32.embed_sync(segments)
    out: dict[str, Any] = {
        "machine": machine(),
        "native_bf16": native_bf16(),
        "turns": len(turns),
        "segments": len(segments),
        "chars_per_segment": round(sum(map(len, segments)) / len(segments)),
        "bf16_slice_tokens": sentence_transformer.BF16_SLICE_TOKENS,
    }
    for name, model in models.items():
        model.embed_sync(segments[:8])  # warm
        row: dict[str, Any] = {
            f"cpu_ms_per_segment_calls_of_{size}": cpu_ms_per_segment(
                model.embed_sync, segments, size, args.repeat
            )
            for size in args.sizes
        }
        if name.startswith("minilm"):
            cosines = (model.embed_sync(segments) * reference).sum(axis=1)
            row["cosine_to_fp32_mean"] = round(float(np.mean(cosines)), 5)
            row["cosine_to_fp32_min"] = round(float(np.min(cosines)), 5)
        out[name] = row
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
