"""Facts that change and negation, old pipeline next to the new one, in one run (issue #15).

    .venv/bin/python bench/knowledge_update.py                 # both pipelines, every set
    .venv/bin/python bench/knowledge_update.py --only new      # only the new one (or --only baseline)
    .venv/bin/python bench/knowledge_update.py --skip-locomo   # only the knowledge-update and negation sets
    .venv/bin/python bench/knowledge_update.py --only new --sets changes --skip-locomo  # one set

For each pipeline (`baseline`: SUPERSESSION=false and NEGATION_INTENT=false, today's pipeline before
this change; `new`: both on) it starts fresh redis-server and `chroma run` processes, serves the app
in-process with its real lifespan and model, and replays:

- bench/data/knowledge_update.json (zh + en, 50 changes over a simulated year, with distractors):
  every user's messages through `POST /messages` (one session a month, the message's own time), then
  every question through `POST /search` (top 10, `as_of` = the end of the year).
  *current-first* (present questions): the current memory is in the top 3 and above every memory it
  replaced. *old@5* (past questions): the last replaced memory is in the top 5; *both@5*: it and the
  current one are.
- bench/data/knowledge_update_held_out.json: other wordings of 20 such changes, written after the rules
  and weights were set and never used to change them; scored the same way.
- bench/data/changes.json (issue 24): 64 en + 64 zh changes of job, employer, home, school and
  relationship, each written by hand in its own wording; current-first as above, also per attribute.
- bench/data/changes_held_out.json: 12 en + 12 zh more changes, written after the change rules were set
  and never used to change them; scored the same way.
- bench/data/negation.json: *verify@3*: the stated fact is in the top 3 for "I don't like X, right?";
  *excluded out of top 3*: for "don't recommend X" the memory naming X is not in the top 3.
- LoCoMo dev (../shared/data/locomo_dev.json) and bench/data/zh_conversation.json through
  bench/locomo.py's replay: any@10, all@10 and the mean characters of the top 10.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, machine, served_app  # noqa: E402
from bench.locomo import DEFAULT_DATA, replay, summarize  # noqa: E402

DATA = ROOT / "bench" / "data"
PIPELINES: dict[str, dict[str, Any]] = {
    "baseline": {"supersession": False, "negation_intent": False},
    "new": {"supersession": True, "negation_intent": True},
}


async def _ingest(client: httpx.AsyncClient, user: dict[str, Any], headers: dict[str, str]) -> None:
    sessions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in user["messages"]:
        sessions[m["session"]].append(m)
    for session, messages in sorted(sessions.items(), key=lambda kv: kv[1][0]["timestamp"]):
        resp = await client.post(
            f"/v1/memory/{user['user']}/messages",
            json={
                "session_id": session,
                "messages": [
                    {"role": "user", "content": m["content"], "id": m["id"], "timestamp": m["timestamp"]}
                    for m in messages
                ],
            },
            headers=headers,
        )
        resp.raise_for_status()


async def _ranked(
    client: httpx.AsyncClient, user: dict[str, Any], query: str, headers: dict[str, str]
) -> list[str]:
    resp = await client.post(
        f"/v1/memory/{user['user']}/search",
        json={"query": query, "top_k": 10, "as_of": user["as_of"]},
        headers=headers,
    )
    resp.raise_for_status()
    ranked: list[str] = []
    for r in resp.json()["results"]:
        ranked.extend(i for i in r["source_message_ids"] if i not in ranked)
    return ranked


def _rank(ranked: list[str], mid: str) -> int:
    return ranked.index(mid) if mid in ranked else 99


async def updates(client: httpx.AsyncClient, data: dict[str, Any]) -> dict[str, Any]:
    tokens = TokenCodec(SECRET)
    rows: list[dict[str, Any]] = []
    for user in data["users"]:
        headers = {"Authorization": f"Bearer {tokens.mint(user['user'], ttl_seconds=86400)}"}
        await _ingest(client, user, headers)
        for q in user["questions"]:
            ranked = await _ranked(client, user, q["query"], headers)
            current, olds = _rank(ranked, q["current"]), [_rank(ranked, o) for o in q["old"]]
            rows.append(
                {
                    "language": user["language"],
                    "kind": q["kind"],
                    "query": q["query"],
                    "current_first": current < 3 and all(current < o for o in olds),
                    "old5": olds[-1] < 5,
                    "both5": olds[-1] < 5 and current < 5,
                    "ranks": [current, *olds],
                    "attribute": q.get("attribute"),
                }
            )
    out: dict[str, Any] = {}
    for language in ("en", "zh", "all"):
        mine = [r for r in rows if language in ("all", r["language"])]
        present = [r for r in mine if r["kind"] == "present"]
        past = [r for r in mine if r["kind"] == "past"]
        out[language] = {
            "present_questions": len(present),
            "current_first": _mean(r["current_first"] for r in present),
            "past_questions": len(past),
            "old_at_5": _mean(r["old5"] for r in past),
            "both_at_5": _mean(r["both5"] for r in past),
        }
        attributes = sorted({r["attribute"] for r in present if r["attribute"]})
        if attributes:
            out[language]["by_attribute"] = {
                a: _mean(r["current_first"] for r in present if r["attribute"] == a) for a in attributes
            }
    out["misses"] = [
        r
        for r in rows
        if (r["kind"] == "present" and not r["current_first"]) or (r["kind"] == "past" and not r["old5"])
    ]
    return out


async def negations(client: httpx.AsyncClient, data: dict[str, Any]) -> dict[str, Any]:
    tokens = TokenCodec(SECRET)
    rows: list[dict[str, Any]] = []
    for user in data["users"]:
        headers = {"Authorization": f"Bearer {tokens.mint(user['user'], ttl_seconds=86400)}"}
        await _ingest(client, user, headers)
        for q in user["questions"]:
            ranked = await _ranked(client, user, q["query"], headers)
            position = _rank(ranked, q["target"])
            ok = position < 3 if q["kind"] == "verify" else position >= 3
            rows.append(
                {
                    "language": user["language"],
                    "kind": q["kind"],
                    "query": q["query"],
                    "ok": ok,
                    "rank": position,
                }
            )
    out: dict[str, Any] = {}
    for language in ("en", "zh"):
        mine = [r for r in rows if r["language"] == language]
        out[language] = {
            "verify_questions": sum(r["kind"] == "verify" for r in mine),
            "verify_at_3": _mean(r["ok"] for r in mine if r["kind"] == "verify"),
            "exclude_requests": sum(r["kind"] == "exclude" for r in mine),
            "excluded_out_of_top3": _mean(r["ok"] for r in mine if r["kind"] == "exclude"),
        }
    out["misses"] = [r for r in rows if not r["ok"]]
    return out


def _mean(values: Any) -> float:
    items = [float(v) for v in values]
    return round(statistics.fmean(items), 3) if items else 0.0


SETS = {
    "knowledge_update": "knowledge_update.json",
    "held_out": "knowledge_update_held_out.json",
    "changes": "changes.json",
    "changes_held_out": "changes_held_out.json",
}


async def run_pipeline(name: str, skip_locomo: bool, sets: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    async with served_app(**PIPELINES[name]) as client:
        for label, file in SETS.items():
            if label in sets:
                result[label] = await updates(client, json.loads((DATA / file).read_text()))
        if "negation" in sets:
            result["negation"] = await negations(client, json.loads((DATA / "negation.json").read_text()))
        if not skip_locomo:
            for label, path in (
                ("locomo_dev", DEFAULT_DATA),
                ("zh_conversation", DATA / "zh_conversation.json"),
            ):
                replayed = await replay(
                    client, json.loads(Path(path).read_text()), user_prefix=f"{name}-{label}"
                )
                summary = summarize(
                    replayed, data=str(path), pipeline="hybrid", embedding_backend="onnx", show_misses=10_000
                )
                result[label] = {
                    k: summary[k] for k in ("questions", "recall_any@10", "recall_all@10", "mean_chars_top10")
                }
                result[label]["missed"] = sorted(m["question"] for m in summary["misses"])
    return result


def table(results: dict[str, dict[str, Any]]) -> str:
    lines = ["| measure | " + " | ".join(results) + " |", "|---|" + "---|" * len(results)]

    def row(label: str, get: Any) -> None:
        cells = []
        for r in results.values():
            try:
                cells.append(str(get(r)))
            except KeyError:
                cells.append("-")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")

    for lang in ("en", "zh"):
        row(
            f"present: current-first ({lang})",
            lambda r, lang=lang: r["knowledge_update"][lang]["current_first"],
        )
        row(
            f"past: old value in top 5 ({lang})", lambda r, lang=lang: r["knowledge_update"][lang]["old_at_5"]
        )
        row(
            f"past: both values in top 5 ({lang})",
            lambda r, lang=lang: r["knowledge_update"][lang]["both_at_5"],
        )
    for lang in ("en", "zh"):
        row(f"held out: current-first ({lang})", lambda r, lang=lang: r["held_out"][lang]["current_first"])
        row(f"held out: old value in top 5 ({lang})", lambda r, lang=lang: r["held_out"][lang]["old_at_5"])
    for lang in ("en", "zh"):
        row(f"changes: current-first ({lang})", lambda r, lang=lang: r["changes"][lang]["current_first"])
        row(
            f"changes held out: current-first ({lang})",
            lambda r, lang=lang: r["changes_held_out"][lang]["current_first"],
        )
        for attribute in ("job", "employer", "residence", "school", "relationship"):
            row(
                f"changes: current-first, {attribute} ({lang})",
                lambda r, lang=lang, a=attribute: r["changes"][lang]["by_attribute"][a],
            )
    for lang in ("en", "zh"):
        row(f"negation: verify in top 3 ({lang})", lambda r, lang=lang: r["negation"][lang]["verify_at_3"])
        row(
            f"negation: excluded out of top 3 ({lang})",
            lambda r, lang=lang: r["negation"][lang]["excluded_out_of_top3"],
        )
    for label in ("locomo_dev", "zh_conversation"):
        for key in ("recall_any@10", "recall_all@10", "mean_chars_top10"):
            row(f"{label} {key}", lambda r, label=label, key=key: r[label][key])
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(PIPELINES), default=None)
    parser.add_argument("--skip-locomo", action="store_true")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--sets",
        nargs="+",
        choices=[*SETS, "negation"],
        default=[*SETS, "negation"],
        help="which sets to run",
    )
    args = parser.parse_args()
    names = [args.only] if args.only else list(PIPELINES)
    results = {name: asyncio.run(run_pipeline(name, args.skip_locomo, args.sets)) for name in names}
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    (out / "knowledge_update.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
    sys.stdout.write(table(results) + f"\n\nmachine: {machine()}\n")
    if args.show_misses:
        if len(results) == 2 and "locomo_dev" in results["new"]:
            for label in ("locomo_dev", "zh_conversation"):
                old, new = set(results["baseline"][label]["missed"]), set(results["new"][label]["missed"])
                sys.stdout.write(
                    f"{label}: newly missed {sorted(new - old)}, newly found {sorted(old - new)}\n"
                )
        for name, r in results.items():
            for label in (*SETS, "negation"):
                for miss in r.get(label, {}).get("misses", []):
                    sys.stdout.write(f"{name} {label} " + json.dumps(miss, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
