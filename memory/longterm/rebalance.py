"""Moving users between Chroma servers online (`python -m app.cli.rebalance`).

Which users: every user some server holds records of, found by reading the `user_id` metadata of each
server's collections (the ground truth of where data is: it also finds records from before placements
existed and copies a crashed move left behind, which placement keys alone would not), whose placement
differs from rendezvous over the current servers, or who has unfinished business (an unrecorded
placement, a copy in progress, a source copy still to delete, records outside their placement).

How one user moves, under the user's long-term write lock (writes wait; searches go on reading the
source; deletes do not wait: they bury the id, delete wherever the placement says a copy is, and the
copy below drops whatever was buried while it ran):

1. `to` = target in the placement hash (a crash from here on leaves a marked, partial copy);
2. copy the records (ids, documents, metadata, vectors) a page at a time, drop anything else the target
   holds for the user and anything buried (deleted) meanwhile, verify that the ids match the source's
   exactly, less those buried;
3. switch: `at` = target, `from` = source, `to` dropped, version bumped, in one Redis transaction
   (every worker's cached placement is stale from that instant: `memory/longterm/routing.py`);
4. release; after `grace_seconds` (longer than a reader may trust a cached placement, so reads routed
   just before the switch have finished), delete the source copy, then `from` under the lock again.

`companions`: the stores of a channel that keeps one record per memory beside the main one, by server
(the bridge vectors, `memory/longterm/bridge.py`). A moving user's companion records move with the
records, copied as stored (each names the model that made it) in step 2, after the records are verified
and before the switch, less any id not on the target (deleted meanwhile); every deletion of a user's
copy on a server deletes their companion records there too.

Batches of `batch_users`; each user is settled on its own, so one failure (logged, counted) leaves
that user where they were and the rest go on. Every step is idempotent (upserts by id, deletes by
user) and recorded in the placement hash, so a re-run after a crash completes what was left.

A dense model switch is a rebalance (`memory/longterm/dense_models.py`): only the current model's
stores take users, so a user on a previous model's store "moves" to the current model's on the same
server. Records put on a store of another model (a move, a by-id copy, a merge) get its vectors of
`Memory.embed_text` on the way (`models`; without them such a copy fails the user), and the switch drops
the user's change log and index snapshot (`new_vectors`). Such a move is copied and re-embedded once
before the user's lock (`to` set first, so deletes reach the copy); the locked copy then embeds only the
records whose text or metadata changed since, so the user's writes wait for a read of their records,
not for their re-embedding. `max_per_second` paces the texts embedded, before the lock. Both models'
stores of one server share its companion store: it is neither copied nor deleted by such a move.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from memory import keys
from memory.embedding.base import Embedder
from memory.locks import LockTimeout, RedisLocks
from memory.longterm.chroma import ChromaLongTermStore
from memory.longterm.dense_models import DenseModels, other_model, physical_name
from memory.longterm.placement import FROM, TO, Placement
from memory.longterm.records import Records
from memory.longterm.routing import RoutingLongTermStore
from memory.longterm.tombstones import Tombstones
from memory.longterm.versions import LtmVersions
from memory.redis_client import RedisClient
from monitoring import metrics

log = logging.getLogger(__name__)


class RebalanceError(Exception):
    pass


class RebalanceBusy(RebalanceError):
    """Another rebalance holds the run lock."""


def cross_model(src: ChromaLongTermStore, dst: ChromaLongTermStore) -> bool:
    """Whether records of `src` put on `dst` need `dst`'s model's vectors."""
    return other_model(src.dense_model, dst.dense_model)


def default_label(user_id: str) -> str:
    """A stand-in for a user id in logs (mnemo never logs raw ids)."""
    return hashlib.blake2b(user_id.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class UserState:
    """One user as the scan found them."""

    user_id: str
    placement: Placement
    target: str  # rendezvous over the servers that take users
    holders: dict[str, int]  # server -> records of this user found there

    @property
    def work(self) -> list[str]:
        """What settling this user involves; empty when the user is where they belong."""
        p = self.placement
        at = p.at if p.at is not None else adoptable(self.holders, self.target)
        out: list[str] = []
        if p.at is None:
            out.append("adopt")
        if p.to is not None:
            out.append("resume")
        if p.from_ is not None:
            out.append("cleanup")
        if any(n for name, n in self.holders.items() if name not in {at, p.to, p.from_}):
            out.append("merge")
        if at != self.target:
            out.append("move")
        return out


def adoptable(holders: dict[str, int], target: str) -> str:
    """Where an unplaced user's records are taken to be: the target if it holds some, else the server
    holding the most (the others are merged into it)."""
    held = {name: n for name, n in holders.items() if n}
    if not held or target in held:
        return target
    return max(sorted(held), key=lambda name: held[name])


@dataclass(slots=True)
class Report:
    dry_run: bool
    records_by_server: dict[str, int] = field(default_factory=dict)
    users_seen: int = 0
    planned: dict[str, int] = field(default_factory=dict)  # work item -> users
    users_to_settle: int = 0
    users_moved: int = 0
    records_moved: int = 0
    adopted: int = 0
    records_merged: int = 0
    source_copies_deleted: int = 0
    records_reembedded: int = 0  # records given the target's dense model's vectors on the way
    failures: int = 0
    dense_switched: str | None = None  # a dense switch finished: the model every user is on now
    seconds: float = 0.0  # wall time of the run

    def as_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def _chunks(items: Sequence[UserState], size: int) -> Iterator[Sequence[UserState]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Rebalancer:
    def __init__(
        self,
        store: RoutingLongTermStore,
        redis: RedisClient,
        *,
        batch_users: int = 50,
        page_size: int = 500,
        grace_seconds: float = 5.0,
        lock_ttl_seconds: int = 10,
        lock_wait_seconds: float = 60.0,
        user_label: Callable[[str], str] = default_label,
        companions: Mapping[str, ChromaLongTermStore] | None = None,
        models: DenseModels | None = None,
        max_per_second: float | None = None,
    ) -> None:
        """`companions`: server (virtual or physical) name -> its companion store; `models`: the dense
        models a switch embeds with (by tag: the target store's `dense_model`); `max_per_second`: texts
        embedded per second at most, on average (None: no bound)."""
        if batch_users < 1 or page_size < 1:
            raise ValueError("batch_users and page_size must be >= 1")
        if max_per_second is not None and max_per_second <= 0:
            raise ValueError("max_per_second must be > 0")
        if grace_seconds < store.trust_seconds:
            raise ValueError(
                f"grace_seconds must be at least {store.trust_seconds}s, how long readers may trust a "
                "cached placement"
            )
        self._store = store
        self._placements = store.placements
        self._locks = RedisLocks(redis)
        self._versions = LtmVersions(redis)
        self._tombstones = Tombstones(redis)
        self._batch_users = batch_users
        self._page_size = page_size
        self._grace = grace_seconds
        self._lock_ttl = lock_ttl_seconds
        self._lock_wait = lock_wait_seconds
        self._label = user_label
        self._companions = dict(companions or {})
        self._models = models
        self._rate = max_per_second
        self._started = time.monotonic()
        self._reembedded = 0  # this run's records embedded by a target's model
        self._precopied: set[str] = set()  # users whose target holds a pre-copy (`_precopy`)

    async def plan(self, report: Report | None = None) -> list[UserState]:
        """Every user with something to do, from a scan of every server (all must answer)."""
        report = report if report is not None else Report(dry_run=True)
        holdings: dict[str, dict[str, int]] = {}
        for name, server in self._store.servers.items():
            counts = await server.user_counts()
            report.records_by_server[name] = sum(counts.values())
            for user_id, n in counts.items():
                holdings.setdefault(user_id, {})[name] = n
            log.info("server scanned", extra={"server": name, "users": len(counts)})
        users = sorted(holdings)
        placements: dict[str, Placement] = {}
        for start in range(0, len(users), 500):
            placements.update(await self._placements.read_many(users[start : start + 500]))
        report.users_seen = len(users)
        states = [UserState(u, placements[u], self._store.owner(u), holdings[u]) for u in users]
        todo = [s for s in states if s.work]
        for state in todo:
            for item in state.work:
                report.planned[item] = report.planned.get(item, 0) + 1
        report.users_to_settle = len(todo)
        return todo

    async def run(self, *, dry_run: bool = False, run_lock_wait_seconds: float = 0.0) -> Report:
        report = Report(dry_run=dry_run)
        self._started = time.monotonic()
        self._reembedded = 0
        try:
            await self._run(report, dry_run, run_lock_wait_seconds)
        finally:
            report.records_reembedded = self._reembedded
            report.seconds = round(time.monotonic() - self._started, 3)
        return report

    async def _run(self, report: Report, dry_run: bool, run_lock_wait_seconds: float) -> None:
        if dry_run:
            for state in await self.plan(report):
                log.info(
                    "would settle user",
                    extra={
                        "user": self._label(state.user_id),
                        "work": state.work,
                        "at": state.placement.at,
                        "target": state.target,
                        "records": state.holders,
                        "reembed": self._reembed_cost(state),
                    },
                )
            return
        try:
            async with self._locks.hold(
                keys.REBALANCE_LOCK, ttl_seconds=10, wait_seconds=run_lock_wait_seconds
            ):
                todo = await self.plan(report)
                log.info("rebalance planned", extra={"users": len(todo), "planned": report.planned})
                await self._settle_all(todo, report)
        except LockTimeout as exc:
            raise RebalanceBusy("another rebalance is running") from exc

    async def _settle_all(self, todo: Sequence[UserState], report: Report) -> None:
        batches = -(-len(todo) // self._batch_users)
        done = 0
        for number, batch in enumerate(_chunks(todo, self._batch_users), start=1):
            leftovers: list[tuple[str, str]] = []
            for state in batch:
                try:
                    source = await self._settle(state, report)
                except Exception:
                    self._failed(state.user_id, report, "settle")
                    continue
                if source is not None:
                    leftovers.append((state.user_id, source))
            if leftovers:
                log.info(
                    "batch switched; deleting source copies after the grace period",
                    extra={"batch": number, "users": len(leftovers), "grace_s": self._grace},
                )
                await asyncio.sleep(self._grace)
                for user_id, source in leftovers:
                    try:
                        await self._delete_source(user_id, source, report)
                    except Exception:
                        self._failed(user_id, report, "delete source copy")
            done += len(batch)
            log.info(
                "rebalance progress",
                extra={
                    "batch": number,
                    "batches": batches,
                    "users_done": done,
                    "users_total": len(todo),
                    "users_moved": report.users_moved,
                    "records_moved": report.records_moved,
                    "records_reembedded": self._reembedded,
                    "failures": report.failures,
                },
            )

    def _failed(self, user_id: str, report: Report, step: str) -> None:
        report.failures += 1
        metrics.REBALANCE_FAILURES.inc()
        log.exception(
            "rebalance step failed; a re-run completes it",
            extra={"user": self._label(user_id), "step": step},
        )

    def _user_lock(self, user_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        return self._locks.hold(
            keys.ltm_lock(user_id), ttl_seconds=self._lock_ttl, wait_seconds=self._lock_wait
        )

    async def _settle(self, state: UserState, report: Report) -> str | None:
        """Everything this user needs, under their lock; returns the server whose copy is to be
        deleted after the grace period (None: the user did not move)."""
        user_id = state.user_id
        if self._rate is not None:
            await self._pace(self._reembed_cost(state))  # outside the lock: writes never wait for it
        precopied = await self._precopy(user_id)
        try:
            return await self._settle_locked(state, report, precopied)
        finally:
            self._precopied.discard(user_id)

    async def _precopy(self, user_id: str) -> str | None:
        """A move to another dense model's store copies and re-embeds the user's records once before
        taking the user's lock (writes go on meanwhile), marked as the move's target; the locked copy
        that follows embeds only what changed since. Returns the target (None: nothing copied here)."""
        placement, _ = await self._placements.read(user_id)
        target = self._store.owner(user_id)
        at = placement.at
        if at is None or at == target or placement.to is not None or placement.from_ is not None:
            return None  # unplaced, settled, or unfinished business: all of it under the lock
        src, dst = self._store.server(at), self._store.server(target)
        if not cross_model(src, dst):
            return None  # copied as stored: fast enough under the lock
        self._reembedder(src, dst)  # a switch without the models fails here, before anything moves
        await self._placements.begin_move(user_id, target)  # deletes reach the copy from here on
        self._precopied.add(user_id)
        await self._copy_pages(user_id, src, dst)
        return target

    async def _settle_locked(self, state: UserState, report: Report, precopied: str | None) -> str | None:
        user_id = state.user_id
        async with self._user_lock(user_id):
            placement, _ = await self._placements.read(user_id)  # again: the scan is a snapshot
            target = self._store.owner(user_id)
            servers = set(state.holders) | {placement.at, placement.to, placement.from_, target}
            ids = {
                name: set(await self._store.server(name).ids_of(user_id))
                for name in sorted(s for s in servers if s is not None)
            }
            at = placement.at
            if at is None:
                at = adoptable({name: len(found) for name, found in ids.items()}, target)
                await self._placements.adopt(user_id, at, self._versions)
                report.adopted += 1
                log.info("placement recorded", extra={"user": self._label(user_id), "at": at})
            self._store.server(at)  # a placement naming a server not configured here fails the user
            if placement.to is not None and placement.to != at and placement.to != precopied:
                # a copy that never reached its switch is partial, maybe stale: start it over
                await self._delete_user_on(placement.to, user_id, at)
                await self._placements.clear(user_id, TO, placement.to)
                ids[placement.to] = set()
            if placement.from_ is not None:
                # the source copy of an earlier move that crashed after its switch
                if placement.from_ != at:
                    await self._delete_user_on(placement.from_, user_id, at)
                    ids[placement.from_] = set()
                    report.source_copies_deleted += 1
                await self._placements.clear(user_id, FROM, placement.from_)
            for name in sorted(ids):
                if name not in (at, precopied) and ids[name]:  # strays (the pre-copy is this move's)
                    await self._merge(user_id, name, at, ids[name] - ids[at], report)
                    ids[at] |= ids[name]
                    ids[name] = set()
            if at == target:
                return None
            src, dst = self._store.server(at), self._store.server(target)
            self._reembedder(src, dst)  # a switch without the models fails here, before anything moves
            reembedded = self._reembedded
            await self._placements.begin_move(user_id, target)
            copied = await self._copy(user_id, at, target, ids[at])
            await self._placements.switch(
                user_id, source=at, target=target, versions=self._versions, new_vectors=cross_model(src, dst)
            )
            reembedded = self._reembedded - reembedded
        report.users_moved += 1
        report.records_moved += copied
        metrics.REBALANCE_USERS_MOVED.inc()
        metrics.REBALANCE_RECORDS_MOVED.inc(copied)
        moved = {"from": at, "to": target, "records": copied, "reembedded": reembedded}
        log.info("user moved", extra={"user": self._label(user_id), **moved})
        return at

    def _reembed_cost(self, state: UserState) -> int:
        """About the texts settling this user embeds: their records on stores of another model than
        their target's (each is embedded once, on its way to the target's model)."""
        dst = self._store.servers.get(state.target)
        if dst is None:
            return 0
        return sum(
            n
            for name, n in state.holders.items()
            if name in self._store.servers and cross_model(self._store.servers[name], dst)
        )

    async def _pace(self, n: int) -> None:
        """Wait until `n` more texts keep the run within `max_per_second` (what was embedded so far, by
        count, and what this user will embed, estimated)."""
        if self._rate is None or n <= 0:
            return
        ahead = (self._reembedded + n) / self._rate - (time.monotonic() - self._started)
        if ahead > 0:
            log.debug("rebalance paced", extra={"wait_s": round(ahead, 3), "texts": n})
            await asyncio.sleep(ahead)

    def _reembedder(self, src: ChromaLongTermStore, dst: ChromaLongTermStore) -> Embedder | None:
        """The model whose vectors records of `src` need on `dst` (None: the same model, copied as
        stored). A cross-model copy without the models, or to a model not configured, fails."""
        if not cross_model(src, dst):
            return None
        if self._models is None:
            raise RebalanceError(
                f"records of dense model {src.dense_model!r} would go to a store of {dst.dense_model!r}: "
                "a dense switch needs the models (vectors are never copied across models)"
            )
        return self._models.get(dst.dense_model).embedder

    async def _put(
        self, user_id: str, src: ChromaLongTermStore, dst: ChromaLongTermStore, records: Records
    ) -> None:
        """`records` (read from `src`) on `dst`: as stored, or with `dst`'s model's vectors of the text
        the writer embeds when the two stores' models differ."""
        if not records.ids:
            return
        embedder = self._reembedder(src, dst)
        if embedder is not None and user_id in self._precopied:  # only what changed since the pre-copy
            records = await self._changed(user_id, dst, records)
            if not records.ids:
                return
        if embedder is not None:
            vectors = await embedder.embed(records.embed_texts())
            if vectors.ndim != 2 or vectors.shape != (len(records), embedder.dimension):
                raise RebalanceError(
                    f"the model of {dst.dense_model!r} gave vectors of shape {vectors.shape} for "
                    f"{len(records)} texts (dimension {embedder.dimension})"
                )
            records = records.with_embeddings(vectors)
            self._reembedded += len(records)
        await dst.put_records(user_id, records)

    @staticmethod
    async def _changed(user_id: str, dst: ChromaLongTermStore, records: Records) -> Records:
        """The records `dst` does not hold with the same text and metadata (written, edited or merged
        since they were copied; a record's vector is a function of them)."""
        held = await dst.records(user_id, ids=records.ids, vectors=False)
        now = dict(zip(records.ids, zip(records.documents, records.metadatas, strict=True), strict=True))
        same = {
            i
            for i, *pair in zip(held.ids, held.documents, held.metadatas, strict=True)
            if now.get(i) == tuple(pair)
        }
        return records.only(set(records.ids) - same)

    def _companion(self, server: str) -> ChromaLongTermStore:
        """The companion store of a (virtual) server: its own entry, else its physical server's."""
        found = self._companions.get(server)
        return found if found is not None else self._companions[physical_name(server)]

    async def _copy(self, user_id: str, source: str, target: str, source_ids: set[str]) -> int:
        """Make the target hold exactly the source's records of this user, less those deleted meanwhile;
        verified by ids."""
        src, dst = self._store.server(source), self._store.server(target)
        copied = await self._copy_pages(user_id, src, dst)
        extra = set(await dst.ids_of(user_id)) - source_ids
        if extra:
            await dst.delete(user_id, sorted(extra))
        await self._drop_buried(user_id, dst, source_ids)
        # a delete on the source moves the later records a page earlier: what the offsets skipped is
        # copied again by id
        absent = source_ids - set(await dst.ids_of(user_id))
        skipped = absent - await self._tombstones.buried(user_id, sorted(absent))
        if skipped:
            page = await src.records(user_id, ids=sorted(skipped))
            await self._put(user_id, src, dst, page)
            copied += len(page)
            await self._drop_buried(user_id, dst, skipped)
        landed = await dst.ids_of(user_id)
        # read after `landed`: a delete that reached the target before that read was buried before it
        gone = await self._tombstones.buried(user_id, sorted(source_ids | set(landed)))
        if len(landed) != len(set(landed)) or set(landed) - gone != source_ids - gone:
            raise RebalanceError(
                f"copy not verified: {len(source_ids)} records on {source} ({len(gone)} deleted meanwhile), "
                f"{copied} copied, {len(landed)} ({len(set(landed) & source_ids)} matching) on {target}"
            )
        await self._copy_companions(user_id, source, target, set(landed) - gone)
        return copied

    async def _copy_companions(self, user_id: str, source: str, target: str, keep: set[str]) -> None:
        """The companion records of `keep` (the ids now on the target), from the source to the target;
        the target keeps no other companion record of this user."""
        if not self._companions:
            return
        src, dst = self._companion(source), self._companion(target)
        if src is dst:  # both models' stores of one server share it: the records are already there
            return
        await self._copy_pages(user_id, src, dst, keep)
        landed = set(await dst.ids_of(user_id))
        if landed - keep:
            await dst.delete(user_id, sorted(landed - keep))
        # a delete on the source moves the later records a page earlier: what the offsets skipped, by id
        skipped = (set(await src.ids_of(user_id)) & keep) - landed
        if skipped:
            await self._put(user_id, src, dst, await src.records(user_id, ids=sorted(skipped)))
        # a delete between a page's read and its put removed the vector on every server before it landed
        await self._drop_buried(user_id, dst, keep)

    async def _copy_pages(
        self, user_id: str, src: ChromaLongTermStore, dst: ChromaLongTermStore, keep: set[str] | None = None
    ) -> int:
        """This user's records on `src` (those of `keep`, when given) put on `dst` a page at a time, by
        offset; returns the records put."""
        put = 0
        offset = 0
        vectors = not cross_model(src, dst)  # embedded again on the way: not read
        while True:
            page = await src.records(user_id, limit=self._page_size, offset=offset, vectors=vectors)
            chosen = page if keep is None else page.only(keep)
            await self._put(user_id, src, dst, chosen)
            put += len(chosen)
            if page.rows < self._page_size:
                return put
            offset += self._page_size

    async def _copy_ids(
        self,
        user_id: str,
        src: ChromaLongTermStore,
        dst: ChromaLongTermStore,
        ids: Sequence[str],
        keep: set[str] | None = None,
    ) -> None:
        """The records of `ids` that `src` holds (those of `keep`, when given) put on `dst`, a page of
        ids at a time."""
        for start in range(0, len(ids), self._page_size):
            found = await src.records(user_id, ids=ids[start : start + self._page_size])
            await self._put(user_id, src, dst, found if keep is None else found.only(keep))

    async def _delete_user_on(self, server: str, user_id: str, at: str | None) -> None:
        """This user's records on `server`, and their companion records there, unless those are the
        companion records of `at`, where the user is (both models' stores of a server share them)."""
        await self._store.server(server).delete_user(user_id)
        if self._companions:
            companion = self._companion(server)
            if at is None or companion is not self._companion(at):
                await companion.delete_user(user_id)

    async def _drop_buried(self, user_id: str, dst: ChromaLongTermStore, ids: set[str]) -> None:
        """Deletes do not wait for the user's lock: one that removed a record from the source after its
        page was copied would otherwise leave it on the target. A delete buried before this read is
        undone here; one buried after it sees the move in the placement and deletes on the target too."""
        gone = await self._tombstones.buried(user_id, sorted(ids))
        if gone:
            await dst.delete(user_id, sorted(gone))

    async def _merge(self, user_id: str, stray: str, at: str, missing: set[str], report: Report) -> None:
        """Records of this user on a server no placement names (written before placements existed, or
        after a placement was lost): the ones `at` lacks are copied there, then the stray copy goes."""
        src, dst = self._store.server(stray), self._store.server(at)
        self._reembedder(src, dst)  # a merge across models without the models fails before it copies
        ordered = sorted(missing)
        await self._copy_ids(user_id, src, dst, ordered)
        kept: set[str] = set()
        if missing:
            await self._drop_buried(user_id, dst, missing)
            landed = set(await dst.ids_of(user_id))
            kept = missing - await self._tombstones.buried(user_id, ordered)  # read after `landed`
            if not kept <= landed:
                raise RebalanceError(f"merge not verified: {len(kept - landed)} records missing on {at}")
            if self._companions and self._companion(stray) is not self._companion(at):
                # their companion records follow them (unless both servers share the companion store)
                await self._copy_ids(user_id, self._companion(stray), self._companion(at), ordered, kept)
            await self._versions.bump(user_id, upserted=sorted(kept))
        await self._delete_user_on(stray, user_id, at)
        report.records_merged += len(kept)
        log.warning(
            "records found outside the user's placement were merged into it",
            extra={"user": self._label(user_id), "server": stray, "into": at, "merged": len(kept)},
        )

    async def _delete_source(self, user_id: str, source: str, report: Report) -> None:
        """The old copy, deleted outside the user's lock (the user's writes go to `at`; only this run,
        holding the run lock, moves users): a 2,000-record delete took ~14 s on a loaded Chroma, all of
        it the user's writes waited (bench/served_models.py --dense-switch-only)."""
        async with self._user_lock(user_id):
            placement, _ = await self._placements.read(user_id)
        if placement.from_ != source or placement.at == source:
            return  # erased meanwhile, or settled by someone else
        await self._delete_user_on(source, user_id, placement.at)
        async with self._user_lock(user_id):
            await self._placements.clear(user_id, FROM, source)
        report.source_copies_deleted += 1
