"""What one Chroma upsert costs its server, by batch size (why the writer batches a round of users) and by
the size of a record's context (why a memory keeps 500 characters of each neighbour, not whole turns).

    .venv/bin/python bench/chroma_upsert.py                 # batches of 1, 10, 50 records
    .venv/bin/python bench/chroma_upsert.py --context-chars 0 1500 6250 --sizes 6 --calls 100

`--context-chars`: each record's metadata also holds a `context` of that many characters (Chinese and
English prose, as `memory/longterm/records.py` stores a memory's neighbours), one row per size; the
table then says the server's CPU a record. 1,500 is what 500 characters of three neighbours make,
6,250 what whole long turns made before (issue 45); 6 records a call: a long turn's segments.

Starts its own `chroma run`, creates one collection as mnemo does (cosine HNSW, no embedding
function), then upserts random 384-dimension vectors with mnemo-like metadata, N calls per batch size,
and reports per call: wall time, the server process's CPU time (from /proc), and the
client's CPU time (Linux).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import chromadb  # noqa: E402
import numpy as np  # noqa: E402

from bench.common import machine  # noqa: E402
from harness.services import start_chroma  # noqa: E402


def say(text: str) -> None:
    sys.stdout.write(text + "\n")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (fields 14 and 15 of /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


PROSE = (
    "我们周五晚上把数据库迁移到新的集群，回滚窗口是两个小时。"
    "The on-call engineer checks the replica lag before the cut-over and writes it down. "
)


def _metadata(i: int, call: int, context_chars: int) -> dict[str, str | float]:
    meta: dict[str, str | float] = {"user_id": f"u{i % 7}", "created_at": 1.0, "topic": "home"}
    if context_chars:  # distinct per record, as neighbours are
        text = f"{call}-{i} " + PROSE * (1 + context_chars // len(PROSE))
        meta["context"] = text[:context_chars]
    return meta


def main(args: argparse.Namespace) -> None:
    server = start_chroma(Path(tempfile.mkdtemp(prefix="mnemo-bench-")) / "chroma")
    try:
        host, port = server.url.removeprefix("http://").split(":")
        client = chromadb.HttpClient(host=host, port=int(port))
        collection = client.get_or_create_collection(
            "bench-upsert", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
        )
        chroma, me = server.proc.pid, os.getpid()
        rng = np.random.default_rng(7)
        say(
            "| records per upsert | context chars | wall ms/call | server CPU ms/call | server CPU ms/record | client CPU ms/call |"
        )
        say("|---:|---:|---:|---:|---:|---:|")
        for chars in args.context_chars:
            for size in args.sizes:
                started, server0, client0 = time.perf_counter(), cpu_seconds(chroma), cpu_seconds(me)
                for call in range(args.calls):
                    vectors = rng.normal(size=(size, 384)).astype(np.float32)
                    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                    collection.upsert(
                        ids=[f"{chars}-{size}-{call}-{i}" for i in range(size)],
                        embeddings=vectors,
                        documents=["我住在杭州 I live in Hangzhou"] * size,
                        metadatas=[_metadata(i, call, chars) for i in range(size)],
                    )
                per_call = 1000 / args.calls
                server_ms = (cpu_seconds(chroma) - server0) * per_call
                say(
                    f"| {size} | {chars} | {(time.perf_counter() - started) * per_call:.1f} | {server_ms:.1f} "
                    f"| {server_ms / size:.2f} | {(cpu_seconds(me) - client0) * per_call:.1f} |"
                )
        say(f"\n{machine()}")
    finally:
        server.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 10, 50])
    parser.add_argument("--calls", type=int, default=60, help="upserts per batch size")
    parser.add_argument(
        "--context-chars", type=int, nargs="+", default=[0], help="each record's context, in characters"
    )
    main(parser.parse_args())
