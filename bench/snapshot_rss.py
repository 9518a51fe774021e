"""RSS per memory of a worker's keyword index: built from memories, or loaded from an index snapshot.

    PYTHONPATH=. .venv/bin/python bench/snapshot_rss.py                 # 2,000 memories, 5 copies
    PYTHONPATH=. .venv/bin/python bench/snapshot_rss.py --memories 5000

No stores: `--memories` synthetic zh+en facts (`bench/search_latency.py`'s, each with two more as its
context) with random unit MiniLM (384) and bridge (512) vectors. Each mode runs in a fresh child
process that holds `--copies` indexes at once (each over its own memory objects, as separate users
would be) and reports the growth of its RSS after a collection, per memory held: `build` is the index
a worker builds from the store's records (vectors as the store returns them, float32, kept as
int8 codes with a scale per row), `snapshot` the same index decoded from its snapshot (memory/recall/snapshot.py).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.common import machine  # noqa: E402
from bench.search_latency import fact  # noqa: E402
from memory.models import Memory  # noqa: E402
from memory.recall.crosslingual import BridgeRows  # noqa: E402
from memory.recall.dense_rows import QuantisedRows  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402
from memory.recall.snapshot import decode, encode  # noqa: E402
from memory.text.language import Lang, detect_language  # noqa: E402


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _memories(n: int, copy: int) -> list[Memory]:
    rng = random.Random(29)
    return [
        Memory(
            id=f"mem_{copy}_{i:06d}",
            user_id=f"u{copy}",
            content=f"{fact(rng)} ({i})",
            created_at=1.7e9 + i,
            session_id=f"s{i // 100}",
            source="user",
            content_hash=f"{copy}-{i:032x}",
            importance=0.5,
            topic="general",
            source_message_ids=(f"m{i}",),
            tier="fact",
            context=f"{fact(rng)} {fact(rng)}",
        )
        for i in range(n)
    ]


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return np.asarray(m / np.linalg.norm(m, axis=1, keepdims=True), dtype=np.float32)


def _bridge(memories: list[Memory], seed: int) -> BridgeRows:
    langs: tuple[Lang, ...] = tuple(detect_language(m.content) for m in memories)
    matrix = QuantisedRows.of(_unit(len(memories), 512, seed))
    return BridgeRows(tuple(m.id for m in memories), matrix, langs, frozenset(langs))


def child(mode: str, n: int, copies: int, workdir: Path) -> None:
    if mode == "encode":  # the snapshots, written by another process than the one measured
        for c in range(copies):
            memories = _memories(n, c)
            index = BM25Index(memories, _unit(n, 384, c))
            (workdir / f"{c}.snap").write_bytes(encode(1, index, _bridge(memories, c), "bench"))
        return
    gc.collect()
    before = _rss()
    held: list[object] = []
    for c in range(copies):
        if mode == "snapshot":
            # the bytes a GET returns, dropped once decoded as the service drops them: what the index
            # keeps of them (a view would keep all of them) is counted
            payload = (workdir / f"{c}.snap").read_bytes()
            held.append(decode(payload, "bench"))
            del payload
        else:
            memories = _memories(n, c)
            held.append((BM25Index(memories, _unit(n, 384, c)), _bridge(memories, c)))
    gc.collect()
    per = (_rss() - before) / (n * copies)
    sys.stdout.write(f"{mode}: {per / 1024:.2f} KiB per memory held ({copies} x {n} memories)\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--child", choices=["encode", "build", "snapshot"])
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.memories, args.copies, args.workdir)
        return
    with tempfile.TemporaryDirectory(prefix="mnemo-rss-") as workdir:
        for mode in ("encode", "build", "snapshot"):
            command = [sys.executable, __file__, "--child", mode, "--memories", str(args.memories)]
            command += ["--copies", str(args.copies), "--workdir", workdir]
            subprocess.run(command, check=True, cwd=ROOT)
    sys.stdout.write(machine() + "\n")


if __name__ == "__main__":
    main()
