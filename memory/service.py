"""The long-term memory use cases: ingest messages, search, list, delete.

Two pipelines share this interface:
- `hybrid` (default): the write policy (cleaning, PII redaction, importance/anchors, de-duplication)
  and hybrid recall (dense + BM25 keyword channel, reranked with a time blend);
- `naive`: the foundation's pipeline, kept as the benchmark baseline: every message one memory as
  written, ranked by cosine similarity alone.
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from datetime import tzinfo
from typing import Literal

from memory.archive.search import TierChoice, TieredHits, TieredSearch
from memory.archive.tiers import TIERS
from memory.archive.view import ArchivedTiers
from memory.embedding.base import Embedder
from memory.errors import REDIS_UNAVAILABLE, ForgetNotConfirmed, MemoryNotFound
from memory.longterm.chroma import LongTermStore
from memory.longterm.history import SYSTEM, Actor, MemoryHistory
from memory.longterm.ids import content_hash, memory_id_for
from memory.longterm.restorable import How, RestorableBin
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.models import (
    ArchiveTier,
    Evidence,
    Memory,
    MemoryPage,
    Message,
    RecallRequest,
    ScoredMemory,
    SearchFilters,
    SortOrder,
)
from memory.models import ForgetMatch as ForgetMatch  # where app/http/forget_schemas.py finds it
from memory.models import ForgetResult as ForgetResult
from memory.outbox.stream import Outbox, OutboxEntry
from memory.recall.bilingual import cc_cedict
from memory.recall.keyword_index import coverage
from memory.recall.relevance import (
    DEFAULT_MODEL,
    Lexicon,
    RelevanceModel,
    forget_query,
    forget_terms,
    matched_channels,
    relevance_of,
    said_by,
)
from memory.recall.retrieval import HybridRetriever
from memory.recall.validity import current_again
from memory.relations.store import RelationStore
from memory.text.language import detect_language
from memory.text.tokens import tokenize
from memory.text.zones import zone_of
from memory.write.policy import WritePipeline, WriteRequest
from memory.write.scoring import SkipReason
from monitoring import metrics

log = logging.getLogger(__name__)
Clock = Callable[[], float]
Pipeline = Literal["naive", "hybrid"]

# forget by meaning (docs/memory.md#forget-by-meaning): the relevance a memory needs by default, how
# many memories one call may delete without `expected_count`, and how many candidates are scored
FORGET_MIN_RELEVANCE = 0.7
FORGET_CAP = 10
FORGET_SCAN = 2000


class MemoryService:
    def __init__(
        self,
        store: LongTermStore,
        embedder: Embedder,
        *,
        writer: WritePipeline | None = None,
        retriever: HybridRetriever | None = None,
        versions: LtmVersions | None = None,
        tombstones: Tombstones | None = None,
        outbox: Outbox | None = None,
        clock: Clock = time.time,
        archive: ArchivedTiers | None = None,
        tiered: TieredSearch | None = None,
        history: MemoryHistory | None = None,
        relations: RelationStore | None = None,
        restorable: RestorableBin | None = None,
        relevance_model: RelevanceModel = DEFAULT_MODEL,  # the naive pipeline's (hybrid: the retriever's)
    ) -> None:
        """Without `writer`/`retriever` the service runs the naive pipeline. With `tombstones` and
        `outbox`, deleted memories are also scrubbed from pending outbox entries and never rewritten.
        With `archive` (and `tiered`, its search), list, search, delete and forget cover warm and cold.
        With `relations`, what each written memory says of entities is indexed (memory/relations), and a
        deleted memory's relations go with it. With `restorable`, what delete and forget remove stays
        restorable for its grace period (memory/longterm/restorable.py)."""
        self.relations = relations
        self.restorable = restorable
        self._store = store
        self._embedder = embedder
        self._writer = writer
        self._retriever = retriever
        self._versions = versions
        self._tombstones = tombstones
        self._outbox = outbox
        self._clock = clock
        self._archive = archive
        self._tiered = tiered
        self._history = history
        self._model = retriever.relevance_model if retriever is not None else relevance_model

    @property
    def pipeline(self) -> Pipeline:
        return "hybrid" if self._writer is not None else "naive"

    def write_lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[object]:
        """The lock every long-term write of this user holds (none with the naive pipeline)."""
        if self._writer is None:
            return contextlib.nullcontext()
        return self._writer.user_lock(user_id)

    async def ingest(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        previous: Sequence[Message] = (),
        *,
        issued_at: float | None = None,
        zone: tzinfo | None = None,
    ) -> list[Memory]:
        """Store the messages; returns once the written memories are searchable. `previous` are the
        messages just before these (context, and the answer a leading confirmation refers to);
        `issued_at` is when the write was asked for (see `WritePipeline.write`); `zone`: the user's
        time zone, when the request named one (relative dates are resolved in it)."""
        if self._writer is not None:
            # every worker's cached keyword index (this one's too) catches up from the change log that
            # the write appended with its version: no rebuild, only the new memories are tokenised
            written = await self._writer.write(
                user_id, session_id, messages, previous, issued_at=issued_at, zone=zone
            )
            await self.index_relations(user_id, written)
            return written
        now = self._clock()
        memories = [
            Memory(
                id=memory_id_for(user_id, session_id, m),
                user_id=user_id,
                content=m.content.strip(),
                created_at=m.timestamp if m.timestamp is not None else now,
                session_id=session_id,
                source=m.role,
                content_hash=content_hash(m.content),
                name=m.name,
                source_message_ids=(m.id,) if m.id is not None else (),
            )
            for m in messages
        ]
        if not memories:
            return []
        vectors = await self._embedder.embed([m.content for m in memories])
        await self._store.upsert(memories, vectors)
        return memories

    def skip_reason(self, message: Message) -> SkipReason | None:
        """Why the write policy makes no memory of this message (small talk, a question that only
        asks), or None; always None for the naive pipeline, which stores every message."""
        return self._writer.skip_reason(message) if self._writer is not None else None

    async def ingest_entries(self, entries: Sequence[OutboxEntry]) -> None:
        """Outbox handler, at most one entry per user: one batched write (idempotent, because chat
        turns and imported messages carry message ids)."""
        if self._writer is None:
            for e in entries:
                await self.ingest(e.user_id, e.session_id, e.messages, e.previous, issued_at=e.enqueued_at)
            return
        written = await self._writer.write_many(
            _write_requests(entries),
            judged=True,  # off the request path: the supersession judge may be asked
        )
        for e, memories in zip(entries, written, strict=True):
            await self.index_relations(e.user_id, memories)

    async def warm_entries(self, entries: Sequence[OutboxEntry]) -> None:
        """The outbox writer's look-ahead: embed what these entries (an import's next round) will
        store while the current round is stored (`WritePipeline.warm`); nothing is written."""
        if self._writer is not None and entries:
            await self._writer.warm(_write_requests(entries))

    async def index_relations(self, user_id: str, memories: Sequence[Memory]) -> None:
        """Relation memory's one hook on the write path, after the upsert (and after an edit of the
        content): the memories are stored whatever happens here; a Redis failure costs their links
        (logged), never the write."""
        if self.relations is None or not memories:
            return
        try:
            await self.relations.index(user_id, memories)
        except REDIS_UNAVAILABLE as exc:
            log.warning(
                "relations not indexed: redis unavailable",
                extra={"memories": len(memories), "reason": str(exc)},
            )

    def now(self) -> float:
        """The service's clock (epoch seconds)."""
        return self._clock()

    async def profile_summary(self, user_id: str, language: str) -> str:
        """The user's profile in one line of their language ("职业：护士；目标：备考雅思"), for the chat
        prompt; "" while relation memory is off or the profile is empty, and when Redis cannot answer
        (the turn goes on without it)."""
        if self.relations is None:
            return ""
        try:
            graph = await self.relations.graph(user_id)
        except REDIS_UNAVAILABLE as exc:
            log.warning("profile left out of the prompt", extra={"reason": type(exc).__name__})
            return ""
        return graph.profile().compact(zh=language == "zh")

    async def tagged_ids(self, user_id: str, wanted: Sequence[tuple[str, str]]) -> frozenset[str]:
        """The memories stating every (category, value key) of `wanted` (profile tags, AND); none while
        relation memory is off (nothing is tagged then)."""
        if self.relations is None:
            return frozenset()
        return frozenset((await self.relations.graph(user_id)).tagged(wanted))

    async def backfill_claims(self, user_id: str) -> int:
        """Facts that change for memories stored before them (WritePipeline.backfill_claims)."""
        if self._writer is None:
            return 0
        changed = await self._writer.backfill_claims(user_id)
        if changed:
            self._forget_cached_index(user_id)
        return changed

    async def search(
        self,
        user_id: str,
        query: str,
        *,
        top_k: int = 5,
        filters: SearchFilters | None = None,
        as_of: float | None = None,
        min_relevance: float = 0.0,
    ) -> list[ScoredMemory]:
        """Best `top_k` memories for `query` whose relevance reaches `min_relevance`: `recall` for a
        caller without a request of its own (the deployment's time zone, hot + warm)."""
        request = RecallRequest(
            query, top_k=top_k, filters=filters or SearchFilters(), as_of=as_of, min_relevance=min_relevance
        )
        return (await self.recall(user_id, request)).hits

    async def recall(self, user_id: str, request: RecallRequest) -> TieredHits:
        """The request's hits, saying which tiers were searched and why (memory/archive/search.py): hot
        + warm by default, cold when `request.tiers` names it or hot + warm found nothing relevant."""
        request = request.at(self._clock())
        with metrics.RETRIEVAL_DURATION.labels(self.pipeline).time():
            if self._tiered is not None and self._retriever is not None:
                return await self._tiered.search(user_id, request)
            hits = await self._search(user_id, request)
            return TieredHits(hits, TierChoice(("hot",), "default", "no archive configured"))

    async def _search(self, user_id: str, request: RecallRequest) -> list[ScoredMemory]:
        """The hot tier alone: the hybrid retriever, else the naive pipeline (`request.as_of` is set)."""
        if self._retriever is not None:
            return await self._retriever.search(user_id, request)
        query, top_k, filters, min_relevance = (
            request.query,
            request.top_k,
            request.filters,
            request.min_relevance,
        )
        vectors = await self._embedder.embed([query])
        hits = await self._store.query(user_id, vectors[0].tolist(), n_results=top_k, filters=filters)
        language = detect_language(query)
        words = tokenize(query)
        ranked = []
        for m, sim in hits:
            # one channel ranks (the cosine); relevance also reads the share of the question's words the
            # memory holds (every word weighs the same: no index here), as the calibration expects: for
            # Chinese it gives MiniLM's cosine no weight, so without it no Chinese memory passed the floor
            covered, _ = coverage(words, set(tokenize(m.embed_text)), (), {}, 1.0)
            ev = Evidence(language, detect_language(m.content), cosine=sim, coverage=covered, bridge=None)
            ranked.append(
                ScoredMemory(
                    memory=m, score=sim, similarity=sim, relevance=relevance_of(ev, self._model), evidence=ev
                )
            )
        ranked.sort(key=lambda s: s.score, reverse=True)
        return [h for h in ranked if h.relevance >= min_relevance][:top_k]

    async def list(
        self,
        user_id: str,
        *,
        limit: int,
        offset: int,
        sort: SortOrder,
        topic: str | None = None,
        session_id: str | None = None,
        source: str | None = None,
        current_only: bool = False,
        tier: str | None = None,
        since: float | None = None,
        until: float | None = None,
        archive_tier: ArchiveTier | None = None,
        only: Collection[str] | None = None,
    ) -> MemoryPage:
        """`tier`: the write policy's fact/episodic; `archive_tier`: hot, warm or cold (default: all);
        `current_only`: without the memories a newer one superseded (whose successor still exists);
        `only`: these memories alone (the ones profile tags select)."""
        every = await self._headers(user_id, TIERS)
        ids = {m.id for m in every}
        headers = [
            m
            for m in (every if archive_tier is None else [m for m in every if m.archive_tier == archive_tier])
            if (topic is None or m.topic == topic)
            and (session_id is None or m.session_id == session_id)
            and (source is None or m.source == source)
            and not (current_only and m.superseded_by in ids)
            and (tier is None or m.tier == tier)
            and (since is None or m.created_at >= since)
            and (until is None or m.created_at <= until)
            and (only is None or m.id in only)
        ]
        if sort == "importance":
            headers.sort(key=lambda m: (m.importance or 0.0, m.created_at), reverse=True)
        else:
            headers.sort(key=lambda m: (m.created_at, m.id), reverse=True)
        chosen = headers[offset : offset + limit]
        hot_ids = [m.id for m in chosen if m.archive_tier == "hot"]
        full = {m.id: m for m in await self._store.get(user_id, ids=hot_ids)} if hot_ids else {}
        full.update({m.id: m for m in chosen if m.archive_tier != "hot"})  # archived headers are whole
        items = [current_again(full[m.id], ids) for m in chosen if m.id in full]
        return MemoryPage(total=len(headers), items=items)

    async def session_counts(self, user_id: str) -> dict[str, int]:
        """How many memories (every archive tier) came from each of the user's sessions."""
        return dict(Counter(m.session_id for m in await self._headers(user_id, TIERS)))

    async def counts(self, user_id: str) -> tuple[dict[str, int], dict[str, int]]:
        """How many memories the user has in each archive tier (hot, warm, cold) and of each kind (fact,
        episodic, `unclassified` before the write policy's stage): what an erase would delete."""
        every = await self._headers(user_id, TIERS)
        tiers: dict[str, int] = dict.fromkeys(TIERS, 0)
        for m in every:
            tiers[m.archive_tier] += 1
        return tiers, dict(Counter(m.tier or "unclassified" for m in every))

    async def _headers(self, user_id: str, tiers: Collection[ArchiveTier]) -> builtins.list[Memory]:
        """The user's memories in `tiers`, each id once (a move in progress answers from one tier);
        hot without content, warm and cold with it."""
        if self._archive is None:
            return await self._store.get(user_id, include_content=False) if "hot" in tiers else []
        snap = await self._archive.snapshot(user_id)
        out: builtins.list[Memory] = []
        if "hot" in tiers:
            hidden = snap.hidden("hot")
            out += [m for m in await self._store.get(user_id, include_content=False) if m.id not in hidden]
        return out + await self._archive.memories(user_id, snap, tiers)

    async def get(self, user_id: str, ids: Sequence[str]) -> builtins.list[Memory]:
        """The user's memories with these ids (the ones that exist, in any tier), in the order asked."""
        found = {m.id: m for m in await self._store.get(user_id, ids=list(ids))} if ids else {}
        rest = {i for i in ids if i not in found}
        if rest and self._archive is not None:
            archived = await self._headers(user_id, ("warm", "cold"))
            found.update({m.id: m for m in archived if m.id in rest})
        return [found[i] for i in ids if i in found]

    async def delete(self, user_id: str, memory_id: str, *, actor: Actor = SYSTEM) -> None:
        found = await self._retriever.cached(user_id, [memory_id]) if self._retriever is not None else []
        if not found:
            found = await self._store.get(user_id, ids=[memory_id], include_content=False)
        if not found and self._archive is not None:
            found = [m for m in await self._headers(user_id, ("warm", "cold")) if m.id == memory_id]
        if not found:
            await self._version_again_if_buried(user_id, memory_id)
            raise MemoryNotFound(memory_id)
        await self._remove(user_id, found, actor, how="deleted")

    async def _version_again_if_buried(self, user_id: str, memory_id: str) -> None:
        """A delete retried after a 503 finds its memory gone (hidden or purged) while the version that
        tells other workers may never have been recorded: record it now (and the content-free history a
        delete leaves, if that step failed too), then answer 404 as usual."""
        if self._tombstones is None or self._versions is None:
            return
        if memory_id in await self._tombstones.buried(user_id, [memory_id]):
            await self._versions.bump(user_id, deleted=[memory_id])
            if self._history is not None:
                events = await self._history.recorded(user_id, memory_id)
                if not events or events[-1].kind != "deleted":
                    await self._history.deleted(user_id, [memory_id], SYSTEM)

    async def forget(
        self,
        user_id: str,
        *,
        topic: str | None = None,
        session_id: str | None = None,
        before: float | None = None,
        after: float | None = None,
        query: str | None = None,
        min_relevance: float = FORGET_MIN_RELEVANCE,
        dry_run: bool = False,
        expected_count: int | None = None,
        cap: int = FORGET_CAP,
        actor: Actor = SYSTEM,
    ) -> ForgetResult:
        """Delete (or, with `dry_run`, only name) the memories matching every given criterion: topic,
        session, time range, and meaning, and the older memories they superseded (forgetting where I
        live forgets where I lived too). By meaning, a memory is chosen when its calibrated relevance
        to `query` (memory/recall/relevance.py, "forget"/"忘掉" and the like taken out of the query)
        reaches `min_relevance` *and* at least two channels matched it on their own (so never one
        channel, never the cross-lingual bridge alone). Without a dry run, more than `cap` memories are
        deleted only when `expected_count` says exactly how many (the dry run's count); a given
        `expected_count` that differs from the count deletes nothing either (ForgetNotConfirmed)."""
        every = await self._headers(user_id, TIERS)
        chosen = [
            m
            for m in every
            if (topic is None or m.topic == topic)
            and (session_id is None or m.session_id == session_id)
            and (before is None or m.created_at < before)
            and (after is None or m.created_at > after)
        ]
        matches: dict[str, ForgetMatch] = {m.id: ForgetMatch(m.id) for m in chosen}
        if query is not None and matches:
            # the search sees what the other criteria let through (its time bounds are inclusive: a
            # superset, narrowed to `matches` after)
            filters = SearchFilters(session_id=session_id, topic=topic, since=after, until=before)
            matches = await self._by_meaning(
                user_id, query, matches, min_relevance=min_relevance, filters=filters, scan=len(every)
            )
        if matches:
            for mid in _with_predecessors(every, set(matches)) - set(matches):
                successor = next(m.superseded_by for m in every if m.id == mid)
                matches[mid] = ForgetMatch(mid, superseded_by=successor)
        ids = sorted(matches)
        if not dry_run and (
            (expected_count is not None and expected_count != len(ids))
            or (expected_count is None and len(ids) > cap)
        ):
            raise ForgetNotConfirmed(len(ids), cap, expected_count)
        if ids and not dry_run:
            keep = set(ids)
            await self._remove(user_id, [m for m in every if m.id in keep], actor, how="forgotten")
        return ForgetResult(ids, matches)

    async def _by_meaning(
        self,
        user_id: str,
        query: str,
        chosen: dict[str, ForgetMatch],
        *,
        min_relevance: float,
        filters: SearchFilters,
        scan: int,
    ) -> dict[str, ForgetMatch]:
        """Those of `chosen` that `query` means (see `forget`), with why; at most FORGET_SCAN of the
        `scan` memories the filters let through are scored."""
        text = forget_query(query)
        top_k = max(1, min(scan, FORGET_SCAN))
        if self._tiered is not None and self._retriever is not None:
            request = RecallRequest(
                text,
                top_k=top_k,
                filters=filters,
                as_of=self._clock(),
                tiers=TIERS,
                min_relevance=min_relevance,
                with_bridge=True,
                every_segment=True,  # each segment of a long message is judged on its own
            )
            hits = (await self._tiered.search(user_id, request)).hits
        else:
            naive = RecallRequest(text, top_k=top_k, filters=filters, as_of=self._clock(), every_segment=True)
            hits = await self._search(user_id, naive)
            hits = [h for h in hits if h.relevance >= min_relevance]
        hits = [h for h in hits if h.memory.id in chosen and h.evidence is not None]
        # a memory without a stored bridge vector (warm, cold) gets its bridge cosine now: in Chinese the
        # keywords are otherwise its only channel, and one channel never forgets
        unbridged = [h.memory for h in hits if h.evidence is not None and h.evidence.bridge is None]
        bridged = await self._retriever.bridge_cosine(text, unbridged) if self._retriever is not None else {}
        lexicon = await self._lexicon()
        terms = forget_terms(query, lexicon)
        out: dict[str, ForgetMatch] = {}
        for h in hits:
            if h.evidence is None:
                continue
            evidence = h.evidence
            if evidence.bridge is None and h.memory.id in bridged:
                evidence = replace(evidence, bridge=bridged[h.memory.id])
            channels = matched_channels(evidence)
            stated = {key.split(":", 1)[0] for key, _ in h.memory.facts}
            # the memory must say what the query names, not only be of its kind (issue 39); saying it
            # in the other language is the keyword channel across languages
            said = said_by(terms, h.memory.content, stated, lexicon)
            if said.translated > 0:
                channels["lexicon"] = round(said.translated, 4)
            if len(channels) >= 2 and said.all:
                out[h.memory.id] = ForgetMatch(
                    h.memory.id, relevance=h.relevance, channels=channels, words=h.evidence.words
                )
        return out

    async def _lexicon(self) -> Lexicon:
        """The bilingual lexicon forget reads the query's words with: the retriever's, else loaded once
        (a deployment with the keyword channel's lexicon off still forgets by the words)."""
        if self._retriever is not None and self._retriever.lexicon is not None:
            return self._retriever.lexicon
        return await asyncio.to_thread(cc_cedict)

    async def _remove(
        self, user_id: str, memories: Sequence[Memory], actor: Actor = SYSTEM, *, how: How = "deleted"
    ) -> None:
        """Delete from the store and from everything derived from it or about to write it: tombstones
        first; then the record (with the services' `DeferredDeleteStore`: hidden now, purged from Chroma
        right after) followed by the keyword-index version (other workers' caches), beside the archive
        tiers and the pending outbox messages it came from; last our own cache. Without the user's write
        lock: a delete must not wait for a writer round. The tombstone makes it safe: a write in flight
        never merges into a buried memory and deletes, after its upsert, whatever of its own was buried
        meanwhile (memory/write/policy.py); a rebalance re-checks tombstones after its copy."""
        ids = [m.id for m in memories]
        if self.restorable is not None:  # a restorable copy, before anything is deleted
            await self.restorable.keep_whole(self._store, user_id, memories, how=how, actor=actor)
        if self._tombstones is not None:
            await self._tombstones.bury(user_id, ids)
        messages = {i for m in memories for i in m.source_message_ids}
        # the archive and the outbox are independent of the store; the version moves after the store's
        # delete (a worker rebuilding its index then reads the ids hidden or gone)
        try:
            await asyncio.gather(
                self._store_then_version(user_id, ids),
                self._archive.delete(user_id, ids) if self._archive is not None else _nothing(),
                self._outbox.scrub(user_id, messages) if self._outbox is not None else _nothing(),
                self.relations.remove(user_id, ids) if self.relations is not None else _nothing(),
            )
        finally:  # even when a step failed (503): this worker never serves the memory again
            self._forget_cached_index(user_id)
        if self._history is not None:  # after the delete: its text leaves the history with it
            await self._history.deleted(user_id, ids, actor)

    async def _store_then_version(self, user_id: str, ids: builtins.list[str]) -> None:
        await self._store.delete(user_id, ids)
        if self._versions is not None:
            await self._versions.bump(user_id, deleted=ids)

    def forget_user_caches(self, user_id: str) -> None:
        self._forget_cached_index(user_id)
        if self.relations is not None:
            self.relations.forget_user(user_id)

    def _forget_cached_index(self, user_id: str) -> None:
        # After a delete our own worker never serves a stale index, even if bumping the version failed.
        if self._retriever is not None:
            self._retriever.cache.drop(user_id)
        if self._tiered is not None:
            self._tiered.forget_user(user_id)


async def _nothing() -> None:
    return None


def _with_predecessors(memories: Sequence[Memory], ids: set[str]) -> set[str]:
    """`ids` and every memory whose chain of `superseded_by` leads into them."""
    out = set(ids)
    grown = True
    while grown:
        more = {m.id for m in memories if m.superseded_by in out and m.id not in out}
        out |= more
        grown = bool(more)
    return out


def _write_requests(entries: Sequence[OutboxEntry]) -> list[WriteRequest]:
    return [
        WriteRequest(
            e.user_id,
            e.session_id,
            e.messages,
            e.previous,
            e.enqueued_at,
            zone_of(e.time_zone),
            # a chat turn with the assistant; an imported history is read as `/messages` reads it
            chat_turn=e.import_id is None,
        )
        for e in entries
    ]
