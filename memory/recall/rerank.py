"""The reranking stage: a cross-encoder (any `Reranker`, e.g. a rerank server over HTTP) reorders the
first `candidates` hits of a search, within a time budget.

Off unless a reranker is configured. The first stage (`HybridRetriever`) is asked for
max(top_k, candidates) hits; the reranker scores them against the query; the new order is a weighted
reciprocal-rank fusion of the two orders (`weight` is the reranker's share: 1 = its order alone), then
the top k are kept. Past `budget_seconds`, or when the reranker fails, the first-stage order stands,
counted in `mnemo_reranks{outcome}`. A hit's `relevance` stays the first stage's calibrated
probability (memory/recall/relevance.py): the reranker changes the order, not what a floor keeps;
docs/operations.md says how to recalibrate for a reranker.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from memory.models import RecallRequest, ScoredMemory
from memory.recall.keyword_index import BM25Index
from memory.recall.retrieval import HybridRetriever
from monitoring import metrics

log = logging.getLogger(__name__)
RRF_K = 10  # reciprocal-rank fusion's constant: small, so the top ranks of each order count most


class Reranker(Protocol):
    """Scores each of `documents` against `query` (higher: more relevant), in their order."""

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]: ...


@dataclass(frozen=True, slots=True)
class RerankPolicy:
    candidates: int = 30
    budget_seconds: float = 0.5
    weight: float = 0.5


def reorder(hits: Sequence[ScoredMemory], scores: Sequence[float], weight: float) -> list[ScoredMemory]:
    """`hits` (first-stage order) reordered by the fusion of that order and the reranker's scores."""
    if len(scores) != len(hits):
        raise ValueError(f"the reranker scored {len(scores)} of {len(hits)} documents")
    by_score = sorted(range(len(hits)), key=lambda i: -scores[i])
    rerank_rank = {i: r for r, i in enumerate(by_score)}

    def fused(i: int) -> float:
        return (1 - weight) / (RRF_K + i + 1) + weight / (RRF_K + rerank_rank[i] + 1)

    return [hits[i] for i in sorted(range(len(hits)), key=lambda i: (-fused(i), i))]


async def rerank(
    query: str, hits: Sequence[ScoredMemory], reranker: Reranker, policy: RerankPolicy
) -> tuple[list[ScoredMemory], str]:
    """(the hits in their new order, the outcome); the first-stage order on timeout or failure."""
    head = list(hits[: policy.candidates])
    if len(head) < 2:
        return list(hits), "skipped"
    try:
        scores = await asyncio.wait_for(
            reranker.scores(query, [h.memory.content for h in head]), timeout=policy.budget_seconds
        )
        ordered = reorder(head, scores, policy.weight)
    except TimeoutError:
        return list(hits), "timeout"
    except Exception as exc:  # noqa: BLE001 - any failure of the stage leaves the first stage's order
        log.warning("rerank failed; first-stage order kept", extra={"reason": f"{type(exc).__name__}: {exc}"})
        return list(hits), "error"
    return [*ordered, *hits[len(head) :]], "reranked"


class RerankingRetriever(HybridRetriever):
    """The hybrid retriever with the reranking stage over its first `policy.candidates` hits."""

    def __init__(self, *args: object, reranker: Reranker, policy: RerankPolicy, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.reranker = reranker
        self.policy = policy

    async def search(
        self,
        user_id: str,
        request: RecallRequest,
        *,
        hot: bool = True,
        hidden_hot: Collection[str] = frozenset(),
        archived: Sequence[tuple[BM25Index, Collection[str]]] = (),
    ) -> list[ScoredMemory]:
        if request.every_segment:  # forget judges every memory on the first stage's evidence
            return await super().search(user_id, request, hot=hot, hidden_hot=hidden_hot, archived=archived)
        wide = replace(request, top_k=max(request.top_k, self.policy.candidates))
        hits = await super().search(user_id, wide, hot=hot, hidden_hot=hidden_hot, archived=archived)
        ordered, outcome = await rerank(request.query, hits, self.reranker, self.policy)
        metrics.RERANKS.labels(outcome).inc()
        return ordered[: request.top_k]
