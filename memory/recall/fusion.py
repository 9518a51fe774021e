"""How recall's candidates are scored and ordered (split from retrieval.py, issue 43). Pure.

The ranking weights, the min-max fusion of the channels, the boosts, the month-first and negation order,
one hit per turn, and linked memories placed after the hit that reached them; the retriever
(retrieval.py) hands `rank` the channels' scores. The formula is retrieval.py's docstring.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, tzinfo

import numpy as np

from memory.models import Evidence, Memory, RecallRequest, ScoreBreakdown, ScoredMemory, SearchFilters
from memory.recall.crosslingual import (
    BridgeWeights,
)
from memory.recall.keyword_index import BM25Index
from memory.recall.links import Link
from memory.recall.ownership import says_own
from memory.recall.query import QueryPlan
from memory.recall.ranking import day_range, month_range, period_range, recency_importance, tells_of
from memory.recall.relevance import RelevanceModel, reaches, relevance_of
from memory.recall.validity import (
    rank_validity,
    states_attribute,
    states_category,
)
from memory.text.language import detect_language
from memory.text.lexicons import DOC_TYPE_ALIASES
from memory.text.time_words import ANSWER_TYPES
from memory.text.tokens import tokenize


@dataclass(frozen=True, slots=True)
class RankingWeights:
    dense: float = 0.5
    keyword: float = 0.5
    # all-MiniLM-L6-v2 is an English model: for Chinese queries the keyword channel leads
    dense_zh: float = 0.3
    keyword_zh: float = 0.7
    name_boost: float = 0.3
    doc_boost: float = 0.1
    answer_type_boost: float = 0.1
    fact_boost: float = 0.0
    time: float = 0.05  # share of the score that recency can take away from an old memory...
    time_recent: float = 0.3  # ...and when the query asks about now/recently/最近
    tau_days: float = 14.0
    dense_candidates: int = 15
    keyword_candidates: int = 30
    clustering: bool = False
    cluster_boost: float = 0.05
    # users with at most this many memories whose index holds every vector get their dense channel from
    # it (exact cosine over its int8 rows, memory/recall/dense_rows.py); larger ones ask Chroma's HNSW
    in_process_dense_max: int = 100_000
    # facts that change (docs/memory.md#facts-that-change) and negation read for its intent
    supersession: bool = True
    superseded_factor: float = 0.5  # a superseded memory's score, for questions not about the past
    negation_intent: bool = True
    checked_boost: float = 0.25  # the user's own statement about what a check asks ("…, right?")
    attribute_boost: float = 0.4  # a memory stating the attribute asked about ("我以前开什么车？")
    category_boost: float = 0.4  # a memory stating a value of the category asked about ("我有什么爱好？")
    own_boost: float = 0.3  # the user saying what the question calls theirs ("my dentist": ownership.py)
    # relation memory (issue 26): memories one hop from the query's or the best candidates' entities
    link_boost: float = 0.0  # reached from another memory (a seed's document id, a chain): placed instead
    link_named_boost: float = 0.35  # one hop from an entity the question itself names (aliases resolved)
    link_seeds: int = 3  # the best of each channel whose document ids are followed
    # a memory reached from another one (two hops from the question's entity, or a seed's document id)
    # enters the top k right after the memory it was reached from, at most this many per search
    link_placed: int = 2
    # long turns (issue 29): a message split into segments answers once, by its best segment, so the
    # top k holds k turns instead of several pieces of one
    one_per_turn: bool = True
    # the bilingual lexicon (issue 28, memory/recall/bilingual.py): a query term's translations count
    # this much of a term the user wrote in the keyword channel
    lexicon_weight: float = 0.5
    # the month-first rule also ranks first a memory whose event date (resolved at write time from the
    # message's own time: "上周五", "last month") is in the month asked about
    event_dates: bool = True
    # a speaker named in the other script (Caroline / 卡罗琳) is named (memory/text/transliteration.py)
    names_across_scripts: bool = True
    # query translation (memory/recall/translation.py): the question is searched in the other language
    # too when the user has memories in it; the two hit lists fused by rank (k of reciprocal rank fusion)
    translation_rrf_k: int = 10
    # a question naming a time by another event ("before I moved", "结婚以后"): the memory telling of
    # the event dates it when its relevance to the event's words reaches this
    anchor_min_relevance: float = 0.3


DEFAULT_WEIGHTS = RankingWeights()


def _minmax(values: dict[str, float]) -> dict[str, float]:
    """Min-max over the candidates; when they are all equal, 1 if they matched at all, else 0: a
    channel that found nothing (every BM25 score 0) contributes nothing, not a 0.5 floor."""
    if not values:
        return {}
    lo, hi = min(values.values()), max(values.values())
    if hi - lo < 1e-12:
        return dict.fromkeys(values, 1.0 if hi > 0 else 0.0)
    return {k: (v - lo) / (hi - lo) for k, v in values.items()}


def passes(m: Memory, f: SearchFilters) -> bool:
    return (
        (f.session_id is None or m.session_id == f.session_id)
        and (f.exclude_session_id is None or m.session_id != f.exclude_session_id)
        and (f.topic is None or m.topic == f.topic)
        and (f.since is None or m.created_at >= f.since)
        and (f.until is None or m.created_at <= f.until)
        and (f.ids is None or m.id in f.ids)
    )


def _visible(f: SearchFilters, hidden: Collection[str]) -> Callable[[Memory], bool]:
    return lambda m: passes(m, f) and m.id not in hidden


def mentions_doc_type(m: Memory, doc_types: Sequence[str]) -> bool:
    low = m.content.lower()
    return any(
        (alias in m.content) if re.search(r"[\u4e00-\u9fff]", alias) else (alias in low)
        for d in doc_types
        for alias in DOC_TYPE_ALIASES[d]
    )


def cluster_members(vectors: np.ndarray, query: np.ndarray, k: int = 3, iterations: int = 10) -> np.ndarray:
    """k-means (k ≤ 3) over candidate vectors; a boolean mask of the cluster nearest the query."""
    n = len(vectors)
    k = min(k, max(1, n // 3))
    if k <= 1:
        return np.ones(n, dtype=bool)
    # deterministic init: the most query-similar vector, then farthest-point
    centroids = [vectors[int(np.argmax(vectors @ query))]]
    for _ in range(1, k):
        dist = np.min([1 - vectors @ c for c in centroids], axis=0)
        centroids.append(vectors[int(np.argmax(dist))])
    c = np.stack(centroids)
    labels = np.zeros(n, dtype=int)
    for _ in range(iterations):
        labels = np.argmax(vectors @ c.T, axis=1)
        for j in range(k):
            members = vectors[labels == j]
            if len(members):
                centre = members.mean(axis=0)
                c[j] = centre / (np.linalg.norm(centre) or 1.0)
    best = int(np.argmax(c @ query))
    return np.asarray(labels == best)


def best_per_turn(ranked: Sequence[ScoredMemory]) -> list[ScoredMemory]:
    """The best-ranked memory of each source message, in rank order: the segments of one long message
    share its message ids, and the first of them found stands for the turn (the others would repeat
    it in the top k and crowd out other turns). Memories without message ids are each their own."""
    seen: set[tuple[str, ...]] = set()
    out: list[ScoredMemory] = []
    for s in ranked:
        key = s.memory.source_message_ids or (s.memory.id,)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def place_linked(
    ranked: Sequence[ScoredMemory],
    linked: Mapping[str, Link],
    *,
    top_k: int,
    cap: int,
    pool: Sequence[ScoredMemory] = (),
) -> list[ScoredMemory]:
    """Relation memory's second hop, after the evidence it hangs off: a memory reached from another
    one (`Link.via`) that ranks below the top k (or in its last `cap` places, which the placements
    would push out) enters it right after that memory (after any placed there before it), at most
    `cap` of them, those reached from the best-ranked memories first. The channels' own order is kept
    otherwise: a link never lifts a neighbour above the memory that led to it, and at most `cap` of
    the channels' top k make room."""
    out = list(ranked)
    kept = {s.memory.id for s in out}
    extra = [s for s in pool if s.memory.id not in kept and s.memory.id in linked and linked[s.memory.id].via]
    out += extra  # `pool`: the candidates before the relevance floor; placed, or dropped again below
    rank = {s.memory.id: i + (top_k if i >= len(kept) else 0) for i, s in enumerate(out)}
    wanted = sorted(
        (rank[link.via], rank[mid], mid)
        for mid, link in linked.items()
        if link.via
        and mid in rank
        and link.via in rank
        and rank[link.via] < top_k - 1
        and rank[mid] >= top_k - cap  # below the top k, or where the placements would push it out
        and rank[mid] > rank[link.via] + 1
    )
    placed: set[str] = set()
    for _, _, mid in wanted:
        if len(placed) >= cap:
            break
        via = linked[mid].via
        at = next(i for i, s in enumerate(out) if s.memory.id == via)
        if at >= top_k - 1:
            continue  # pushed down by an earlier placement
        item = out.pop(next(i for i, s in enumerate(out) if s.memory.id == mid))
        at += 1
        while at < len(out) and out[at].memory.id in placed and linked[out[at].memory.id].via == via:
            at += 1
        out.insert(at, item)
        placed.add(mid)
    dropped = {s.memory.id for s in extra} - placed
    return [s for s in out if s.memory.id not in dropped] if dropped else out


@dataclass(frozen=True, slots=True)
class Scope:
    """A request's "now" and time zone, resolved once in `HybridRetriever.search`, and what the search
    covers: hot (less `hidden_hot`) and the `archived` indexes (warm, cold)."""

    as_of: float
    zone: tzinfo = UTC
    hot: bool = True
    hidden_hot: Collection[str] = frozenset()
    archived: Sequence[tuple[BM25Index, Collection[str]]] = ()


def _asked_span(plan: QueryPlan, zone: tzinfo = UTC) -> tuple[float, float] | None:
    """The time the question names, [start, end) epoch seconds: a day before today ("昨天", "on May 23,
    2023", "last Friday"), last week (上周), a month ("3月", "in May 2023"), else a season, a year or a
    range ("去年夏天", "last year", "2019年到2021年"), or the time before, after or since one ("before
    2020", "5月以来"): the month-first rule ranks first what was written in it or tells of an event in
    it. Days, weeks and months are the calendar's in `zone`, the one event dates were kept in at write."""
    if plan.day:  # a real day: the planner keeps only days that parse
        span = day_range(plan.day, zone)
    elif plan.week:  # its seven days, from Monday's midnight
        span = day_range(plan.week, zone, days=7)
    elif plan.month:
        span = month_range(plan.month, zone)
    elif plan.period:
        span = period_range(plan.period, zone)
    else:
        return None
    if plan.bound == "before":
        return 0.0, span[0]
    if plan.bound == "after":
        return span[1], math.inf
    if plan.bound == "since":
        return span[0], math.inf
    return span


def rank(
    plan: QueryPlan,
    candidates: dict[str, Memory],
    cosine: dict[str, float],
    keyword: dict[str, float],
    in_cluster: set[str],
    request: RecallRequest,
    scope: Scope,
    *,
    memories: Mapping[str, Memory] | None = None,
    bridge: dict[str, float] | None = None,
    cross: set[str] | None = None,
    evidence: Mapping[str, Evidence] | None = None,
    linked: Mapping[str, Link] | None = None,
    one_per_turn: bool = False,
    asked: tuple[float, float] | None = None,
    weights: RankingWeights,
    bridge_weights: BridgeWeights | None = None,
    model: RelevanceModel,
) -> list[ScoredMemory]:
    """`memories`: the user's whole index, where superseded candidates find their successors;
    `bridge`: the bridge cosine of every candidate when that channel takes part; `cross`: the
    candidates in another language than the query (ranked by the bridge and keywords alone);
    `evidence`: each candidate's absolute channel measures, for its relevance (none: relevance 0);
    `min_relevance`: candidates below it are dropped before the top k are taken; `asked`: the time
    the question names (a month, a period, before or after an event), ranked first."""
    w = weights
    as_of, top_k, min_relevance, zone = scope.as_of, request.top_k, request.min_relevance, scope.zone
    zh = detect_language(plan.language_text) == "zh"
    w_dense, w_keyword = (w.dense_zh, w.keyword_zh) if zh else (w.dense, w.keyword)
    dense_n, keyword_n = _minmax(cosine), _minmax(keyword)
    bw = bridge_weights
    bridge_n = _bridge_norm(bridge, cross, bw)
    share = (bw.zh if zh else bw.en) if bw is not None else 0.0
    # a Chinese query keeps this share of MiniLM's weight on memories the bridge scores
    w_dense_bridged = w_dense * bw.minilm_zh if bw is not None and zh else w_dense
    cross = cross or set()
    names = {n.lower() for n in plan.names}
    scored: list[ScoredMemory] = []
    demoted: set[str] = set()
    in_month: set[str] = set()
    for mid, m in candidates.items():
        boosts = _boosts(m, plan, w, names, cluster=mid in in_cluster, link=(linked or {}).get(mid))
        if asked and _in_asked(
            m, asked, w, zone, via=candidates.get(linked[mid].via) if linked and mid in linked else None
        ):
            in_month.add(mid)
        words = set(tokenize(m.content)) if plan.negated_tokens or plan.checked_tokens else set()
        negated = bool(plan.negated_tokens and plan.negated_tokens & words)
        if plan.checked_tokens and m.source == "user" and plan.checked_tokens & words:
            # a check ("I don't like X, right?"): the user's own words about X come first
            boosts["checked"] = w.checked_boost * len(plan.checked_tokens & words) / len(plan.checked_tokens)
        dense, kw = w_dense * dense_n[mid], w_keyword * keyword_n[mid]
        relevance = dense + kw
        via_bridge = 0.0  # the bridge's part, for the breakdown (dense and kw are scaled to match)
        similarity = cosine[mid]
        if bridge_n is not None and bridge is not None and bw is not None and mid in bridge:
            if mid in cross:  # MiniLM and BM25 cannot cross a language; keywords still match names
                dense, kw, via_bridge = 0.0, bw.cross_keyword * keyword_n[mid], bw.cross * bridge_n[mid]
                relevance = via_bridge + kw
                similarity = bridge[mid]
            else:
                dense = w_dense_bridged * dense_n[mid]
                via_bridge = share * bridge_n[mid]
                relevance = (1 - share) * (dense + kw) + via_bridge
                dense, kw = (1 - share) * dense, (1 - share) * kw
        for boost in boosts.values():  # in the order they always were added (same floats)
            relevance += boost
        recency = recency_importance(m.created_at, m.importance or 0.0, as_of=as_of, tau_days=w.tau_days)
        time_weight = w.time_recent if plan.wants_recent else w.time
        factor = 1 - time_weight + time_weight * recency
        score = relevance * factor
        breakdown = ScoreBreakdown(
            dense,
            kw,
            keyword[mid],
            boosts,
            recency,
            factor,
            demoted=negated,
            in_month=mid in in_month,
            bridge=via_bridge,
            links=(linked[mid].path,) if linked and mid in linked else (),
        )
        ev = (evidence or {}).get(mid)
        if ev is not None:
            ev = replace(ev, attribute="attribute" in boosts, category="category" in boosts, fused=relevance)
        scored.append(
            ScoredMemory(
                memory=m,
                score=score,
                similarity=similarity,
                breakdown=breakdown,
                relevance=relevance_of(ev, model) if ev is not None else 0.0,
                evidence=ev,
            )
        )
        if negated:
            demoted.add(mid)
    if w.supersession and memories is not None:
        scored = rank_validity(scored, memories, plan, factor=w.superseded_factor, as_of=as_of)
    # what the user said not to suggest goes below everything else, whatever its score; when the
    # query names a month ("我3月提交的报价单"), what was written in that month comes first
    scored.sort(key=lambda s: (s.memory.id not in demoted, s.memory.id in in_month, s.score), reverse=True)
    pool = scored
    if min_relevance > 0:
        scored = [
            s
            for s in scored
            if s.evidence is not None and reaches(s.evidence, s.relevance, min_relevance, plan.text)
        ]
    if one_per_turn:
        scored = best_per_turn(scored)
    if linked and w.link_placed > 0:
        # a memory reached from a hit is relevant through it, whatever its own words (the floor
        # is about the words): it may be placed even when the floor left it out
        scored = place_linked(scored, linked, top_k=top_k, cap=w.link_placed, pool=pool)
    return scored[:top_k]


def _boosts(
    m: Memory, plan: QueryPlan, w: RankingWeights, names: set[str], *, cluster: bool, link: Link | None
) -> dict[str, float]:
    """A candidate's boosts before the check's, in the order they always were added (same floats)."""
    boosts: dict[str, float] = {}
    if m.name and m.name.lower() in names:
        boosts["name"] = w.name_boost
    if plan.doc_types and mentions_doc_type(m, plan.doc_types):
        boosts["doc_type"] = w.doc_boost
    if any(ANSWER_TYPES[t][1].search(m.content) for t in plan.answer_types):
        boosts["answer_type"] = w.answer_type_boost
    if m.tier == "fact":
        boosts["fact"] = w.fact_boost
    if w.supersession and plan.attributes and states_attribute(m, plan.attributes):
        boosts["attribute"] = w.attribute_boost
    if plan.categories and states_category(m, plan.categories):
        boosts["category"] = w.category_boost
    if plan.possessions and says_own(m, plan.possessions):
        boosts["own"] = w.own_boost
    if cluster:  # a boost, never a filter: multi-evidence answers span clusters
        boosts["cluster"] = w.cluster_boost
    if link is not None:  # relation memory: linked to the question's entities
        boosts["link"] = 0.0 if link.echo else w.link_named_boost if not link.via else w.link_boost
    return boosts


def _in_asked(
    m: Memory, asked: tuple[float, float], w: RankingWeights, zone: tzinfo, *, via: Memory | None
) -> bool:
    """Written in the period asked about, or telling of an event in it ("上周五…", issue 28), or reached
    by a relation link from a memory written in it (ranked with it)."""
    if asked[0] <= m.created_at < asked[1] or (w.event_dates and tells_of(m.entities, asked, zone)):
        return True
    return via is not None and asked[0] <= via.created_at < asked[1]


def _bridge_norm(
    bridge: dict[str, float] | None, cross: set[str] | None, bw: BridgeWeights | None
) -> dict[str, float] | None:
    """The bridge cosines min-max normalised, the top of the scale the best cosine or `full_match`,
    whichever is higher (a search whose best bridge match is weak gives it part of the share); when
    every candidate has the same cosine the scale starts at the match floor. An unmatched bridge (below
    its floor) adds nothing."""
    if not bridge:
        return None
    if bw is None:
        return _minmax(bridge)
    floor = {True: bw.match_floor_cross, False: bw.match_floor}
    lo, best = min(bridge.values()), max(bridge.values())
    if best - lo < 1e-12:  # one candidate, or all alike: from the floor, not from themselves
        lo = min(lo, *floor.values())
    hi = max(best, bw.full_match)
    other = cross or set()
    if hi - lo < 1e-12:  # as `_minmax` gives equal values
        return {mid: 1.0 if c >= floor[mid in other] else 0.0 for mid, c in bridge.items()}
    return {mid: (c - lo) / (hi - lo) if c >= floor[mid in other] else 0.0 for mid, c in bridge.items()}
