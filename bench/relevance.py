"""Calibration of search relevance, and forget by meaning, on labelled zh/en query-memory pairs.

    .venv/bin/python bench/relevance.py            # reliability of the served `relevance`, forget
    .venv/bin/python bench/relevance.py --fit      # also fit the coefficients (RelevanceModel)
    .venv/bin/python bench/relevance.py --fit --out coefficients.json   # ... and write them as a file

`--out` writes the coefficients fitted on every query ("fitted_on_all") with the models the app was
configured with (the bundled ones, or EMBEDDINGS_MODEL / BRIDGE_EMBEDDINGS_MODEL when served: the
bench's app reads the environment), for RELEVANCE_COEFFICIENTS_PATH
(docs/operations.md#recalibrating-relevance-for-another-model). The fit itself always runs on the
built-in coefficients (they change no evidence, and a file for other models would refuse to start).

`bench/data/relevance_pairs.json`: 2 users, 60 memories (zh and en), 108 queries (same language,
cross-lingual both ways, and unrelated or nonsense ones), each naming the memories relevant to it.
Each memory is stored as its own session through `POST /messages` (one fresh redis-server and
`chroma run`, the app's real lifespan and models). Every query is asked with `POST /search`
(top_k 100, min_relevance 0, explain): every candidate the retriever scored is one labelled pair
(relevant when the query lists it). Queries are split by their position in the user's list: even
ones fit the coefficients (`--fit`), odd ones are held out; the reliability table (relevance bins
against the observed share of relevant pairs) is reported for the held-out half and for all.

Forget: every query with a relevant memory is sent to `POST /forget` as a dry run (prefixed with
"忘掉" or "forget that"), and the chosen memories are compared with the labels.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from app.composition import configured_models  # noqa: E402
from app.http.auth import TokenCodec  # noqa: E402
from app.settings import Settings  # noqa: E402
from bench.common import SECRET, machine, served_app  # noqa: E402
from memory.models import Evidence  # noqa: E402
from memory.recall.calibration import FittedModels, document, parse  # noqa: E402
from memory.recall.relevance import GROUPS, features, reaches  # noqa: E402

DATA = ROOT / "bench" / "data" / "relevance_pairs.json"
RESULTS = ROOT / "bench" / "results"
DAY = 86_400.0
BINS = [0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0001]


class Client:
    def __init__(self, http: httpx.AsyncClient) -> None:
        self.http = http
        self.tokens = TokenCodec(SECRET)

    def headers(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens.mint(user, ttl_seconds=86400)}"}

    async def post(self, user: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
        resp = await self.http.post(f"/v1/memory/{user}/{path}", json=body, headers=self.headers(user))
        resp.raise_for_status()
        out: dict[str, Any] = resp.json()
        return out


async def store(client: Client, user: dict[str, Any], now: float) -> None:
    for i, (mid, text) in enumerate(user["memories"].items()):
        message = {"role": "user", "content": text, "id": mid, "timestamp": now - (i + 1) * 2 * DAY}
        await client.post(user["id"], "messages", {"session_id": f"s-{mid}", "messages": [message]})


def evidence_of(e: dict[str, Any]) -> Evidence:
    return Evidence(
        query_language=e["query_language"],
        memory_language=e["memory_language"],
        cosine=e["cosine"],
        coverage=e["coverage"],
        bridge=e["bridge"],
        attribute=e["attribute"],
        words=tuple(e["words"]),
        known=e["known"],
        fused=e["fused"],
    )


async def pairs(client: Client, data: dict[str, Any], now: float) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for user in data["users"]:
        for n, q in enumerate(user["queries"]):
            body = {"query": q["q"], "top_k": 100, "min_relevance": 0, "explain": True, "as_of": now}
            found = await client.post(user["id"], "search", body)
            for rank, hit in enumerate(found["results"]):
                mid = hit["source_message_ids"][0]
                out.append(
                    {
                        "user": user["id"],
                        "query": q["q"],
                        "kind": q["kind"],
                        "held_out": n % 2 == 1,
                        "memory": mid,
                        "rank": rank,
                        "relevant": mid in q["relevant"],
                        "relevance": hit["relevance"],
                        "evidence": hit["explain"]["evidence"],
                    }
                )
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 0.1, iterations: int = 100) -> np.ndarray:
    """Newton-Raphson (IRLS) with an L2 penalty on every coefficient but the intercept."""
    b = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ b, -60, 60)))
        gradient = x.T @ (p - y) + penalty * b
        hessian = x.T @ (x * (p * (1 - p))[:, None]) + np.diag(penalty) + 1e-9 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        b -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return b


def fit(rows: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Coefficients per feature group, on the rows given. The groups without the bridge are fitted on
    the same pairs with the bridge taken away (what a user whose bridge is incomplete gets)."""
    by_group: dict[str, tuple[list[tuple[float, ...]], list[float]]] = {g: ([], []) for g in GROUPS}
    for r in rows:
        e = evidence_of(r["evidence"])
        variants = [e]
        if e.bridge is not None:
            variants.append(replace(e, bridge=None))
        for v in variants:
            group, x = features(v)
            by_group[group][0].append(x)
            by_group[group][1].append(1.0 if r["relevant"] else 0.0)
    out: dict[str, list[float]] = {}
    for group, (xs, ys) in by_group.items():
        if xs and 0 < sum(ys) < len(ys):
            out[group] = [round(float(c), 3) for c in fit_logistic(np.asarray(xs), np.asarray(ys))]
    return out


def reliability(rows: list[dict[str, Any]], key: str = "relevance") -> list[dict[str, Any]]:
    table = []
    for lo, hi in zip(BINS, BINS[1:], strict=False):
        inside = [r for r in rows if lo <= r[key] < hi]
        if not inside:
            table.append({"bin": f"{lo:.2f}-{min(hi, 1.0):.2f}", "pairs": 0})
            continue
        table.append(
            {
                "bin": f"{lo:.2f}-{min(hi, 1.0):.2f}",
                "pairs": len(inside),
                "mean_relevance": round(sum(r[key] for r in inside) / len(inside), 3),
                "share_relevant": round(sum(r["relevant"] for r in inside) / len(inside), 3),
            }
        )
    return table


def calibration_error(rows: list[dict[str, Any]], key: str = "relevance") -> float:
    """Expected calibration error over the bins: Σ |mean relevance − share relevant| · pairs / all."""
    total = 0.0
    for b in reliability(rows, key):
        if b["pairs"]:
            total += abs(b["mean_relevance"] - b["share_relevant"]) * b["pairs"]
    return round(total / max(1, len(rows)), 4)


def log_loss(rows: list[dict[str, Any]], key: str = "relevance") -> float:
    eps = 1e-4
    loss = [-math.log(min(1 - eps, max(eps, r[key] if r["relevant"] else 1 - r[key]))) for r in rows]
    return round(sum(loss) / max(1, len(loss)), 4)


def at_floor(rows: list[dict[str, Any]], data: dict[str, Any], floor: float) -> dict[str, Any]:
    """What a search with `min_relevance = floor` returns (with the rule for queries of unknown words):
    relevant pairs kept, unrelated hits, and how many queries about nothing the user said still get a
    hit."""
    kept = [r for r in rows if reaches(evidence_of(r["evidence"]), r["relevance"], floor)]
    relevant_total = sum(len(q["relevant"]) for u in data["users"] for q in u["queries"])
    none_queries = {(u["id"], q["q"]) for u in data["users"] for q in u["queries"] if not q["relevant"]}
    answered_none = {(r["user"], r["query"]) for r in kept if (r["user"], r["query"]) in none_queries}
    return {
        "floor": floor,
        "relevant_found": round(sum(r["relevant"] for r in kept) / max(1, relevant_total), 3),
        "share_of_hits_relevant": round(sum(r["relevant"] for r in kept) / max(1, len(kept)), 3),
        "unrelated_queries_with_a_hit": f"{len(answered_none)}/{len(none_queries)}",
    }


async def forget_runs(client: Client, data: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for user in data["users"]:
        for q in user["queries"]:
            if not q["relevant"]:
                continue
            zh = q["kind"].startswith("zh")
            text = f"忘掉{q['q'].rstrip('？?')}" if zh else f"forget that {q['q'].rstrip('?')}"
            found = await client.post(user["id"], "forget", {"query": text, "dry_run": True})
            chosen = {m["source_message_ids"][0] for m in found["memories"]}
            out.append(
                {
                    "kind": q["kind"],
                    "query": text,
                    "chosen": sorted(chosen),
                    "right": len(chosen & set(q["relevant"])),
                    "wrong": len(chosen - set(q["relevant"])),
                    "relevant": len(q["relevant"]),
                }
            )
    return out


def forget_summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    table = []
    for kind in ("en", "zh", "en>zh", "zh>en"):
        rs = [r for r in runs if r["kind"] == kind]
        if not rs:
            continue
        right, wrong = sum(r["right"] for r in rs), sum(r["wrong"] for r in rs)
        table.append(
            {
                "kind": kind,
                "queries": len(rs),
                "recall": round(right / max(1, sum(r["relevant"] for r in rs)), 3),
                "unrelated_chosen": wrong,
                "queries_choosing_an_unrelated": sum(1 for r in rs if r["wrong"]),
            }
        )
    return table


async def run(args: argparse.Namespace) -> dict[str, Any]:
    data = json.loads(Path(args.data).read_text())
    now = time.time()
    async with served_app(bridge_embedding=True, relevance_coefficients_path="") as http:
        client = Client(http)
        for user in data["users"]:
            await store(client, user, now)
        rows = await pairs(client, data, now)
        forgets = await forget_runs(client, data)
    held = [r for r in rows if r["held_out"]]
    report: dict[str, Any] = {
        "machine": machine(),
        "pairs": len(rows),
        "relevant_pairs": sum(r["relevant"] for r in rows),
        "queries": sum(len(u["queries"]) for u in data["users"]),
        "reliability_held_out": reliability(held),
        "reliability_all": reliability(rows),
        "ece_held_out": calibration_error(held),
        "ece_all": calibration_error(rows),
        "log_loss_held_out": log_loss(held),
        "floors": [at_floor(rows, data, f) for f in (0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.5)],
        "forget": forget_summary(forgets),
        "forget_runs": forgets,
    }
    if args.fit:
        report["fitted_on_even_queries"] = fit([r for r in rows if not r["held_out"]])
        report["fitted_on_all"] = fit(rows)
    if args.out:
        write_coefficients(Path(args.out), report, Path(args.data).name)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "relevance.json").write_text(
        json.dumps({"report": report, "rows": rows}, ensure_ascii=False, indent=1)
    )
    return report


def fitted_with() -> FittedModels:
    """The models the bench's app runs (served_app's settings: the environment, the bridge on)."""
    return configured_models(Settings(_env_file=None, auth_jwt_secret=SECRET, bridge_embedding=True))


def write_coefficients(path: Path, report: dict[str, Any], data: str) -> None:
    """The coefficients file of this fit, read back through the loader before it is written; refused
    when a group could not be fitted (its pairs all relevant or all not)."""
    fitted = report["fitted_on_all"]
    missing = [g for g in GROUPS if g not in fitted]
    if missing:
        raise SystemExit(f"{path} not written: no fit for the groups {missing} (too few labelled pairs)")
    doc = document(
        fitted,
        fitted_with(),
        time.strftime("%Y-%m-%d", time.gmtime()),
        data=data,
        pairs=report["pairs"],
        ece_all_built_in=report["ece_all"],
        fitted_on_even_queries=report["fitted_on_even_queries"],
    )
    parse(doc, path).check_models(fitted_with(), path)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    report["coefficients_file"] = str(path)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", default=str(DATA))
    parser.add_argument("--fit", action="store_true", help="fit RelevanceModel's coefficients too")
    parser.add_argument(
        "--out", help="with --fit: write the coefficients file (RELEVANCE_COEFFICIENTS_PATH) here"
    )
    args = parser.parse_args()
    if args.out and not args.fit:
        parser.error("--out writes the coefficients of a fit: add --fit")
    report = asyncio.run(run(args))
    brief = {k: v for k, v in report.items() if k != "forget_runs"}
    sys.stdout.write(json.dumps(brief, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
