"""Memory cost of exporting one large user, measured on the serving worker.

    .venv/bin/python bench/export_memory.py                    # 10,000 memories
    .venv/bin/python bench/export_memory.py --memories 20000

Serves mnemo with uvicorn (1 worker, so the worker's RSS is the one that matters) against its own
redis-server and `chroma run`, stores N memories for one user through `POST /v1/memory/{u}/messages`,
then streams `GET /v1/memory/{u}/export` to /dev/null while sampling the worker's resident memory
(VmRSS from /proc) every 10 ms. Reports the document size, the time, and how far RSS rose above where
it stood before the export: a bounded export rises by about one page, not by the document.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from prometheus_client.parser import text_string_to_metric_families  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, machine  # noqa: E402
from bench.served import served  # noqa: E402

PARTS = [
    "我上个月搬到了杭州，新工作是数据分析师。",
    "My sister Anna lives in Lisbon and works as a nurse.",
    "提醒我周五给王老师打电话说合同的事。",
    "I am learning the guitar, lessons every Tuesday evening.",
    "我们打算十月带孩子去大阪旅行，住在难波附近。",
    "My order number for the new sofa is A-{n}.",
]


def rss_of(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def worker_pid(base: str) -> int:
    text = httpx.get(f"{base}/metrics").text
    pids = [
        int(s.labels["pid"])
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "mnemo_process_resident_memory_bytes"
    ]
    if len(pids) != 1:
        raise RuntimeError(f"expected one worker, saw {pids}")
    return pids[0]


async def fill(base: str, user: str, token: str, n: int, batch: int) -> float:
    rng = random.Random(5)
    started = time.perf_counter()
    async with httpx.AsyncClient(
        base_url=base, timeout=300, headers={"Authorization": f"Bearer {token}"}
    ) as http:
        for offset in range(0, n, batch):
            messages = [
                {
                    "role": "user",
                    "content": f"{rng.choice(PARTS).format(n=i)} (note {i}: {rng.randrange(10**6)})",
                    "id": f"m{i}",
                    "timestamp": 1_700_000_000 + i * 60,
                }
                for i in range(offset, min(n, offset + batch))
            ]
            resp = await http.post(
                f"/v1/memory/{user}/messages", json={"session_id": f"s{offset // 1000}", "messages": messages}
            )
            resp.raise_for_status()
    return time.perf_counter() - started


def export(base: str, user: str, token: str, pid: int) -> dict[str, Any]:
    samples: list[int] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(rss_of(pid))
            time.sleep(0.01)

    before = rss_of(pid)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    size = 0
    started = time.perf_counter()
    with httpx.stream(
        "GET", f"{base}/v1/memory/{user}/export", headers={"Authorization": f"Bearer {token}"}, timeout=600
    ) as resp:
        resp.raise_for_status()
        tail = b""
        for chunk in resp.iter_bytes():
            size += len(chunk)
            tail = (tail + chunk)[-200:]
    elapsed = time.perf_counter() - started
    stop.set()
    sampler.join()
    return {
        "document_mib": round(size / 2**20, 2),
        "seconds": round(elapsed, 2),
        "rss_before_mib": round(before / 2**20, 1),
        "rss_peak_mib": round(max(samples + [before]) / 2**20, 1),
        "rss_rise_mib": round((max(samples + [before]) - before) / 2**20, 1),
        "tail": tail[-80:].decode(errors="replace"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=200)
    args = parser.parse_args()
    user = "exporter"
    token = TokenCodec(SECRET).mint(user)
    with served(workers=1, OUTBOX_WORKER="false") as svc:
        fill_s = asyncio.run(fill(svc.base_url, user, token, args.memories, args.batch))
        pid = worker_pid(svc.base_url)
        runs = [export(svc.base_url, user, token, pid) for _ in range(3)]
    report = {"machine": machine(), "memories": args.memories, "fill_seconds": round(fill_s, 1), "runs": runs}
    lines = [
        f"export of one user with {args.memories:,} memories (filled in {fill_s:.0f} s)",
        "| run | document MiB | seconds | worker RSS before MiB | peak MiB | rise MiB |",
        "|---|---|---|---|---|---|",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            f"| {i} | {r['document_mib']} | {r['seconds']} | {r['rss_before_mib']} | {r['rss_peak_mib']} | {r['rss_rise_mib']} |"
        )
    lines.append(f"document ends with: {runs[-1]['tail']!r}")
    lines.append(f"machine: {report['machine']}")
    print("\n".join(lines))  # noqa: T201
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / f"export_memory_{args.memories}.json").write_text(json.dumps(report, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
