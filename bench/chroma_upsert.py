"""What one Chroma upsert costs its server, by batch size: why the writer batches a round of users.

    .venv/bin/python bench/chroma_upsert.py                 # batches of 1, 10, 50 records

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
        say("| records per upsert | wall ms/call | server CPU ms/call | client CPU ms/call |")
        say("|---:|---:|---:|---:|")
        for size in args.sizes:
            started, server0, client0 = time.perf_counter(), cpu_seconds(chroma), cpu_seconds(me)
            for call in range(args.calls):
                vectors = rng.normal(size=(size, 384)).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                collection.upsert(
                    ids=[f"{size}-{call}-{i}" for i in range(size)],
                    embeddings=vectors,
                    documents=["我住在杭州 I live in Hangzhou"] * size,
                    metadatas=[
                        {"user_id": f"u{i % 7}", "created_at": 1.0, "topic": "home"} for i in range(size)
                    ],
                )
            per_call = 1000 / args.calls
            say(
                f"| {size} | {(time.perf_counter() - started) * per_call:.1f} "
                f"| {(cpu_seconds(chroma) - server0) * per_call:.1f} | {(cpu_seconds(me) - client0) * per_call:.1f} |"
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
    main(parser.parse_args())
