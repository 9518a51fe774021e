"""Retrieval quality through the HTTP API on LoCoMo (and mnemo's own Chinese conversation).

    .venv/bin/python bench/locomo.py                                   # LoCoMo dev slice, current pipeline
    .venv/bin/python bench/locomo.py --pipeline naive                  # the foundation pipeline
    .venv/bin/python bench/locomo.py --data bench/data/zh_conversation.json
    .venv/bin/python bench/locomo.py --data ../shared/data/locomo_dev_zh.json     # the dev slice in Chinese
    .venv/bin/python bench/locomo.py --questions-from ../shared/data/locomo_dev_zh.json  # en turns, zh questions
    .venv/bin/python bench/locomo.py --embedding-backend torch         # sentence-transformers embedder
    .venv/bin/python bench/locomo.py --bridge off                      # without the multilingual bridge
    .venv/bin/python bench/locomo.py --min-relevance 0                 # every hit, whatever its relevance

Starts its own redis-server and `chroma run` (temp dir), serves the app in-process with its real
lifespan and the real embedding model, ingests every session with `POST /v1/memory/{user}/messages`
(message id = the turn's `dia_id`, name = the speaker, timestamp = the session's date; an image turn
keeps its caption as "[shares a photo: …]"), then asks every category 1-4 question with
`POST /v1/memory/{user}/search` (top_k 10, `as_of` = the end of the conversation) and scores the
`source_message_ids` of the results against the question's evidence ids.

Search sends `min_relevance` only when `--min-relevance` is given (else the server's default floor,
SEARCH_MIN_RELEVANCE). The answer also has, from the same run's hits: recall and context cost (mean
characters of the hits kept) when only the first k hits are kept (k = 1..10, `by_cut`), and when only
hits whose relevance reaches a floor are kept (`by_floor`, applied to the top 10 this run returned): the
comparison "at the same context cost" of docs/benchmarks.md#relevance.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import hashlib
import json
import math
import re
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from app.http.auth import TokenCodec  # noqa: E402
from bench.common import SECRET, machine, percentile, served_app  # noqa: E402
from bench.fake_llm import completion  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "data" / "locomo_dev.json"
_DIA_RE = re.compile(r"D\d+:\d+")


_ZH_TIME_RE = re.compile(
    r"(\d{4})年(\d{1,2})月(\d{1,2})日\s*(上午|中午|下午|晚上|凌晨|早上)?\s*(\d{1,2}):(\d{2})"
)
_ZH_AFTERNOON = ("中午", "下午", "晚上")


def parse_session_time(text: str) -> float:
    """'1:56 pm on 8 May, 2023' (LoCoMo) or '2023年5月8日下午1:56' (its Chinese translation) -> epoch
    seconds (UTC)."""
    if m := _ZH_TIME_RE.fullmatch(text.strip()):
        year, month, day, part, hour, minute = m.groups()
        h = int(hour) % 12 + (12 if part in _ZH_AFTERNOON else 0) if part else int(hour)
        return datetime(int(year), int(month), int(day), h, int(minute), tzinfo=UTC).timestamp()
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC).timestamp()


def evidence_ids(raw: list[str]) -> set[str]:
    """Defensive: LoCoMo has 'D:11:26' and several ids in one string."""
    ids: set[str] = set()
    for item in raw:
        fixed = item.replace("D:", "D")
        ids.update(_DIA_RE.findall(fixed))
    return ids


def sessions_of(conversation: dict[str, Any]) -> list[tuple[int, float, list[dict[str, Any]]]]:
    out = []
    for key, turns in conversation.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(turns, list) and turns:
            n = int(m.group(1))
            out.append((n, parse_session_time(conversation[f"session_{n}_date_time"]), turns))
    return sorted(out)


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    if turn.get("blip_caption"):
        text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
    return text


def would_be_fact(text: str) -> bool:
    """Would the seed's threshold alone (importance >= 0.65, or an explicit anchor) keep this turn?"""
    from memory.write.scoring import importance, is_explicit_anchor

    return importance(text).score >= 0.65 or is_explicit_anchor(text)


def ndcg(ranked: list[str], relevant: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, d in enumerate(ranked[:k]) if d in relevant)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(relevant))))
    return dcg / ideal if ideal else 0.0


def asked_from(samples: list[dict[str, Any]], other: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The samples with the questions of `other` (the same conversations in the other language, question
    for question, as ../shared/data/locomo_dev_zh.json is to locomo_dev.json): turns in one language,
    questions in the other."""
    by_id = {o["sample_id"]: o for o in other}
    out = []
    for sample in samples:
        theirs = by_id[sample["sample_id"]]["qa"]
        if len(theirs) != len(sample["qa"]):
            raise ValueError(f"{sample['sample_id']}: {len(theirs)} questions against {len(sample['qa'])}")
        qa = [{**mine, "question": q["question"]} for mine, q in zip(sample["qa"], theirs, strict=True)]
        out.append({**sample, "qa": qa})
    return out


def oracle_upstream(translations: dict[str, str]) -> httpx.MockTransport:
    """An OpenAI-compatible upstream that translates a question perfectly: it answers with the same
    question of the dev slice in the other language (turn for turn, question for question), and with an
    error for anything else. The upper bound of query translation through a real model."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        question = " ".join(str(body["messages"][-1]["content"]).split())
        if question not in translations:
            return httpx.Response(404, json={"error": {"message": "not a dev-slice question"}})
        return httpx.Response(200, json=completion(translations[question], "oracle", completion_id="oracle"))

    return httpx.MockTransport(handle)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    samples = json.loads(Path(args.data).read_text())
    translations: dict[str, str] = {}
    parallel = args.parallel or args.questions_from
    if parallel is not None:  # each question and its translation, both ways
        theirs = {o["sample_id"]: o for o in json.loads(Path(parallel).read_text())}
        for sample in samples:
            for mine, other in zip(sample["qa"], theirs[sample["sample_id"]]["qa"], strict=True):
                a, b = str(mine["question"]), str(other["question"])
                translations[" ".join(a.split())] = b
                translations[" ".join(b.split())] = a
    if args.questions_from is not None:
        samples = asked_from(samples, json.loads(Path(args.questions_from).read_text()))
    options: dict[str, Any] = {
        "retrieval_pipeline": args.pipeline,
        "retrieval_clustering": args.clustering,
        "embedding_backend": args.embedding_backend,
        "bridge_embedding": args.bridge == "on",
        "relation_memory": args.relations == "on",
    }
    if args.time_weight is not None:
        options["retrieval_time_weight"] = args.time_weight
    if args.lexicon is not None:
        options["keyword_lexicon"] = args.lexicon == "on"
    for item in args.set:  # any other setting, as the environment would give it (a string)
        key, _, value = item.partition("=")
        options[key.strip().lower()] = value
    transport = None
    if args.translate == "oracle":
        if not translations:
            raise SystemExit("--translate oracle needs --questions-from or --parallel (the other language)")
        transport = oracle_upstream(translations)
        options |= {
            "llm_base_url": "http://oracle.test/v1",
            "llm_model": "oracle",
            "query_translation": True,
            "llm_supersession_judge": False,  # the writes stay those of the run without a model
        }
    async with served_app(transport, **options) as client:
        replayed = await replay(client, samples, min_relevance=args.min_relevance, top_k=args.top_k)
    return summarize(
        replayed,
        data=args.data,
        pipeline=args.pipeline,
        embedding_backend=args.embedding_backend,
        show_misses=args.show_misses,
    )


@dataclasses.dataclass
class Replayed:
    per_question: list[dict[str, Any]]
    stored_total: int
    latencies: list[float]


def user_of(sample: dict[str, Any], prefix: str = "bench") -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "-", f"{prefix}-{sample['sample_id']}")


def session_messages(started: float, turns: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A session's turns as `/messages` takes them (message id = the turn's `dia_id`, name = the speaker)."""
    return [
        {
            "role": "user",
            "content": turn_text(t),
            "name": t["speaker"],
            "id": t["dia_id"],
            "timestamp": started + i,  # keep turn order inside a session
        }
        for i, t in enumerate(turns)
        if turn_text(t)
    ]


async def ingest(
    client: httpx.AsyncClient, sample: dict[str, Any], user: str, headers: dict[str, str]
) -> float:
    """Every session of the sample through `POST /messages`; returns the end of the conversation."""
    end_of_conversation = 0.0
    for number, started, turns in sessions_of(sample["conversation"]):
        messages = session_messages(started, turns)
        end_of_conversation = max(end_of_conversation, started + len(turns))
        resp = await client.post(
            f"/v1/memory/{user}/messages",
            json={"session_id": f"session-{number}", "messages": messages},
            headers=headers,
        )
        resp.raise_for_status()
    return end_of_conversation


async def replay(
    client: httpx.AsyncClient,
    samples: list[dict[str, Any]],
    user_prefix: str = "bench",
    min_relevance: float | None = None,
    top_k: int = 10,
) -> Replayed:
    """Ingest every sample's sessions into the served app and ask its questions (`top_k` results; the
    @5 / @10 figures read the first 5 / 10 of them, `by_cut` every cut up to `top_k`)."""
    tokens = TokenCodec(SECRET)
    per_question: list[dict[str, Any]] = []
    stored_total = 0
    latencies: list[float] = []
    for sample in samples:
        user = user_of(sample, user_prefix)
        headers = {"Authorization": f"Bearer {tokens.mint(user, ttl_seconds=86400)}"}
        end_of_conversation = await ingest(client, sample, user, headers)
        listed = await client.get(f"/v1/memory/{user}/list?limit=1", headers=headers)
        stored_total += int(listed.json()["total"])
        texts = {
            t["dia_id"]: turn_text(t) for _, _, turns in sessions_of(sample["conversation"]) for t in turns
        }
        for qa in sample["qa"]:
            if qa.get("category") not in (1, 2, 3, 4):
                continue
            relevant = evidence_ids(qa.get("evidence", []))
            if not relevant:
                continue
            kept_by_threshold = any(would_be_fact(texts.get(e, "")) for e in relevant)
            t0 = time.perf_counter()
            body: dict[str, Any] = {
                "query": str(qa["question"]),
                "top_k": top_k,
                "as_of": end_of_conversation,
            }
            if min_relevance is not None:
                body["min_relevance"] = min_relevance
            resp = await client.post(f"/v1/memory/{user}/search", json=body, headers=headers)
            latencies.append((time.perf_counter() - t0) * 1000)
            resp.raise_for_status()
            results = resp.json()["results"]
            ranked: list[str] = []
            for r in results:
                for mid in r["source_message_ids"]:
                    if mid not in ranked:
                        ranked.append(mid)
            chars = sum(len(r["content"]) for r in results[:10])
            per_question.append(
                {
                    "sample": sample["sample_id"],
                    "category": qa["category"],
                    "question": qa["question"],
                    "evidence": sorted(relevant),
                    "ranked": ranked[:10],
                    "any5": bool(relevant & set(_first_results_ids(results, 5))),
                    "any10": bool(relevant & set(_first_results_ids(results, 10))),
                    "all10": relevant <= set(_first_results_ids(results, 10)),
                    "ndcg10": ndcg(ranked, relevant, 10),
                    "chars10": chars,
                    "threshold_keeps_evidence": kept_by_threshold,
                    # each hit: (its source message ids, its characters, its relevance when served)
                    "hits": [
                        (r["source_message_ids"], len(r["content"]), r.get("relevance"), r.get("similarity"))
                        for r in results
                    ],
                }
            )
    return Replayed(per_question, stored_total, latencies)


def summarize(
    replayed: Replayed, *, data: str, pipeline: str, embedding_backend: str, show_misses: int = 0
) -> dict[str, Any]:
    per_question, stored_total, latencies = replayed.per_question, replayed.stored_total, replayed.latencies

    def mean(key: str, rows: list[dict[str, Any]]) -> float:
        return round(statistics.fmean(float(r[key]) for r in rows), 3) if rows else 0.0

    by_category = {
        str(c): {"n": len(rows), "any10": mean("any10", rows), "all10": mean("all10", rows)}
        for c in (1, 2, 3, 4)
        if (rows := [r for r in per_question if r["category"] == c])
    }
    return {
        "data": Path(data).name,
        "pipeline": pipeline,
        "embedding_backend": embedding_backend,
        "questions": len(per_question),
        "recall_any@5": mean("any5", per_question),
        "recall_any@10": mean("any10", per_question),
        "recall_all@10": mean("all10", per_question),
        "ndcg@10": mean("ndcg10", per_question),
        "mean_chars_top10": round(statistics.fmean(r["chars10"] for r in per_question), 0)
        if per_question
        else 0,
        "search_p50_ms": round(percentile(latencies, 50), 1),
        "search_p95_ms": round(percentile(latencies, 95), 1),
        "stored_items": stored_total,
        "threshold_only_recall_ceiling": mean("threshold_keeps_evidence", per_question),
        "by_category": by_category,
        "by_cut": [
            cost_and_recall(per_question, lambda hits, k=k: hits[:k], f"top {k}")
            for k in range(1, max(10, max((len(r["hits"]) for r in per_question), default=0)) + 1)
        ],
        "by_floor": [
            cost_and_recall(
                per_question,
                lambda hits, f=f: [h for h in hits if h[2] is not None and h[2] >= f],
                f"relevance >= {f}",
            )
            for f in (0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5)
        ],
        "machine": machine(),
        "misses": [r for r in per_question if not r["any10"]][:show_misses],
        "questions_detail": per_question,
    }


def cost_and_recall(per_question: list[dict[str, Any]], keep: Any, name: str) -> dict[str, Any]:
    """recall_any (an evidence turn among the hits kept) and the mean characters kept, over questions."""
    found = chars = 0.0
    for r in per_question:
        kept = keep(r["hits"])
        found += bool(set(r["evidence"]) & {mid for ids, *_ in kept for mid in ids})
        chars += sum(h[1] for h in kept)
    n = max(1, len(per_question))
    return {"keep": name, "recall_any": round(found / n, 3), "mean_chars": round(chars / n)}


def safe_file_name(name: str, limit: int = 160) -> str:
    """`name` as one file name: `--set` values may hold URLs (slashes, colons) and run long."""
    safe = re.sub(r"[^A-Za-z0-9_.=@-]+", "-", name)
    if len(safe) <= limit:
        return safe
    return f"{safe[:limit]}-{hashlib.blake2b(name.encode(), digest_size=4).hexdigest()}"


def _first_results_ids(results: list[dict[str, Any]], k: int) -> list[str]:
    return [mid for r in results[:k] for mid in r["source_message_ids"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(DEFAULT_DATA))
    parser.add_argument(
        "--questions-from",
        default=None,
        help="ask the questions of this file instead (the same conversations in the other language: "
        "e.g. --data ../shared/data/locomo_dev.json --questions-from ../shared/data/locomo_dev_zh.json)",
    )
    parser.add_argument("--pipeline", default="hybrid", choices=["naive", "hybrid"])
    parser.add_argument("--show-misses", type=int, default=0)
    parser.add_argument(
        "--top-k",
        type=int,
        default=10,
        help="results asked per question (the @10 figures read the first 10; by_cut goes up to this): "
        "with --min-relevance 0, how far down the evidence lies, the room a reranker has",
    )
    parser.add_argument(
        "--time-weight", type=float, default=None, help="RETRIEVAL_TIME_WEIGHT (default: the setting's)"
    )
    parser.add_argument("--clustering", action="store_true", help="RETRIEVAL_CLUSTERING on")
    parser.add_argument(
        "--embedding-backend",
        default="onnx",
        choices=["onnx", "torch"],
        help="EMBEDDING_BACKEND: int8 ONNX MiniLM (default) or sentence-transformers",
    )
    parser.add_argument(
        "--bridge", choices=["on", "off"], default="on", help="BRIDGE_EMBEDDING (off: the pipeline before it)"
    )
    parser.add_argument(
        "--min-relevance", type=float, default=None, help="sent with every search (default: not sent)"
    )
    parser.add_argument(
        "--relations", choices=["on", "off"], default="on", help="RELATION_MEMORY (off: recall without links)"
    )
    parser.add_argument(
        "--lexicon", choices=["on", "off"], default=None, help="KEYWORD_LEXICON (default: the setting's)"
    )
    parser.add_argument(
        "--translate",
        choices=["off", "oracle"],
        default="off",
        help="QUERY_TRANSLATION through an upstream LLM; oracle: a perfect translator (the same question "
        "of --questions-from's other file), the upper bound of what a model can add",
    )
    parser.add_argument(
        "--parallel",
        default=None,
        help="the same conversations in the other language, for --translate oracle when the questions "
        "are asked in the turns' language (default: --questions-from)",
    )
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="SETTING=VALUE",
        help="any other setting for this run (e.g. --set keyword_lexicon_weight=0.3); repeatable",
    )
    parser.add_argument(
        "--questions-out",
        type=Path,
        default=None,
        help="also write every question with its hits (ids, characters, relevance, similarity) here "
        "(bench/chat_gate.py reads it)",
    )
    args = parser.parse_args()
    result = asyncio.run(run(args))
    if args.questions_out is not None:
        args.questions_out.write_text(json.dumps(result["questions_detail"], ensure_ascii=False))
    del result["questions_detail"]
    result["bridge"] = args.bridge
    out = ROOT / "bench" / "results"
    out.mkdir(parents=True, exist_ok=True)
    variant = (
        f"_{args.embedding_backend}"
        + ("" if args.time_weight is None else f"_t{args.time_weight}")
        + ("_cluster" if args.clustering else "")
        + ("" if args.bridge == "on" else "_nobridge")
        + ("" if args.min_relevance is None else f"_rel{args.min_relevance}")
        + ("" if args.relations == "on" else "_norel")
        + ("" if args.lexicon is None else f"_lexicon{args.lexicon}")
        + ("" if args.translate == "off" else f"_translate{args.translate}")
        + "".join(f"_{item}" for item in args.set)
    )
    asked = "" if args.questions_from is None else f"_asked_{Path(args.questions_from).stem}"
    name = safe_file_name(f"locomo_{Path(args.data).stem}{asked}_{args.pipeline}{variant}") + ".json"
    (out / name).write_text(json.dumps(result, indent=2, ensure_ascii=False))
    misses = result.pop("misses")
    result["min_relevance"] = args.min_relevance
    width = max(len(k) for k in result)
    sys.stdout.write("\n".join(f"{k:<{width}}  {v}" for k, v in result.items()) + "\n")
    for miss in misses:
        sys.stdout.write(json.dumps(miss, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
