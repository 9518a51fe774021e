"""What the writer's write path costs as one user grows (issue 45): its RSS, its CPU and Chroma's.

    PYTHONPATH=. .venv/bin/python bench/writer_growth.py --turns 480 --in-process-max 500
    EMBEDDING_BACKEND=torch PYTHONPATH=. .venv/bin/python bench/writer_growth.py --turns 480

The writer as `python -m app.cli.writer` builds it (`build_core(role="writer")`: no search, the
writer's models and stores) on its own redis-server and `chroma run`; the first `--turns` turns of
`bench/make_token_history.py`'s 10M-token user written through `MemoryService.ingest` in rounds of 16
turns (an import round: 2 entries of 8), one session's turns a call. Every 10 rounds: this process's
RSS and CPU seconds and the Chroma server's CPU seconds since the first round. `--in-process-max` sets
`IN_PROCESS_INDEX_MAX` (below it the writer checks duplicates against its in-process index, above it
against Chroma): a small one shows in minutes what a 10M-token user does past 20,000 memories.
Before/after: run the same script from a `git worktree` of the older commit. Prints one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.composition import build_core  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, machine  # noqa: E402
from bench.make_token_history import load_or_build  # noqa: E402
from bench.procstat import cpu_seconds, rss_mib  # noqa: E402
from harness.services import start_chroma, start_redis  # noqa: E402
from memory.models import Message  # noqa: E402

ROUND_TURNS = 16


async def run(args: argparse.Namespace) -> dict[str, Any]:
    user = load_or_build(10_000_000)
    turns = [(s["session_id"], t) for s in user["sessions"] for t in s["turns"]][: args.turns]
    work = Path(tempfile.mkdtemp(prefix="mnemo-writer-growth-"))
    redis, chroma = start_redis(work / "redis"), start_chroma(work / "chroma")
    settings = Settings(
        _env_file=None,
        redis_url=f"{redis.url}/0",
        chroma_url=chroma.url,
        auth_jwt_secret=SECRET,
        in_process_index_max=args.in_process_max,
        log_level="WARNING",
        redis_socket_timeout=60.0,
    )
    core = await build_core(settings, "writer")
    steps: list[dict[str, float]] = []
    try:
        rss0, cpu0, chroma0 = rss_mib(), time.process_time(), cpu_seconds(chroma.proc.pid)
        for k in range(0, len(turns), ROUND_TURNS):
            by_session: dict[str, list[Message]] = {}
            for session_id, t in turns[k : k + ROUND_TURNS]:
                by_session.setdefault(session_id, []).append(Message(t["role"], t["content"], id=t["id"]))
            for session_id, messages in by_session.items():
                await core.memory.ingest(user["user_id"], session_id, messages)
            done = min(k + ROUND_TURNS, len(turns))
            if (k // ROUND_TURNS) % 10 == 9 or done == len(turns):
                step = {
                    "turns": done,
                    "rss_mib": round(rss_mib()),
                    "cpu_s": round(time.process_time() - cpu0, 1),
                    "chroma_cpu_s": round(cpu_seconds(chroma.proc.pid) - chroma0, 1),
                }
                steps.append(step)
                sys.stdout.write(json.dumps(step) + "\n")
                sys.stdout.flush()
        memories = await core.store.count(user["user_id"])
    finally:
        await core.aclose()
        redis.stop()
        chroma.stop()
    last = steps[-1]
    return {
        "turns": len(turns),
        "memories": memories,
        "in_process_max": args.in_process_max,
        "embedding_backend": settings.embedding_backend,
        "rss_growth_mib": round(last["rss_mib"] - rss0),
        "cpu_s_per_turn": round(last["cpu_s"] / len(turns), 3),
        "chroma_cpu_s_per_turn": round(last["chroma_cpu_s"] / len(turns), 3),
        "steps": steps,
        "machine": machine(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=480)
    parser.add_argument("--in-process-max", type=int, default=20_000, help="IN_PROCESS_INDEX_MAX")
    result = asyncio.run(run(parser.parse_args()))
    sys.stdout.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
