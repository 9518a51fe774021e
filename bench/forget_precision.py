"""Forget by meaning: what a dry run selects, against labels (issue 39).

    .venv/bin/python bench/forget_precision.py               # the defaults (min_relevance 0.7)
    .venv/bin/python bench/forget_precision.py --floor 0.5   # also at another floor

`bench/data/forget_precision.json`: two users (one writes English, one Chinese), 49 one-message
memories with near misses of the same kind (two allergies, three favourites, cities, appointments,
tea and coffee, people other than the user), 123 forget queries in both languages asked of both
users, each naming the memories it asks to forget. Each memory is stored as its own session through
`POST /messages` on a fresh redis-server and `chroma run` with the app's real lifespan and models
(default settings); every query is sent to `POST /forget` as a dry run. A selected memory the query
does not name is a false positive (an unrelated memory a delete would have taken); recall is the
share of named memories selected. Reported per query language and direction (en, zh, en>zh, zh>en:
query > memory language) and per kind of query; `bench/results/forget_precision.json` lists every
false positive and every miss.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, machine, served_app  # noqa: E402
from memory.text.language import detect_language  # noqa: E402

DATA = ROOT / "bench" / "data" / "forget_precision.json"
RESULTS = ROOT / "bench" / "results"
DAY = 86_400.0
KINDS = ("exact", "paraphrase", "category", "near_miss", "absent")


class Client:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.tokens = TokenCodec(SECRET)

    async def post(self, user: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {self.tokens.mint(user, ttl_seconds=86400)}"}
        resp = await self.http.post(f"/v1/memory/{user}/{path}", json=body, headers=headers)
        resp.raise_for_status()
        out: dict[str, Any] = resp.json()
        return out


async def store(client: Client, user: dict[str, Any], now: float) -> None:
    for i, (mid, text) in enumerate(user["memories"].items()):
        message = {"role": "user", "content": text, "id": mid, "timestamp": now - (i + 1) * DAY}
        await client.post(user["id"], "messages", {"session_id": f"s-{mid}", "messages": [message]})


def direction(query: str, memories_language: str) -> str:
    asked = detect_language(query)
    return asked if asked == memories_language else f"{asked}>{memories_language}"


async def dry_runs(client: Client, data: dict[str, Any], floor: float | None) -> list[dict[str, Any]]:
    out = []
    for user in data["users"]:
        language = detect_language(" ".join(user["memories"].values()))
        for q in user["queries"]:
            body: dict[str, Any] = {"query": q["q"], "dry_run": True}
            if floor is not None:
                body["min_relevance"] = floor
            found = await client.post(user["id"], "forget", body)
            shown = {m["id"]: m for m in found["memories"]}
            chosen = {m["source_message_ids"][0]: m for m in shown.values()}
            targets = set(q["targets"])
            wrong = sorted(set(chosen) - targets)
            out.append(
                {
                    "user": user["id"],
                    "query": q["q"],
                    "kind": q["kind"],
                    "direction": direction(q["q"], language),
                    "targets": sorted(targets),
                    "found": sorted(set(chosen) & targets),
                    "unrelated": [
                        {"id": mid, "content": chosen[mid]["content"], "why": chosen[mid]["why"]}
                        for mid in wrong
                    ],
                }
            )
    return out


def summary(runs: list[dict[str, Any]], key: str, groups: tuple[str, ...]) -> list[dict[str, Any]]:
    table = []
    for group in (*groups, "all"):
        rs = [r for r in runs if group in ("all", r[key])]
        if not rs:
            continue
        targets = sum(len(r["targets"]) for r in rs)
        table.append(
            {
                key: group,
                "queries": len(rs),
                "unrelated_selected": sum(len(r["unrelated"]) for r in rs),
                "queries_selecting_unrelated": sum(1 for r in rs if r["unrelated"]),
                "targets": targets,
                "targets_found": sum(len(r["found"]) for r in rs),
                "recall": round(sum(len(r["found"]) for r in rs) / targets, 3) if targets else None,
            }
        )
    return table


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(Path(args.data).read_text())
    now = time.time()
    floors: list[float | None] = [None, *args.floor]
    report: dict[str, Any] = {"machine": machine(), "data": str(Path(args.data).relative_to(ROOT))}
    started = time.perf_counter()
    async with served_app() as http:
        client = Client(http)
        for user in data["users"]:
            await store(client, user, now)
        for floor in floors:
            runs = await dry_runs(client, data, floor)
            name = "defaults" if floor is None else f"min_relevance {floor}"
            report[name] = {
                "by_direction": summary(runs, "direction", ("en", "zh", "en>zh", "zh>en")),
                "by_kind": summary(runs, "kind", KINDS),
                "unrelated": [
                    {"query": r["query"], "user": r["user"], "unrelated": r["unrelated"]}
                    for r in runs
                    if r["unrelated"]
                ],
                "missed": [
                    {
                        "query": r["query"],
                        "user": r["user"],
                        "kind": r["kind"],
                        "missed": sorted(set(r["targets"]) - set(r["found"])),
                    }
                    for r in runs
                    if set(r["targets"]) - set(r["found"])
                ],
            }
    report["seconds"] = round(time.perf_counter() - started, 1)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "forget_precision.json").write_text(json.dumps(report, ensure_ascii=False, indent=1))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--floor", type=float, action="append", default=[], help="also at this min_relevance")
    args = parser.parse_args()
    report = asyncio.run(run(args))
    sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
