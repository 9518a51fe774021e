"""One large user's in-process index (issue 45): RSS, snapshot size and load time, search time at N.

    PYTHONPATH=. .venv/bin/python bench/large_user_index.py                       # 2,000 / 20,000 / 70,000
    PYTHONPATH=. .venv/bin/python bench/large_user_index.py --memories 70000 100000

`--context`: each memory also keeps its neighbours' words as the write path does (the end of the two
turns before it and the opening of the one after, 500 characters each), which the keyword index holds.

No stores, no model: the memories are the 400-character segments (`memory.text.cleaning.segment`, as
the write path cuts long turns) of `bench/make_token_history.py`'s 10M-token user, in order, the first
N of them (past the set's ~46,000 segments its turns again under new ids), with random unit MiniLM (384) and bridge (512) vectors (a search's cost does not depend on
what the vectors say). Each N runs in a fresh child process that reports, for one user:

- `rss_kib_per_memory`: RSS growth from building the index (keyword postings + float16 vectors) and
  the bridge rows, after a collection, per memory;
- `vectors_kib_per_memory`: of which the MiniLM and bridge vectors as a worker holds them;
- `snapshot_mb`, `encode_s`, `decode_s`: the Redis snapshot a first search loads (memory/recall/snapshot.py);
- `keyword_ms` (p50 over the set's questions; `keyword_loaded_ms` and its p95: the same searches of the
  index loaded from the snapshot, as a searching worker holds it), `dense_ms` (`BM25Index.nearest`, cosine over every
  vector, the in-process dense channel, top 50, p50), `bridge_ms` (`BridgeRows.cosine`, the bridge's
  pass over every row, p50; a search asks it twice, the second time answered from the first since the
  vectors are int8): the parts of a warm search that grow with N.

Before/after in one run: the same script runs on a copy of an older commit (`git archive`), whose
float16 rows it builds when memory/recall/dense_rows.py is not there.

Times are CPU time of the process (`time.process_time`), not wall time: the 2 cores are shared with
other jobs (load 10-20 while this was written), which stretches wall time several-fold but not the CPU
a step needs. The children run with `OPENBLAS_NUM_THREADS=1`, as a worker on a busy 2-core host should:
measured at load ~20, OpenBLAS' own threads made one 2,000 x 384 product take 104 ms of wall time
against 0.3 ms on one thread.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.make_token_history import load_or_build  # noqa: E402

try:  # int8 rows with a scale each (memory/recall/dense_rows.py); float16 before it
    from memory.recall.dense_rows import QuantisedRows

    def _bridge_matrix(m: np.ndarray) -> Any:
        return QuantisedRows.of(m)
except ImportError:  # pragma: no cover - an older commit's copy, measured beside this one

    def _bridge_matrix(m: np.ndarray) -> Any:
        return m.astype(np.float16)


from memory.models import Memory  # noqa: E402
from memory.recall.crosslingual import BridgeRows  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402
from memory.recall.snapshot import decode, encode  # noqa: E402
from memory.text.cleaning import segment  # noqa: E402
from memory.text.language import Lang, detect_language  # noqa: E402
from memory.text.tokens import tokenize  # noqa: E402
from memory.text.window import ending, opening  # noqa: E402

CONTEXT_CHARS = 500


def machine() -> str:  # bench.common's, without importing the app
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return np.asarray(m / np.linalg.norm(m, axis=1, keepdims=True), dtype=np.float32)


def _context(turns: list[dict[str, Any]], at: int) -> str:
    """What the write path keeps of a turn's neighbours (memory/write/policy.py, `context_chars`): the
    end of each of the two messages before it and the opening of the one after, 500 characters each."""
    before = [ending(t["content"], CONTEXT_CHARS) for t in turns[max(0, at - 2) : at]]
    after = [opening(t["content"], CONTEXT_CHARS) for t in turns[at + 1 : at + 2]]
    return "\n".join([*before, *after])


def memories(n: int, context: bool = False) -> tuple[list[Memory], list[str]]:
    user = load_or_build(10_000_000)
    out: list[Memory] = []
    for lap in range(1 + n // 40_000):  # past the set's ~46,000 segments: its turns again, new ids
        for s in user["sessions"]:
            for at, t in enumerate(s["turns"]):
                around = _context(s["turns"], at) if context else ""
                for k, part in enumerate(segment(t["content"])):
                    out.append(
                        Memory(
                            id=f"{t['id']}-{k}-{lap}",
                            user_id=user["user_id"],
                            content=part,
                            created_at=s["started"],
                            session_id=s["session_id"],
                            source=t["role"],
                            content_hash=f"{len(out):032x}",
                            source_message_ids=(t["id"],),
                            context=around,
                        )
                    )
                    if len(out) == n:
                        return out, [q["question"] for q in user["questions"]]
    raise SystemExit(f"the 10M set has fewer than {n} segments")


def child(n: int, context: bool) -> dict[str, float]:
    mems, questions = memories(n, context)
    gc.collect()
    before = _rss()
    index = BM25Index(mems, _unit(n, 384, 1))
    langs: tuple[Lang, ...] = tuple(detect_language(m.content) for m in mems)
    bridge = BridgeRows(tuple(m.id for m in mems), _bridge_matrix(_unit(n, 512, 2)), langs, frozenset(langs))
    gc.collect()
    rss = (_rss() - before) / n / 1024
    held = index._vectors  # the form this commit holds (int8 codes and scales, or float16)
    assert held is not None
    vector_bytes = held.nbytes + bridge.matrix.nbytes
    t0 = time.process_time()
    payload = encode(1, index, bridge, "bench")
    encode_s = time.process_time() - t0
    t0 = time.process_time()
    loaded = decode(payload, "bench")
    decode_s = time.process_time() - t0
    assert loaded is not None
    keyword: list[float] = []
    keyword_loaded: list[float] = []
    dense: list[float] = []
    bridged: list[float] = []
    query = _unit(len(questions), 384, 3)
    bridge_query = _unit(len(questions), 512, 4)
    for k, q in enumerate(questions * 3):
        t0 = time.process_time()
        index.search(tokenize(q), limit=50)
        keyword.append(time.process_time() - t0)
        t0 = time.process_time()
        loaded.index.search(tokenize(q), limit=50)
        keyword_loaded.append(time.process_time() - t0)
        t0 = time.process_time()
        index.nearest(query[k % len(questions)], limit=50)
        dense.append(time.process_time() - t0)
        t0 = time.process_time()
        bridge.cosine(bridge_query[k % len(questions)])
        bridged.append(time.process_time() - t0)
    return {
        "memories": n,
        "rss_kib_per_memory": round(rss, 2),
        "rss_mib": round(rss * n / 1024, 1),
        "vectors_kib_per_memory": round(vector_bytes / n / 1024, 2),
        "snapshot_mb": round(len(payload) / 1e6, 1),
        "encode_s": round(encode_s, 2),
        "decode_s": round(decode_s, 2),
        "keyword_ms": round(statistics.median(keyword) * 1000, 1),
        "keyword_loaded_ms": round(statistics.median(keyword_loaded) * 1000, 1),
        "keyword_loaded_p95_ms": round(
            sorted(keyword_loaded)[int(0.95 * (len(keyword_loaded) - 1))] * 1000, 1
        ),
        "dense_ms": round(statistics.median(dense) * 1000, 1),
        "bridge_ms": round(statistics.median(bridged) * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, nargs="+", default=[2000, 20_000, 70_000])
    parser.add_argument("--context", action="store_true", help="each memory with its neighbours' words")
    parser.add_argument("--child", type=int, default=0)
    args = parser.parse_args()
    if args.child:
        sys.stdout.write(json.dumps(child(args.child, args.context)) + "\n")
        return
    load_or_build(10_000_000)  # the set cached once, before the children
    rows = []
    for n in args.memories:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(n), *(["--context"] if args.context else [])],
            check=True,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        sys.stdout.write(done.stdout)
    out = ROOT / "bench" / "results" / "large_user_index.json"
    out.write_text(json.dumps({"rows": rows, "machine": machine(), "load": os.getloadavg()}, indent=2))
    sys.stdout.write(machine() + f", load {os.getloadavg()[0]:.1f}\n")


if __name__ == "__main__":
    main()
