"""Recall's channels beside the dense one (split from retrieval.py, issue 43): the keyword channel's hits
over every index searched, the bridge channel's cosines (blended with the turns around a memory) and
whether it takes part, and each candidate's evidence for its calibrated relevance. The retriever
(retrieval.py) calls them in turn. Pure, but for the bridge metric.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from memory.embedding.base import Embedder
from memory.models import Evidence, Memory, SearchFilters
from memory.recall.crosslingual import (
    BridgeChannel,
    BridgeRows,
    BridgeWeights,
    cross_language,
    nearest,
    needs_bridge,
)
from memory.recall.fusion import (
    passes,
)
from memory.recall.keyword_index import BM25Index
from memory.recall.query import QueryPlan
from memory.text.language import Lang, detect_language
from monitoring import metrics

log = logging.getLogger("memory.recall.retrieval")  # the name its lines always had


def bridge_candidates(
    rows: BridgeRows,
    bvec: np.ndarray,
    bridge: BridgeChannel,
    index: BM25Index,
    candidates: dict[str, Memory],
    cosine: dict[str, float],
    keyword: dict[str, float],
    qvec: np.ndarray,
    keep: Callable[[Memory], bool],
    language: Lang,
) -> tuple[dict[str, float], set[str]]:
    """The bridge channel's nearest added to the candidates (with their MiniLM cosine; keyword 0 unless
    that channel found them), and every candidate's bridge cosine with the cross-lingual ones."""
    found = nearest(rows, rows.cosine(bvec), index.memories, limit=bridge.weights.candidates, keep=keep)
    for mid, _ in found:
        if mid not in candidates:
            candidates[mid] = index.memories[mid]
            cosine.setdefault(mid, index.cosine([mid], qvec).get(mid, 0.0))
            keyword.setdefault(mid, 0.0)
    return _bridge_cosines(rows, bvec, bridge.weights, index, list(candidates), language)


def _bridge_cosines(
    rows: BridgeRows,
    bvec: np.ndarray,
    bw: BridgeWeights,
    index: BM25Index,
    candidates: Sequence[str],
    language: Lang,
) -> tuple[dict[str, float], set[str]]:
    """The bridge cosine of each candidate with a bridge row (archived ones have none), blended with the
    turns around it, and the candidates in another language than the query."""
    sims = rows.cosine(bvec)
    at = rows.row_of()
    bridged = [mid for mid in candidates if mid in at]
    cross = cross_language(rows, language, bridged)
    same = [mid for mid in bridged if mid not in cross]
    across = [mid for mid in bridged if mid in cross]
    by_id: dict[str, float] = {}
    for group, blend in ((same, bw.neighbours), (across, bw.neighbours_cross)):
        if group and blend > 0:  # in the query's language, blended with the turns around it
            blended = rows.blended_cosine(index.memories, blend, bvec, [at[mid] for mid in group])
            by_id.update((mid, float(x)) for mid, x in zip(group, blended, strict=True))
        else:
            by_id.update((mid, float(sims[at[mid]])) for mid in group)
    return {mid: by_id[mid] for mid in bridged}, cross


def _evidence(
    plan: QueryPlan,
    candidates: Mapping[str, Memory],
    sources: Sequence[tuple[BM25Index, Collection[str]]],
    cosine: Mapping[str, float],
    bridge_cos: Mapping[str, float] | None,
    rows: BridgeRows | None,
    translated: Mapping[str, float] | None,
    language: Lang,
) -> dict[str, Evidence]:
    """Each candidate's absolute channel measures, for its calibrated relevance."""
    langs = rows.language_of() if rows is not None else {}
    # the query's own words, or the aliases mnemo itself adds to them ("bills" -> 账单, invoice): a
    # user who wrote "invoice" did write what "my bills" asks about; gibberish has no aliases
    # (and the lexicon's translations of them: a user who wrote "adopted" wrote what "领养" asks)
    own = set(plan.own_tokens)  # once: per token it made a long query's ranking quadratic (issue 39)
    aliases = [t for t in [*plan.keyword_tokens, *(translated or ())] if t not in own]
    known = max(
        (max(src.known(plan.own_tokens), src.known(aliases)) for src, _ in sources if len(src)),
        default=0.0,
    )
    by_owner: dict[int, list[str]] = {}
    for mid in candidates:
        owner = next((k for k, (src, _) in enumerate(sources) if mid in src.memories), -1)
        by_owner.setdefault(owner, []).append(mid)
    covers: dict[str, tuple[float, tuple[str, ...]]] = dict.fromkeys(by_owner.pop(-1, []), (0.0, ()))
    for k, mids in by_owner.items():  # one pass per index over its candidates: what its postings say
        covers.update(zip(mids, sources[k][0].coverage(mids, plan.own_tokens), strict=True))
    evidence: dict[str, Evidence] = {}
    for mid, m in candidates.items():
        covered, words = covers[mid]
        evidence[mid] = Evidence(
            query_language=language,
            memory_language=langs.get(mid) or detect_language(m.content),
            cosine=cosine[mid],
            coverage=covered,
            # the cosine the ranking uses, blended with the turns around the memory (a reply
            # means what its question asked): in the query's language and, less, across
            bridge=bridge_cos.get(mid) if bridge_cos is not None else None,
            words=words,
            known=known,
        )
    return evidence


def _keyword_hits(
    plan: QueryPlan,
    sources: Sequence[tuple[BM25Index, Collection[str]]],
    translated: Mapping[str, float] | None,
    filters: SearchFilters,
    limit: int,
    candidates: dict[str, Memory],
) -> dict[str, float]:
    """The keyword channel's scores over every index searched (each less the ids it must not answer for);
    what it finds joins `candidates`."""
    keyword: dict[str, float] = {}
    for source, hidden in sources:
        for mid, score in source.search(plan.keyword_tokens, limit=limit, weights=translated):
            memory = source.memories[mid]
            if mid not in hidden and passes(memory, filters):
                keyword[mid] = max(score, keyword.get(mid, 0.0))
                candidates.setdefault(mid, memory)
    return keyword


def _missed_words(
    plan: QueryPlan,
    index: BM25Index,
    ids: Iterable[str],
    keyword: Mapping[str, float],
    filters: SearchFilters,
    translated: Mapping[str, float] | None,
) -> dict[str, float]:
    """The BM25 of the memories another way brought (relation links, the user's own statements) that the
    keyword channel left below its limit: they still have the words they have."""
    held = index.memories
    unscored = [mid for mid in ids if mid not in keyword and mid in held and passes(held[mid], filters)]
    scores = index.scores_of(plan.keyword_tokens, unscored, weights=translated)
    return {mid: score for mid, score in scores.items() if score > 0}


def _month_seeds(
    asked: tuple[float, float] | None,
    candidates: Mapping[str, Memory],
    keyword: Mapping[str, float],
    cosine: Mapping[str, float],
    limit: int,
) -> list[str]:
    """The candidates written in the time asked about, best first: they rank first (the month-first
    rule), so they seed relation links too (a seed follows document ids only: a few more are cheap)."""
    if not asked:
        return []
    lo, hi = asked
    return sorted(
        (mid for mid, m in candidates.items() if lo <= m.created_at < hi),
        key=lambda mid: (-keyword.get(mid, 0.0), -cosine.get(mid, 0.0)),
    )[:limit]


def _use_bridge(bridge: BridgeChannel | None, rows: BridgeRows | None, language: Lang, wanted: bool) -> bool:
    """Whether the bridge channel takes part (asked for, or needed by the languages), counted."""
    use = bridge is not None and rows is not None and (wanted or needs_bridge(language, rows, bridge.weights))
    if bridge is not None:
        outcome = "fused" if use else ("incomplete" if rows is None else "off")
        metrics.BRIDGE_SEARCHES.labels(outcome).inc()
    return use


class EarlyEmbedding:
    """The query embedded by both models (the bridge's when there is one) while a first search waits
    for the user's index: `vectors(text)` gives them if `text` is what was embedded, else None (the
    caller embeds its own). A failure of the early embedding is the caller's only if it uses it."""

    def __init__(self, text: str, embedder: Embedder, bridge: Embedder | None) -> None:
        self.text = text
        self._task = asyncio.create_task(self._embed(embedder, bridge))

    async def _embed(
        self, embedder: Embedder, bridge: Embedder | None
    ) -> tuple[np.ndarray, np.ndarray | None]:
        if bridge is None:
            return (await embedder.embed([self.text]))[0], None
        qvecs, bvecs = await asyncio.gather(embedder.embed([self.text]), bridge.embed([self.text]))
        return qvecs[0], bvecs[0]

    async def vectors(self, text: str) -> tuple[np.ndarray, np.ndarray | None] | None:
        if text != self.text:
            return None
        return await self._task

    async def settle(self) -> None:
        """Wait for the embedding (its threads run to the end anyway); an unused failure is dropped."""
        try:
            await self._task
        except Exception:  # noqa: BLE001 - the caller embedded its own text, or already saw this error
            log.debug("early query embedding failed", exc_info=True)
