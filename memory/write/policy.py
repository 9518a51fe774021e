"""What becomes a long-term memory, and how it is written.

Every message is cleaned (emoji/control characters out), PII-redacted, gated (small talk, a user's
question that only asks and a user's request for the assistant make no memory), stripped of what is not
the fact (the user's "记住：", "Please remember:"; a request next to a statement), and split into segments of at
most 400 characters; each segment becomes one memory with importance (0.4·preference + 0.35·task +
0.25·entity), topic, entities and the preceding messages as keyword context. A memory is a `fact` when
its importance reaches the threshold (0.65) or an anchor fires, otherwise `episodic` (kept and
searchable: the LoCoMo benchmark shows most answers sit in plain narrative turns, see docs/benchmarks.md).

Anchors: an explicit "remember this" (记住/别忘了/remember/don't forget/"Please remember:"), a document or ID number
(订单号/合同号/报价单号, order/contract/quote no.), a user's confirmation right after an assistant's
answer (that answer becomes a fact), and the first mention in a new session of an entity from an earlier one.

Writes hold a per-user Redis lock around check-then-insert: an exact duplicate (same normalised content
hash) is never stored twice, and a near duplicate (cosine ≥ 0.95) merges into the existing memory,
keeping the newer text and the union of provenance. Deletes do not take that lock (a delete must not wait
for a whole writer round): they bury the id first, and a write never merges into a buried memory and,
after its upsert, removes any id of its own that a delete buried meanwhile, so whichever of the two comes
last decides, as if they had run one after the other. Both checks run against the user's in-process index
(the one recall uses, at the current version, with every vector) when there is one: no round trip to
the vector store; users above `in_process_max` memories, or without vectors in their index, ask the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, tzinfo

import numpy as np
from redis.exceptions import RedisError

from memory import keys
from memory.embedding.base import Embedder, Vectors
from memory.errors import REDIS_UNAVAILABLE, MemoryBusy, StoreUnavailable
from memory.locks import RedisLocks
from memory.longterm.chroma import LongTermStore
from memory.longterm.dense_models import DenseModel, DenseModels
from memory.longterm.ids import content_hash, memory_id_for
from memory.longterm.shared_vectors import SharedVectors
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.models import Memory, Message
from memory.recall.keyword_index import BM25Index
from memory.redis_client import RedisClient
from memory.text.cleaning import segment
from memory.text.lexicons import CONFIRMATION_RE
from memory.text.privacy import sanitize
from memory.text.window import ending, opening
from memory.write.claim_index import ClaimIndex
from memory.write.judge import MAX_PAIRS, SupersessionJudge, judge_pairs
from memory.write.local_index import IndexOf, LocalIndexes
from memory.write.merging import dedupe_ids, merge, merge_within_batch, same_facts
from memory.write.scoring import (
    HEALTH_IMPORTANCE,
    SkipReason,
    asks_to_remember,
    entities,
    importance,
    is_explicit_anchor,
    is_health,
    skip_reason,
    stored_text,
    topic_of,
)
from memory.write.superseder import Superseder
from memory.write.supersession import claims_of
from memory.write.vectors import Early, WriteVectors
from monitoring import metrics

log = logging.getLogger(__name__)
Clock = Callable[[], float]
Prepare = Callable[[Sequence[Memory]], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class WritePolicy:
    threshold: float = 0.65
    near_duplicate: float = 0.95
    context_messages: int = 2
    context_after: bool = True  # the reply that follows is indexed with a message too
    # of each neighbouring message, what a memory keeps as context: a message before, its end; after, its opening
    context_chars: int = 500
    segment_chars: int = 400
    lock_ttl_seconds: int = 10
    lock_wait_seconds: float = 30.0
    in_process_max: int = 20_000  # users with more memories are de-duplicated by the vector store
    supersession: bool = True  # newer statements of an attribute supersede older ones (supersession.py)
    # small talk, a user's questions that only ask and requests for the assistant are not memories, and
    # the user's "remember" is kept out of the stored text (scoring.py)
    gate: bool = True
    # a chat turn with the assistant (an outbox entry), not talk between people (`/messages`): a question
    # to the assistant is kept only for what it says of the user (scoring.why_not_stored's `to_assistant`)
    chat_turn: bool = False
    health_importance: float = HEALTH_IMPORTANCE  # a health or safety fact the user states
    # the time zone relative dates are resolved in ("昨天" said at 01:00 in Beijing is the day before in
    # Beijing): the deployment's `TIME_ZONE`, the one questions are read in
    zone: tzinfo = UTC


def _speaker_line(message: Message, text: str) -> str:
    return f"{message.name}: {text}" if message.name else text


@dataclass(frozen=True, slots=True)
class WriteRequest:
    """One user's messages to write (an outbox entry, or a call of the messages endpoint)."""

    user_id: str
    session_id: str
    messages: Sequence[Message]
    previous: Sequence[Message] = ()  # the messages just before (context, confirmations)
    issued_at: float | None = None  # when the write was asked for (see `WritePipeline.write`)
    zone: tzinfo | None = None  # the user's time zone, when the request named one (else the policy's)
    chat_turn: bool = False  # an outbox entry: a chat turn with the assistant (WritePolicy.chat_turn)


@dataclass(slots=True)
class _Draft:
    """One user's write between its checks and the store call."""

    user_id: str
    prepared: list[Memory]  # what the messages made, minus what an erase or delete made obsolete
    merged: list[Memory]  # exact duplicates merged (within the batch and with stored memories)
    existing: frozenset[str]  # content hashes already stored
    index: BM25Index | None  # the in-process index the near-duplicate check uses, if any
    vectors: Vectors | None = None
    model: DenseModel | None = None  # the user's dense model, read under the lock


class WritePipeline:
    def __init__(
        self,
        store: LongTermStore,
        embedder: Embedder,
        redis: RedisClient,
        versions: LtmVersions,
        policy: WritePolicy = WritePolicy(),
        *,
        index: IndexOf | None = None,
        shared: SharedVectors | None = None,
        clock: Clock = time.time,
        judge: SupersessionJudge | None = None,
        prepare: Prepare | None = None,
        dense: DenseModels | None = None,
        release: Callable[[str], None] | None = None,
    ) -> None:
        """`index`: the user's current in-process index (`HybridRetriever.keyword_index`), used for the
        duplicate checks instead of two vector-store queries per write, up to `policy.in_process_max`
        memories (`release`: drops a larger user's index here, memory/write/local_index.py). `shared`:
        vectors recall has already computed for these exact texts (the chat path's query), taken
        instead of re-embedding.
        `prepare`: the store's second model (`BridgedStore.prepare`), run on a round's memories while
        the main model embeds them, so that the upsert finds their bridge vectors computed. `dense`:
        the dense models during a switch (None: `embedder` embeds every user)."""
        self._prepare = prepare
        self._store = store
        self._local = LocalIndexes(index, store.count, in_process_max=policy.in_process_max, release=release)
        self._shared = shared
        self._embedder = embedder
        self._vectors = WriteVectors(dense or DenseModels(DenseModel("", embedder)), shared)
        self._redis = redis
        self._versions = versions
        self._locks = RedisLocks(redis)
        self._tombstones = Tombstones(redis)
        self.policy = policy
        self._clock = clock
        self._superseder = Superseder(store, in_process_max=policy.in_process_max, claims=ClaimIndex(redis))
        self._judge = judge  # the writer's second opinion on supersession (an LLM), if configured

    def prepare(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        previous: Sequence[Message] = (),
        zone: tzinfo | None = None,
        *,
        chat_turn: bool = False,
    ) -> list[Memory]:
        """Pure: the memories these messages make, before de-duplication; relative dates resolved in
        `zone` (the user's, when the request named one), else in the policy's. `chat_turn`: the messages
        are a turn with the assistant (WritePolicy.chat_turn)."""
        now = self._clock()
        p = self.policy if zone is None else replace(self.policy, zone=zone)
        p = replace(p, chat_turn=True) if chat_turn else p
        history = [_speaker_line(m, ending(sanitize(m.content), p.context_chars)) for m in previous]
        history = history[-p.context_messages :]
        last_message: Message | None = previous[-1] if previous else None
        out: list[Memory] = []
        by_message: dict[int, list[int]] = {}
        for i, message in enumerate(messages):
            text = sanitize(message.content)
            if not text:
                continue
            confirmation = (
                message.role == "user"
                and CONFIRMATION_RE.match(text) is not None
                and last_message is not None
                and last_message.role == "assistant"
            )
            if confirmation and i > 0:
                for j in by_message.get(i - 1, []):
                    out[j] = _as_fact(out[j], p.threshold)
            elif confirmation and i == 0 and last_message is not None:
                out.extend(
                    _as_fact(m, p.threshold)
                    for m in memories_of(user_id, session_id, last_message, [], now, p)
                )
            made = memories_of(user_id, session_id, message, history, now, p)
            if not made:  # the gate: small talk, a question or request that only asks (counted, never stored)
                metrics.MEMORY_WRITES.labels(
                    f"skipped_{self.skip_reason(message, chat_turn=p.chat_turn)}"
                ).inc()
            by_message[i] = list(range(len(out), len(out) + len(made)))
            out.extend(made)
            history = [*history, _speaker_line(message, ending(text, p.context_chars))]
            history = history[-p.context_messages :]
            last_message = message
        if p.context_after:
            lines = {
                i: _speaker_line(m, opening(sanitize(m.content), p.context_chars))
                for i, m in enumerate(messages)
            }
            for i, positions in by_message.items():
                if i + 1 in lines:
                    for j in positions:
                        out[j] = replace(out[j], context=f"{out[j].context} {lines[i + 1]}".strip())
        return out

    def skip_reason(self, message: Message, *, chat_turn: bool = False) -> SkipReason | None:
        """Why this message makes no memory (small talk, a question that only asks), or None."""
        if not self.policy.gate:
            return None
        text = sanitize(message.content)
        return skip_reason(text, role=message.role, to_assistant=chat_turn) if text else None

    async def write(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[Message],
        previous: Sequence[Message] = (),
        *,
        issued_at: float | None = None,
        zone: tzinfo | None = None,
    ) -> list[Memory]:
        """`issued_at` is when the write was asked for (an outbox entry's enqueue time); a write issued
        before the user's last erase is dropped, as is any memory deleted since (tombstoned id).
        `zone`: the user's time zone, when the request named one."""
        request = WriteRequest(user_id, session_id, tuple(messages), tuple(previous), issued_at, zone)
        return (await self.write_many([request]))[0]

    async def write_many(
        self, requests: Sequence[WriteRequest], *, judged: bool = False
    ) -> list[list[Memory]]:
        """Several users' writes at once (the outbox writer's batch), one request per user. Each user
        gets what a single write gets: its lock, the erase and tombstone checks, de-duplication; then
        one embedding call covers every text no recall vector covers, one upsert per vector-store
        collection stores all of them, and each user's version moves on. Measured (docs/benchmarks.md): a
        Chroma upsert costs its server about 6 ms of CPU plus about 1 ms per record, so one call per
        user was most of the writer's cost when many users chat at once. `judged`: the outbox writer's
        rounds (never a request's) may ask the supersession judge, once per round."""
        users = [r.user_id for r in requests]
        if len(set(users)) != len(users):
            raise ValueError("write_many takes one request per user")
        # pure CPU (cleaning, redaction, every segment's scores and claims): a 32,000-character message
        # is 80 segments and up to a second of it, so it runs off the event loop (issue 39)
        prepared = await asyncio.to_thread(self._prepare_all, requests)
        todo = sorted((i for i, made in enumerate(prepared) if made), key=lambda i: users[i])
        out: list[list[Memory]] = [[] for _ in requests]
        if not todo:
            return out
        # both models embed before the user's lock (issue 45): the lock serialised a user's writes
        # embedding included, so two imports' batches of one user on two workers ran one core at a
        # time; now they embed side by side and hold the lock for the checks and the upsert only
        early = await self._embed_early([(users[i], prepared[i]) for i in todo])
        upserted = asyncio.Event()  # set once the upsert is done
        try:
            async with contextlib.AsyncExitStack() as locks:
                for i in todo:  # in user-id order: two writers never wait on each other in a cycle
                    await locks.enter_async_context(self.user_lock(users[i]))
                checked = await asyncio.gather(*(self._check(requests[i], prepared[i]) for i in todo))
                drafts = [(i, d) for i, d in zip(todo, checked, strict=True) if d is not None]
                if not drafts:
                    return out
                await asyncio.gather(
                    self._vectorize([d for _, d in drafts], early),
                    self._prepare([m for _, d in drafts for m in d.merged]) if self._prepare else _nothing(),
                )
                finals = await asyncio.gather(*(self._near_duplicates(d) for _, d in drafts))
                made = [len(final) for final, _ in finals]  # what follows them: older memories superseded
                if self.policy.supersession:
                    finals = list(
                        await asyncio.gather(
                            *(
                                self._superseder.apply(d.user_id, d.index, final, vectors)
                                for (_, d), (final, vectors) in zip(drafts, finals, strict=True)
                            )
                        )
                    )
                if judged and self.policy.supersession and self._judge is not None:
                    finals = await self._judged([d for _, d in drafts], finals, made)
                await self._store.upsert(
                    [m for final, _ in finals for m in final],
                    np.concatenate([v for _, v in finals]),
                    models={d.user_id: d.model.tag for _, d in drafts if d.model and d.model.tag} or None,
                )
                upserted.set()  # from here on a failure leaves this write stored: say so
                await asyncio.gather(
                    *(self._stored(d.user_id, *f) for (_, d), f in zip(drafts, finals, strict=True))
                )
                undone = await self._apply_late_deletes(
                    [(d.user_id, final) for (_, d), (final, _) in zip(drafts, finals, strict=True)]
                )
        except StoreUnavailable as exc:
            if not upserted.is_set():
                raise
            raise StoreUnavailable(exc.store, exc.reason, stored=True) from exc
        except REDIS_UNAVAILABLE as exc:
            if not upserted.is_set():
                raise
            raise StoreUnavailable("redis", f"{type(exc).__name__}: {exc}", stored=True) from exc
        for (i, d), (final, _), n, gone in zip(drafts, finals, made, undone, strict=True):
            final = final[:n]  # the older memories superseded in this round follow the round's own
            out[i] = [m for m in final if m.id not in gone]
            new_ids = {m.id for m in d.prepared}
            stored = sum(m.id in new_ids for m in final)
            metrics.MEMORY_WRITES.labels("stored").inc(stored)
            metrics.MEMORY_WRITES.labels("merged").inc(len(d.prepared) - stored)
        return out

    async def _stored(self, user_id: str, final: list[Memory], vectors: Vectors) -> None:
        """What a stored write tells the rest: the index version (and its change log), the claims."""
        records = list(zip(final, vectors, strict=True))
        await self._versions.bump(user_id, upserted=[m.id for m in final], records=records)
        await self._superseder.remember(user_id, final)

    async def _apply_late_deletes(self, written: Sequence[tuple[str, list[Memory]]]) -> list[set[str]]:
        """After the upsert and the version bump: ids of this round that a delete buried since the
        round's checks (deletes do not wait for the lock) are deleted again, so the record does not come
        back. A delete buried before this read removes the record here; one buried after it reaches the
        store after the upsert and removes it itself."""
        try:
            found = await asyncio.gather(
                *(self._tombstones.buried(user, [m.id for m in memories]) for user, memories in written)
            )
        except RedisError as exc:
            # the write is stored and its version bumped: it stands. Only a delete that raced this very
            # write, during this very Redis failure, could come back (counted, logged)
            metrics.LATE_DELETE_CHECK_FAILURES.inc()
            log.warning("late-delete check failed; the write stands", extra={"reason": str(exc)})
            return [set() for _ in written]
        for (user, _), gone in zip(written, found, strict=True):
            if gone:
                await self._store.delete(user, sorted(gone))
                await self._versions.bump(user, deleted=sorted(gone))
                metrics.MEMORY_WRITES.labels("skipped_deleted").inc(len(gone))
        return list(found)

    async def backfill_claims(self, user_id: str) -> int:
        """Read the claims of this user's stored memories that carry none (written before facts that
        change existed), then supersede in time order across all their memories, as writes would have;
        under the user's lock. Returns how many records changed (0 when run again)."""
        if not self.policy.supersession:
            return 0
        async with self.user_lock(user_id):
            memories, vectors = await self._store.get_with_vectors(user_id)
            if not memories or len(vectors) != len(memories):
                return 0
            read = [
                replace(m, facts=tuple(claims_of(m.content))) if m.source == "user" and not m.facts else m
                for m in memories
            ]
            claiming = [i for i, m in enumerate(read) if m.facts]
            if not claiming:
                return 0
            # every claiming memory in one round against an empty index: they are compared with each other
            out, _ = await self._superseder.apply(
                user_id, BM25Index([]), [read[i] for i in claiming], vectors[claiming]
            )
            changed = [(m, vectors[i]) for i, m in zip(claiming, out, strict=True) if m != memories[i]]
            if not changed:
                return 0
            await self._store.upsert([m for m, _ in changed], np.asarray([v for _, v in changed]))
            await self._versions.bump(user_id, upserted=[m.id for m, _ in changed], records=changed)
            (gone,) = await self._apply_late_deletes([(user_id, [m for m, _ in changed])])
        return len(changed) - len(gone)

    async def _judged(
        self, drafts: Sequence[_Draft], finals: list[tuple[list[Memory], Vectors]], made: Sequence[int]
    ) -> list[tuple[list[Memory], Vectors]]:
        """One question to the judge for the whole round (memory/write/judge.py); no answer, no change."""
        assert self._judge is not None
        asked = [
            (k, new, old)
            for k, (d, (final, vectors), n) in enumerate(zip(drafts, finals, made, strict=True))
            for new, old in judge_pairs(d.index, final[:n], vectors[:n])
        ][:MAX_PAIRS]
        if not asked:
            return finals
        verdicts = await self._judge.judge([(new, old) for _, new, old in asked])
        if not verdicts or len(verdicts) != len(asked):
            return finals
        out = list(finals)
        for k in sorted({k for (k, _, _), yes in zip(asked, verdicts, strict=True) if yes}):
            decided = [
                (new, old) for (j, new, old), yes in zip(asked, verdicts, strict=True) if yes and j == k
            ]
            final, vectors = out[k]
            out[k] = await self._superseder.mark(drafts[k].user_id, drafts[k].index, final, vectors, decided)
        return out

    def user_lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        """The lock every write of this user holds around check-then-insert, so two writes of one user
        never interleave (a rebalance holds it while it moves the user). Deletes do not wait for it:
        see the module docstring."""
        p = self.policy
        return self._locks.hold(
            keys.ltm_lock(user_id),
            ttl_seconds=p.lock_ttl_seconds,
            wait_seconds=p.lock_wait_seconds,
            on_timeout=lambda: MemoryBusy(user_id, p.lock_wait_seconds),
            kind="ltm",
        )

    async def _check(self, request: WriteRequest, prepared: list[Memory]) -> _Draft | None:
        """Under the user's lock: drop what an erase or a delete made obsolete, mark first mentions,
        and merge exact duplicates (within the batch and with what is stored)."""
        user_id = request.user_id
        # wall clock, not the injectable one: it is compared with erase times taken from Redis' clock
        issued = request.issued_at if request.issued_at is not None else time.time()
        erased = await self._tombstones.erased_at(user_id)
        if erased is not None and issued <= erased:
            metrics.MEMORY_WRITES.labels("skipped_erased").inc(len(prepared))
            return None
        buried = await self._tombstones.buried(user_id, [m.id for m in prepared])
        if buried:
            metrics.MEMORY_WRITES.labels("skipped_deleted").inc(sum(m.id in buried for m in prepared))
            prepared = [m for m in prepared if m.id not in buried]
        if not prepared:
            return None
        prepared = await self._mark_first_mentions(user_id, request.session_id, prepared)
        merged = merge_within_batch(prepared)
        index = await self._local.get(user_id)
        hashes = [m.content_hash for m in merged]
        found = (
            index.views.with_hashes(hashes)
            if index is not None
            else await self._store.find_by_hashes(user_id, hashes)
        )
        # a memory being deleted (buried, maybe still in the store or a stale index) is no merge target
        gone = await self._tombstones.buried(user_id, [m.id for m in found])
        existing = {m.content_hash: m for m in found if m.id not in gone}
        merged = [merge(existing[m.content_hash], m) if m.content_hash in existing else m for m in merged]
        return _Draft(user_id, prepared, merged, frozenset(existing), index)

    def _prepare_all(self, requests: Sequence[WriteRequest]) -> list[list[Memory]]:
        return [
            self.prepare(r.user_id, r.session_id, r.messages, r.previous, r.zone, chat_turn=r.chat_turn)
            for r in requests
        ]

    async def warm(self, requests: Sequence[WriteRequest]) -> None:
        """Embed by both models what these writes will store, writing nothing (an import's next round,
        while the writer stores this one: `WriteVectors.warm`, `BridgedStore.prepare`)."""
        prepared = await asyncio.to_thread(self._prepare_all, requests)
        work = [(r.user_id, made) for r, made in zip(requests, prepared, strict=True) if made]
        if not work:
            return
        models = await self._vectors.models([u for u, _ in work], fresh=False)
        await asyncio.gather(
            self._vectors.warm([(u, models[u], [m.embed_text for m in made]) for u, made in work]),
            self._prepare([m for _, made in work for m in made]) if self._prepare else _nothing(),
        )

    async def _embed_early(self, work: Sequence[tuple[str, list[Memory]]]) -> Early:
        """Before the lock: the dense vector of every prepared memory's text by the user's model (as far
        as a cached placement says: checked under the lock), and the bridge vectors prepared alongside.
        A text the checks then merge away was embedded for nothing: rare (duplicates within an import)."""
        if not work:
            return {}
        models = await self._vectors.models([u for u, _ in work], fresh=False)
        rows = [(u, models[u], [m.embed_text for m in made]) for u, made in work]
        early, _ = await asyncio.gather(
            self._vectors.early(rows),
            self._prepare([m for _, made in work for m in made]) if self._prepare else _nothing(),
        )
        return early

    async def _vectorize(self, drafts: Sequence[_Draft], early: Early) -> None:
        """Every draft's vectors by its user's model read under the lock (`WriteVectors.vectors`)."""
        models = await self._vectors.models([d.user_id for d in drafts], fresh=True)
        for d in drafts:
            d.model = models[d.user_id]
        rows = [(d.user_id, models[d.user_id], [m.embed_text for m in d.merged]) for d in drafts]
        for d, array in zip(drafts, await self._vectors.vectors(rows, early), strict=True):
            d.vectors = array

    async def _near_duplicates(self, d: _Draft) -> tuple[list[Memory], Vectors]:
        """Merge each new memory into a stored one it nearly repeats (cosine and the same facts)."""
        assert d.vectors is not None
        merged = list(d.merged)
        fresh = [i for i, m in enumerate(merged) if m.content_hash not in d.existing]
        if fresh:
            nearest = (
                d.index.nearest_many(d.vectors[fresh], limit=1)
                if d.index is not None
                else await self._store.nearest(
                    d.user_id, d.vectors[fresh], n_results=1, model=(d.model.tag or None) if d.model else None
                )
            )
            batch_ids = {m.id for m in merged}
            targets = {
                i: hits[0][0]
                for i, hits in zip(fresh, nearest, strict=True)
                if hits
                and hits[0][1] >= self.policy.near_duplicate
                and hits[0][0].id not in batch_ids
                and same_facts(hits[0][0], merged[i])
            }
            gone = await self._tombstones.buried(d.user_id, [m.id for m in targets.values()])
            for i, target in targets.items():
                if target.id not in gone:
                    merged[i] = merge(target, merged[i])
                    metrics.NEAR_DUPLICATES_MERGED.inc()
        return dedupe_ids(merged, d.vectors)

    async def _mark_first_mentions(
        self, user_id: str, session_id: str, memories: list[Memory]
    ) -> list[Memory]:
        """An entity mentioned in an earlier session and now for the first time in this one is an anchor."""
        names = sorted({e.lower() for m in memories for e in m.entities})
        if not names:
            return memories
        key = keys.ltm_entities(user_id)
        seen = dict(zip(names, await self._redis.hmget(key, names), strict=True))
        out = []
        for m in memories:
            earlier = [e for e in m.entities if seen.get(e.lower()) not in (None, session_id)]
            out.append(_as_fact(m, self.policy.threshold) if earlier else m)
        await self._redis.hset(key, mapping=dict.fromkeys(names, session_id))
        return out


def memories_of(
    user_id: str, session_id: str, message: Message, history: Sequence[str], now: float, p: WritePolicy
) -> list[Memory]:
    """Pure: the memories one message makes under the policy `p` (none when the gate keeps it out), said
    after `history` (the lines before it: their keyword context) at `now` when it has no timestamp."""
    text = sanitize(message.content)
    if p.gate and skip_reason(text, role=message.role, to_assistant=p.chat_turn) is not None:
        return []  # its words stay in the context of the messages after it (`prepare`)
    # "记住：…" is the anchor, not the fact; a request next to a statement is not the fact either
    remembered = asks_to_remember(text, role=message.role)
    kept = stored_text(text, role=message.role) if p.gate else text
    parts = segment(kept, p.segment_chars)
    base_id = memory_id_for(user_id, session_id, message)
    made = []
    said_at = message.timestamp if message.timestamp is not None else now
    said = datetime.fromtimestamp(said_at, p.zone)  # relative dates are resolved from it (event dates)
    for n, part in enumerate(parts):
        score = importance(part)
        anchor = remembered or is_explicit_anchor(part, role=message.role)
        health = p.gate and is_health(part, role=message.role)
        weight = max(score.score, p.threshold) if anchor else score.score
        made.append(
            Memory(
                id=base_id if len(parts) == 1 else f"{base_id}-{n}",
                user_id=user_id,
                content=part,
                created_at=message.timestamp if message.timestamp is not None else now,
                session_id=session_id,
                source=message.role,
                content_hash=content_hash(part),
                importance=max(weight, p.health_importance) if health else weight,
                topic=topic_of(part),
                name=message.name,
                source_message_ids=(message.id,) if message.id else (),
                tier="fact" if anchor or health or score.score >= p.threshold else "episodic",
                entities=tuple(entities(part, now=said)[:20]),
                context=" ".join(history),
                facts=tuple(claims_of(part)) if p.supersession and message.role == "user" else (),
            )
        )
    return made


async def _nothing() -> None:
    return None


def _as_fact(m: Memory, threshold: float) -> Memory:
    return replace(m, tier="fact", importance=max(m.importance or 0.0, threshold))
