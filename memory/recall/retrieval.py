"""Hybrid recall: dense candidates from Chroma + a BM25 keyword channel, fused and reranked.

    relevance = w_dense·norm(cosine) + w_keyword·norm(bm25)            (min-max over the candidates)
              + name_boost   if the memory's speaker is named in the query
              + doc_boost    if the memory mentions a document type the query asks for (账单 ↔ invoice ↔ bill)
              + link_named_boost if relation memory links it to an entity the query names, by more than
                             the query's own words (memory/recall/links.py); a memory reached from
                             another one gets no boost but a place right after it (`place_linked`)
    score     = relevance · (1 − w_time + w_time · e^(−Δt/τ)·(1+ln(1+importance))/(1+ln 2))

When the query names a month ("我3月提交的报价单", "the quote from March"), candidates written in that
month rank first (a filter that falls back to the rest instead of returning nothing). A memory that
contains what the query says not to suggest ("不要推荐咖啡机", "don't suggest coffee
machines") is ranked below every other candidate. Facts that change (superseded memories, questions about
the present or the past, attributes asked about) are recall/validity.py's.

Recency can take at most `w_time` of a memory's score away (a pure multiplicative decay would make
every memory older than a few τ invisible, however relevant). `w_time` is 0.3 when the query asks about
the present (最近/现在/recently/now/still...) and 0.05 otherwise: both benchmarks ask about old facts,
and 0.05 leaves their recall unchanged while 0.2 already costs some (docs/benchmarks.md has the numbers). Dense candidates that only the keyword channel found get their
cosine from their stored vectors, so both channels score every candidate exactly.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, tzinfo

import numpy as np

from memory.embedding.base import Embedder
from memory.errors import REDIS_UNAVAILABLE
from memory.longterm.chroma import LongTermStore
from memory.longterm.dense_models import DenseModel, DenseModelChanged, DenseModels
from memory.longterm.shared_vectors import SharedVectors
from memory.longterm.versions import UNKNOWN, LtmVersions, observed
from memory.models import Evidence, Memory, RecallRequest, ScoredMemory
from memory.recall import dense_channel
from memory.recall.bilingual import BilingualLexicon
from memory.recall.channels import (
    EarlyEmbedding,
    _evidence,
    _keyword_hits,
    _missed_words,
    _month_seeds,
    _use_bridge,
    bridge_candidates,
)
from memory.recall.cold_start import ClaimLookup, QueryWords, keyword_words, provisional_index
from memory.recall.crosslingual import BridgeChannel
from memory.recall.fusion import (
    DEFAULT_WEIGHTS,
    RankingWeights,
    Scope,
    _asked_span,
    _visible,
    passes,
    rank,
)
from memory.recall.keyword_index import BM25Index, KeywordIndexCache
from memory.recall.links import Link, LinkFinder
from memory.recall.ownership import own_statements
from memory.recall.query import QueryPlan, plan_query
from memory.recall.query_vectors import QueryVectors
from memory.recall.ranking import span_of
from memory.recall.relevance import DEFAULT_MODEL, RelevanceModel
from memory.recall.snapshot import IndexSnapshots
from memory.recall.translation import QueryTranslator, fuse, target_of
from memory.recall.user_index import UserIndexes
from memory.recall.validity import (
    Visible,
    category_statements,
    changed_facts,
    with_asked_changes,
)
from memory.text.language import detect_language
from monitoring import metrics

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SearchIndex:
    """What one search reads: the hot index at its version, the bridge rows read with it on a first
    search here, the user's dense model, the bridge channel taking part, the query's early embedding,
    and whether the index is provisional (a large user this worker is loading: the stores answer)."""

    version: int
    index: BM25Index
    prefetched: dict[str, np.ndarray] | None
    model: DenseModel
    bridge: BridgeChannel | None
    early: EarlyEmbedding | None
    provisional: bool


class HybridRetriever:
    def __init__(
        self,
        store: LongTermStore,
        embedder: Embedder,
        versions: LtmVersions,
        cache: KeywordIndexCache | None = None,
        weights: RankingWeights = DEFAULT_WEIGHTS,
        *,
        shared: SharedVectors | None = None,
        bridge: BridgeChannel | None = None,
        relevance_model: RelevanceModel = DEFAULT_MODEL,
        links: LinkFinder | None = None,
        lexicon: BilingualLexicon | None = None,
        snapshots: IndexSnapshots | None = None,
        translator: QueryTranslator | None = None,
        zone: tzinfo = UTC,
        dense: DenseModels | None = None,
        claims: ClaimLookup | None = None,
        provisional_past: int | None = None,
    ) -> None:
        """`shared`: where query vectors are published for the writer that will store the same text.
        `bridge`: the multilingual channel fused into the ranking (None: MiniLM and BM25 alone).
        `relevance_model`: each hit's calibrated relevance (memory/recall/relevance.py). `links`: relation
        memory's link finder (None: no linked candidates). `lexicon`: translations of the query's words
        for the keyword channel (memory/recall/bilingual.py; None: its own words only). `snapshots`:
        where a user's index is loaded from on a first search here, and saved after a full build
        (memory/recall/snapshot.py; None: built from the store). `translator`: the question in the other
        language (memory/recall/translation.py; None: as asked only). `zone`: the zone a question's days,
        weeks and months are read in (the deployment's `TIME_ZONE`). `dense`: the dense models during a
        switch (memory/longterm/dense_models.py; None: `embedder` embeds every user).
        `provisional_past`: a first search of a user past this many memories starts loading them in the
        background and is answered over a provisional index meanwhile (memory/recall/cold_start.py;
        `claims`: where it looks their claims up); None: it waits (`PROVISIONAL_SEARCHES`)."""
        self.zone = zone
        self.translator = translator
        self.relevance_model = relevance_model
        self.links = links
        self.lexicon = lexicon
        self._bridge = bridge
        self._store = store
        self._shared = shared
        self._embedder = embedder
        self._models = dense or DenseModels(DenseModel("", embedder))
        self._queries = QueryVectors(self._models, shared)
        self._claims = claims
        self.indexes = UserIndexes(
            store,
            versions,
            cache or KeywordIndexCache(),
            snapshots=snapshots,
            bridge=bridge,
            background_past=provisional_past,
        )
        self.cache = self.indexes.cache
        self.weights = weights

    async def bridge_cosine(self, query: str, memories: Sequence[Memory]) -> dict[str, float]:
        """The bridge cosine of `query` with each of `memories`, embedded now: what forget asks of
        memories without a stored bridge vector (warm and cold ones, or a user not yet re-embedded).
        Empty without the bridge channel."""
        if self._bridge is None or not memories:
            return {}
        vectors = await self._bridge.embedder.embed([query, *(m.embed_text for m in memories)])
        q = np.asarray(vectors[0], dtype=np.float32)
        return {m.id: float(np.asarray(vectors[i + 1], dtype=np.float32) @ q) for i, m in enumerate(memories)}

    async def keyword_index(self, user_id: str) -> BM25Index:
        """This user's index at the current version (`UserIndexes.index`)."""
        return await self.indexes.index(user_id)

    async def cached(self, user_id: str, ids: Collection[str]) -> list[Memory]:
        """Those of `ids` this worker's index holds at the user's current version (`UserIndexes.cached`);
        absent ones may still exist: callers ask the store for them."""
        return await self.indexes.cached(user_id, ids)

    async def search(
        self,
        user_id: str,
        request: RecallRequest,
        *,
        hot: bool = True,
        hidden_hot: Collection[str] = frozenset(),
        archived: Sequence[tuple[BM25Index, Collection[str]]] = (),
    ) -> list[ScoredMemory]:
        """The request's best hits (memory/models.py says what each of its fields asks; `as_of` must be
        set). `hot`: search the user's hot memories (the store and the cached in-process index), less
        `hidden_hot`; `archived`: more indexes (warm, cold: memory/archive/search.py), each with the ids
        it must not answer for, whose candidates are ranked together with hot's. `request.every_segment`
        wins over `RankingWeights.one_per_turn`. The request's time zone, else the deployment's (resolved
        here, once): the question's days, weeks and months are read in it."""
        if request.as_of is None:
            raise ValueError("a recall request reaches the retriever with as_of set (MemoryService.recall)")
        w = self.weights
        query, as_of, every_segment = request.query, request.as_of, request.every_segment
        zone = request.zone or self.zone
        scope = Scope(as_of, zone, hot, hidden_hot, archived)
        bridge = self._bridge if hot else None  # the bridge covers hot memories (archived: MiniLM + BM25)
        early: EarlyEmbedding | None = None
        warming: asyncio.Task[None] | None = None
        if hot and self.cache.latest(user_id) is None:
            # a first search here waits for the user's index (a snapshot, or the store): embed the
            # query meanwhile, as planned without the user's names; used if the final plan agrees
            guess = self._guess(query, as_of, zone).semantic_text
            early = EarlyEmbedding(guess, self._embedder, bridge.embedder if bridge is not None else None)
            if self.links is not None:  # the user's relation graph loads beside the index
                warming = asyncio.create_task(self.links.warm(user_id))
        language = detect_language(query)
        target = target_of(language)
        # never for forget (`every_segment`): what is deleted is judged on the user's own words
        translator = self.translator if not every_segment else None
        translation = (
            asyncio.create_task(translator.translate(query, target))
            if translator is not None and self._may_need_translation(user_id, language)
            else None
        )
        try:
            hits = await self._search(user_id, request, scope, early=early, warming=warming)
            # asked while the search ran; waited for only if the user has memories in the other language.
            # The check before the search read this worker's view of the user, which the search has just
            # brought up to date: an index cached empty (before the user's first memory) said "nothing to
            # translate for", so what the search learnt decides again.
            if (
                translation is None
                and translator is not None
                and self._may_need_translation(user_id, language)
            ):
                translation = asyncio.create_task(translator.translate(query, target))
            if translation is not None and self._may_need_translation(user_id, language):
                translated = await translation
                if translated:
                    metrics.QUERY_TRANSLATIONS.labels("translated").inc()
                    # it adds what is said in the other language; the question as asked ranks the rest
                    more = [
                        h
                        for h in await self._search(
                            user_id, replace(request, query=translated), scope, early=None, warming=None
                        )
                        if h.evidence is not None and h.evidence.memory_language == target
                    ]
                    hits = fuse(hits, more, request.top_k, rrf_k=w.translation_rrf_k)
                else:
                    metrics.QUERY_TRANSLATIONS.labels("none").inc()
            return hits
        finally:
            self.indexes.release(user_id)  # a background load this search started (`UserIndexes.loading`)
            for task in (translation, warming):
                if task is not None and not task.done():
                    task.cancel()
                elif task is not None and not task.cancelled():
                    task.exception()  # retrieved: `_linked` reports a failure when it matters
            if early is not None:
                await early.settle()

    def _may_need_translation(self, user_id: str, language: str) -> bool:
        """Whether a translation of a question in `language` could find more: the user's memories (as
        this worker last saw them) are in another language too, or unknown here (no bridge channel)."""
        cached = self.cache.latest(user_id)
        if cached is not None and not len(cached[1]):
            return False
        if self._bridge is None:
            return True
        present = self._bridge.cache.languages(user_id)
        return present is None or bool(present - {language})

    async def _search(
        self,
        user_id: str,
        request: RecallRequest,
        scope: Scope,
        *,
        early: EarlyEmbedding | None,
        warming: asyncio.Task[None] | None,
    ) -> list[ScoredMemory]:
        w = self.weights
        query, top_k, filters, with_bridge = (
            request.query,
            request.top_k,
            request.filters,
            request.with_bridge,
        )
        hidden_hot, archived, as_of = scope.hidden_hot, scope.archived, scope.as_of
        searched = await self._index_for(user_id, request, scope, early)
        version, index, model, bridge = searched.version, searched.index, searched.model, searched.bridge
        prefetched, early, cold = searched.prefetched, searched.early, searched.provisional
        sources: list[tuple[BM25Index, Collection[str]]] = [(index, hidden_hot), *archived]
        if not any(len(i) for i, _ in sources):
            return []
        plan, asked = await self._plan(
            user_id, request, scope, frozenset().union(*(i.names for i, _ in sources))
        )
        language = detect_language(plan.language_text)
        rows = (
            await bridge.cache.rows(user_id, version, index.memories, prefetched)
            if bridge is not None and len(index)
            else None
        )
        self.indexes.save_if_unsaved(user_id, version, index, rows)
        use_bridge = _use_bridge(bridge, rows, language, with_bridge)
        qvec, bvec = await self._queries.vectors(
            user_id, plan.semantic_text, early, bridge, use_bridge, model
        )
        dense = bool(qvec.any())
        dense_hits = (
            await dense_channel.dense_hits(self._store, w, user_id, index, qvec, request, scope, model)
            if dense
            else []
        )
        candidates: dict[str, Memory] = {m.id: m for m, _ in dense_hits}
        cosine: dict[str, float] = {m.id: sim for m, sim in dense_hits}
        translated = self._translated(plan)
        keyword = _keyword_hits(
            plan, sources, translated, filters, max(w.keyword_candidates, top_k), candidates
        )
        view = Visible(sources)  # the user's memories over the tiers searched (facts that change)
        if w.supersession:
            plan = with_asked_changes(plan, view)  # "our deploy window": its statements, as an attribute's
            for m in changed_facts(plan, candidates, view):
                if passes(m, filters):
                    candidates.setdefault(m.id, m)
        # a question about a category of the user's life ("What are my hobbies?") shares no word with
        # the memories stating one ("I play the cello on weekends"): they are candidates (issue 40), as
        # the user's sentences saying what it calls theirs ("my dentist", among others' dentists: #45)
        own = own_statements(plan.possessions, sources)
        for m in [*category_statements(plan.categories, view), *own]:
            if passes(m, filters):
                candidates.setdefault(m.id, m)
        in_month = (
            _month_seeds(asked, candidates, keyword, cosine, 3 * w.link_seeds)
            if self.links is not None
            else []
        )
        keep = _visible(filters, hidden_hot)
        linked = (
            await self._linked(user_id, query, dense_hits, keyword, index, keep, as_of, in_month, warming)
            if not cold
            else {}
        )
        for mid in linked:
            candidates.setdefault(mid, index.memories[mid])
        keyword.update(
            _missed_words(plan, index, [*linked, *(m.id for m in own)], keyword, filters, translated)
        )
        await dense_channel.fill_cosine(
            self._store,
            user_id,
            [mid for mid in candidates if mid not in cosine],
            sources,
            qvec,
            cosine,
            model,
        )
        for mid in candidates:
            cosine.setdefault(mid, 0.0)
            keyword.setdefault(mid, 0.0)
        bridge_cos, cross = (
            bridge_candidates(rows, bvec, bridge, index, candidates, cosine, keyword, qvec, keep, language)
            if bvec is not None and rows is not None and bridge is not None
            else (None, set())
        )
        evidence = _evidence(plan, candidates, sources, cosine, bridge_cos, rows, translated, language)
        clustered = w.clustering and dense and len(candidates) >= 6
        in_cluster = (
            await dense_channel.clusters(self._store, user_id, list(candidates), qvec) if clustered else set()
        )
        return self._rank(
            plan,
            candidates,
            cosine,
            keyword,
            in_cluster,
            request,
            scope,
            memories=view,
            bridge=bridge_cos,
            cross=cross,
            evidence=evidence,
            linked=linked,
            one_per_turn=w.one_per_turn and not request.every_segment,
            asked=asked,
        )

    async def _index_for(
        self, user_id: str, request: RecallRequest, scope: Scope, early: EarlyEmbedding | None
    ) -> SearchIndex:
        """The hot index a search reads and what goes with it (`SearchIndex`)."""
        bridge = self._bridge if scope.hot else None
        large = await self.indexes.loading(user_id) if scope.hot else None
        if large is not None:
            plan = self._guess(request.query, scope.as_of, scope.zone)
            early = early or EarlyEmbedding(plan.semantic_text, self._embedder, None)
            cold = await self._provisional(user_id, request, large, early, plan)
            if cold is not None:  # the load starts once the search has its answer (`search`'s finally)
                return SearchIndex(UNKNOWN, cold[0], None, cold[1], None, early, True)
            await self.indexes.loaded(user_id)  # the model is down: the user's index, once loaded
        return replace(await self._hot_index_and_model(user_id, scope.hot, bridge), early=early)

    def _guess(self, query: str, as_of: float, zone: tzinfo) -> QueryPlan:
        """The query planned without the user's names (before their index is read: the final plan's
        text is usually the same, and its embedding is then reused)."""
        w = self.weights
        return plan_query(
            query,
            now=as_of,
            negation_intent=w.negation_intent,
            changing_facts=w.supersession,
            names_across=w.names_across_scripts,
            zone=zone,
        )

    async def _provisional(
        self, user_id: str, request: RecallRequest, memories: int, early: EarlyEmbedding, plan: QueryPlan
    ) -> tuple[BM25Index, DenseModel] | None:
        """A provisional index for one search of a user this worker loads (memory/recall/cold_start.py);
        None when the embedding model is down or was switched since: the search waits for the index."""
        snapshots = self.indexes.snapshots
        words = QueryWords(tuple(plan.keyword_tokens), self._translated(plan))
        keywords = asyncio.ensure_future(keyword_words(snapshots, user_id, words)) if snapshots else None
        try:
            model = await self._models.for_user(user_id)
            qvec, _ = await self._queries.vectors(user_id, early.text, early, None, False, model)
            if not qvec.any():
                return None
            index = await provisional_index(
                self._store,
                self._claims,
                user_id,
                qvec,
                memories=memories,
                filters=request.filters,
                model=model.tag or None,
                keywords=keywords,
            )
        except DenseModelChanged:  # switched since the query was embedded: the loaded index answers
            return None
        finally:
            if keywords is not None:
                keywords.cancel()  # done by now, unless the search gave up first
        return index, model

    async def _hot_index_and_model(
        self, user_id: str, hot: bool, bridge: BridgeChannel | None
    ) -> SearchIndex:
        """`_hot_index`, and the dense model of the user's vectors at that version (a `SearchIndex`; the
        early embedding is the caller's). During a switch the model is where the user's placement is,
        cached with the version the index was brought to; a placement read anew that saw a later version
        (the user was switched meanwhile: the index holds the other model's vectors) brings the index to
        it first, so a ranking never sees two models."""
        version, index, prefetched = await self._hot_index(user_id, hot, bridge)
        model = await self._models.for_user(user_id)
        for _ in range(2):
            if not self._models.switching or not hot or observed(user_id, 60.0) in (None, version):
                break
            version, index, prefetched = await self._hot_index(user_id, hot, bridge)
            model = await self._models.for_user(user_id)
        return SearchIndex(version, index, prefetched, model, bridge, None, False)

    async def _hot_index(
        self, user_id: str, hot: bool, bridge: BridgeChannel | None
    ) -> tuple[int, BM25Index, dict[str, np.ndarray] | None]:
        """The user's hot index at its version (none when hot is not searched), and on a first search here
        without a snapshot the bridge rows read at the same time."""
        if not hot:
            return UNKNOWN, BM25Index([]), None
        if (
            bridge is not None
            and not bridge.cache.holds(user_id)
            and not await self.indexes.load_snapshot(user_id)
        ):  # first search here, no snapshot: read both at once
            (version, index), prefetched = await asyncio.gather(
                self.indexes.versioned(user_id), bridge.cache.everything(user_id)
            )
            return version, index, prefetched
        version, index = await self.indexes.versioned(user_id)
        return version, index, None

    def _translated(self, plan: QueryPlan) -> dict[str, float] | None:
        """The query's terms in the other language with their weights (the bilingual lexicon), if any."""
        if self.lexicon is None or self.weights.lexicon_weight <= 0:
            return None
        added = self.lexicon.expand(plan.semantic_text, plan.keyword_tokens)
        weight = self.weights.lexicon_weight
        return {t: x * weight for t, x in added.items() if t not in plan.negated_tokens}

    async def _plan(
        self, user_id: str, request: RecallRequest, scope: Scope, names: frozenset[str]
    ) -> tuple[QueryPlan, tuple[float, float] | None]:
        """The query's plan (with the user's `names`) and the time it asks about: a day, week, month or
        period in the request's zone, or the time before or after an event the user told of."""
        w, query, zone = self.weights, request.query, scope.zone
        planned = functools.partial(
            plan_query,
            known_names=names,
            now=scope.as_of,
            negation_intent=w.negation_intent,
            changing_facts=w.supersession,
            names_across=w.names_across_scripts,
            zone=zone,
        )
        plan = planned(query)
        asked = _asked_span(plan, zone)
        if asked is None and plan.anchor is not None and scope.hot:  # "before I moved": dated by the move
            asked = await self._event_span(user_id, plan.anchor, request, scope)
            if asked is not None:  # and the move says when, not what: the ranking reads the rest
                # (a question about the time before keeps asking about the past: what the move
                # superseded is not demoted)
                plan = replace(planned(query.replace(plan.anchor_words, " ")), wants_past=plan.wants_past)
        return plan, asked

    async def _event_span(
        self, user_id: str, anchor: tuple[str, str], request: RecallRequest, scope: Scope
    ) -> tuple[float, float] | None:
        """The time before or after the event a question names ("before I moved", "结婚以后"): dated by
        the memory that tells of the event best, by its event date when it keeps one, else by when it
        was said; that memory counts as inside. None when no memory reaches `anchor_min_relevance`
        (the user never told of it): the question is then ranked on its words alone."""
        rel, clause = anchor
        about = replace(
            request,
            query=clause,
            top_k=1,
            min_relevance=self.weights.anchor_min_relevance,
            with_bridge=False,
            every_segment=False,
        )
        found = await self._search(user_id, about, scope, early=None, warming=None)
        if not found or found[0].relevance < self.weights.anchor_min_relevance:
            return None
        event = found[0].memory
        spans = (span_of(e, scope.zone) for e in event.entities)
        at = min((s[0] for s in spans if s is not None), default=event.created_at)
        return (0.0, at + 1.0) if rel == "before" else (at, math.inf)

    async def _linked(
        self,
        user_id: str,
        query: str,
        dense_hits: Sequence[tuple[Memory, float]],
        keyword: Mapping[str, float],
        index: BM25Index,
        keep: Callable[[Memory], bool],
        as_of: float,
        more_seeds: Sequence[str] = (),
        warming: asyncio.Task[None] | None = None,
    ) -> dict[str, Link]:
        """Relation memory's extra candidates (memory/recall/links.py), hot memories only: those one hop
        from the entities the query names or the best `link_seeds` of each channel name (and of the
        candidates written in the month the query names: `more_seeds`), with the path of each; `warming`:
        the load of the graph the search started (awaited first, so the graph is read once). Relation
        memory being unavailable costs the links, never the search."""
        if self.links is None or not len(index):
            return {}
        n = self.weights.link_seeds
        best_keyword = sorted(keyword, key=lambda mid: -keyword[mid])[:n]
        seeds = list(dict.fromkeys([m.id for m, _ in dense_hits[:n]] + best_keyword + list(more_seeds)))
        try:
            if warming is not None:  # the graph this worker started loading with the search
                await warming
            found = await self.links.linked(user_id, query, seeds, as_of=as_of)
        except REDIS_UNAVAILABLE as exc:
            log.warning("relation links skipped: redis unavailable", extra={"reason": str(exc)})
            return {}
        return {
            mid: link for mid, link in found.items() if mid in index.memories and keep(index.memories[mid])
        }

    def _rank(
        self,
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
    ) -> list[ScoredMemory]:
        """`rank` (memory/recall/fusion.py) with this retriever's weights, bridge weights and model."""
        return rank(
            plan, candidates, cosine, keyword, in_cluster, request, scope,
            memories=memories, bridge=bridge, cross=cross, evidence=evidence, linked=linked,
            one_per_turn=one_per_turn, asked=asked, weights=self.weights,
            bridge_weights=self._bridge.weights if self._bridge is not None else None,
            model=self.relevance_model,
        )  # fmt: skip


__all__ = [
    "HybridRetriever",
    "RankingWeights",
    "Scope",
]  # the ranking's types, where callers always found them
