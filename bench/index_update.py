"""What one write round costs a large user's in-process index (`BM25Index.updated`), at N memories.

    PYTHONPATH=. .venv/bin/python bench/index_update.py --memories 20000

No stores, no model: the memories are the segments (`memory.text.cleaning.segment`) of
`bench/make_token_history.py`'s 10M-token user in order, each with the two turns before it as its
context (as the write path gives a memory the messages before it, up to 6,000 characters), and random
MiniLM-sized vectors. The index of the first N is built once (`build_cpu_s`; `build_holds_mib`: this
process's RSS growth over the build after `gc.collect()` and glibc's `malloc_trim(0)`, the memories and
vectors made before: what the worker that builds a user from the store keeps for their words); then
`--rounds` times the next `--added` memories are added to it (a write round of an import) and the new
index searched once. Then the same on the index as a worker loads it from a snapshot: the save
(`save_cpu_s`), the load (`load_cpu_s`), the first write after it, and a write that replaces
`--replaced` memories (a changed fact marks the old statements superseded: the write reads their
words), what a load holds (`load_holds_mib`: RSS growth over one decode, after a collection and
`malloc_trim`, the payload and the built index alive before and after: the memories, their words and
vectors as a worker that loads the user keeps them), and the write that makes new columns once `COMPACT_AFTER` memories were written since the load
(`compacting_write_cpu_s`). CPU seconds (`time.process_time`: the host's load stretches wall time, not this). Before/after:
run the same script from a `git worktree` of the older commit. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.common import machine  # noqa: E402
from bench.make_token_history import load_or_build  # noqa: E402
from bench.procstat import rss_mib  # noqa: E402
from memory.models import Memory  # noqa: E402
from memory.recall.keyword_index import BM25Index  # noqa: E402
from memory.recall.ownership import own_statements  # noqa: E402
from memory.recall.snapshot import decode, encode  # noqa: E402
from memory.recall.validity import Visible, category_statements  # noqa: E402
from memory.text.cleaning import segment  # noqa: E402
from memory.text.tokens import tokenize  # noqa: E402

try:
    from memory.recall.term_rows import COMPACT_AFTER
except ImportError:  # a commit before compaction, run from a worktree for before/after: 2,000 written
    COMPACT_AFTER = 2_000


def memories(n: int) -> list[Memory]:
    user = load_or_build(10_000_000)
    turns = [t["content"] for s in user["sessions"] for t in s["turns"]]
    out: list[Memory] = []
    for i, turn in enumerate(turns):
        context = " ".join(turns[max(0, i - 2) : i])[-6000:]
        for j, piece in enumerate(segment(turn)):
            out.append(
                Memory(
                    id=f"m{i}_{j}",
                    user_id="u",
                    content=piece,
                    created_at=float(i),
                    session_id="s",
                    source="user",
                    content_hash=f"h{i}_{j}",
                    importance=0.5,
                    context=context,
                )
            )
        if len(out) >= n:
            break
    return out


def derived(index: BM25Index) -> None:
    """What a search reads of the index besides its words (memory/recall/validity.py, ownership.py)."""
    view = Visible([(index, set())])
    category_statements(["home"], view)
    own_statements(["my dentist", "我的牙医"], [(index, set())])
    view.with_fact_keys(["residence"])
    view.chains()


def trimmed_rss() -> float:
    """This process's RSS (MiB) after a full collection and glibc's `malloc_trim(0)`."""
    gc.collect()
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss_mib()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=20_000)
    parser.add_argument("--added", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--replaced", type=int, default=5, help="memories a replacing write upserts")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(45)
    made = memories(args.memories + args.added)
    base, added = made[: args.memories], made[args.memories : args.memories + args.added]
    # written before the write that compacts: the first memories again under new ids (the set has
    # 58,916 memories in all)
    extra = [replace(m, id=f"{m.id}_again") for m in made[:COMPACT_AFTER]]
    made_vectors = rng.standard_normal((len(base), 384)).astype(np.float32)
    before_build = trimmed_rss()
    build_started = time.process_time()
    index = BM25Index(base, made_vectors)
    build_cpu = time.process_time() - build_started
    built_mib = trimmed_rss() - before_build
    query = tokenize("when is the deploy window of the staging database")
    seconds: list[float] = []
    for _ in range(args.rounds):
        started = time.process_time()
        index.updated(added, rng.standard_normal((len(added), 384)).astype(np.float32), []).search(
            query, limit=10
        )
        seconds.append(round(time.process_time() - started, 3))
    derived(index)  # this worker searched the user before the writes below
    after_write: list[float] = []
    for _ in range(args.rounds):
        later = index.updated(added, rng.standard_normal((len(added), 384)).astype(np.float32), [])
        started = time.process_time()
        derived(later)
        after_write.append(round(time.process_time() - started, 4))
    started = time.process_time()
    encoded = encode(1, index, None, "bench")
    save_cpu = time.process_time() - started
    before_load = trimmed_rss()
    held = decode(encoded, "bench")  # what a worker that loads the user keeps (the payload aside)
    load_mib = trimmed_rss() - before_load
    del held
    after_load: list[float] = []
    load_cpu: list[float] = []
    replaced_cpu: list[float] = []
    for k in range(args.rounds):
        started = time.process_time()
        snapshot = decode(encoded, "bench")
        load_cpu.append(round(time.process_time() - started, 3))
        assert snapshot is not None
        started = time.process_time()
        snapshot.index.updated(added, rng.standard_normal((len(added), 384)).astype(np.float32), [])
        after_load.append(round(time.process_time() - started, 3))
        # a write that replaces memories (a changed fact marks the old statements superseded)
        old = [
            replace(base[i], superseded_by=added[0].id)
            for i in range(k * 500, len(base), max(1, len(base) // args.replaced))
        ][: args.replaced]
        started = time.process_time()
        snapshot.index.updated(old, rng.standard_normal((len(old), 384)).astype(np.float32), [])
        replaced_cpu.append(round(time.process_time() - started, 3))
    # the write that makes new columns: COMPACT_AFTER memories written since the load, with this one
    snapshot = decode(encoded, "bench")
    assert snapshot is not None
    written = snapshot.index.updated(
        extra[: COMPACT_AFTER - 1], rng.standard_normal((COMPACT_AFTER - 1, 384)).astype(np.float32), []
    )
    started = time.process_time()
    written.updated(extra[COMPACT_AFTER - 1 :], rng.standard_normal((1, 384)).astype(np.float32), [])
    compact_cpu = time.process_time() - started
    result = {
        "machine": machine(),
        "memories": len(base),
        "added": len(added),
        "build_cpu_s": round(build_cpu, 2),
        "build_holds_mib": round(built_mib, 1),
        "update_and_search_cpu_s": seconds,
        "derived_after_write_cpu_s": after_write,
        "write_after_load_cpu_s": after_load,
        "replace_after_load_cpu_s": replaced_cpu,
        "save_cpu_s": round(save_cpu, 2),
        "load_cpu_s": load_cpu,
        "load_holds_mib": round(load_mib, 1),
        "compacting_write_cpu_s": round(compact_cpu, 2),
    }
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
