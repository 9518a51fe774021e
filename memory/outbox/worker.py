"""The long-term writer's loop: read the partitions this writer leases, write, acknowledge, delete.

Each round takes up to `batch` entries from the held partitions (round robin), writes them through the
handler in rounds of one write per user (consecutive turns of a session coalesced), and only then
acknowledges and deletes them. A crash before the ack leaves entries pending; whoever holds the
partition's lease next claims them before reading anything new (memory/outbox/leases.py), so one user's
turns are written in order and, since memory ids are derived from message ids, never twice. An entry that
can never be processed (malformed) goes to a dead-letter stream instead of blocking its partition, and a
partition Redis cannot serve now (its node failing over, a key it refuses) is skipped for the round
instead of blocking the other partitions; so is a user whose lock another holder keeps. A round that
never returns is cancelled at its bound. The one exception to order: entries a read delivered whose
answer was lost (a connection broken under it) are found by the periodic read of this writer's own
pending entries, about a second late.

Each partition has two streams, read as two lanes through the same consumer group: its chat turns, and
its import lane (whole histories imported). A round reads the import lanes only when the chat streams
gave it nothing, so chat turns are always written first and an import is spread over the idle rounds.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from redis.exceptions import RedisError

from memory import keys
from memory.errors import MemoryBusy, StoreUnavailable
from memory.outbox.leases import PartitionLeases
from memory.outbox.stream import Outbox, OutboxEntry
from memory.redis_client import RedisClient
from monitoring.tasks import await_chain

log = logging.getLogger(__name__)
DEAD_LETTER_STREAM = keys.OUTBOX_DEAD_LETTERS
# failures that leave entries pending, to be retried with backoff (a store or Redis outage, a busy lock)
TRANSIENT = (StoreUnavailable, MemoryBusy, RedisError, OSError)
UNREADABLE = (RedisError, OSError)  # a partition Redis cannot serve now: skipped, the others read


class RoundStalled(TimeoutError):
    """A write round ran past its bound and was cancelled (transient: its entries are retried)."""


Read = tuple[str, str, dict[str, str]]  # (stream, entry id, fields)


Handler = Callable[[Sequence[OutboxEntry]], Awaitable[None]]  # at most one entry per user


@dataclass(slots=True)
class _Lane:
    """What the writer knows of one lane of its held partitions (chat turns, or imports)."""

    stream: Callable[[int], str]  # the lane's stream of a partition
    batch: int  # entries a round takes from the lane
    own_pending: bool = True  # entries this writer read and has not acknowledged (after a restart too)
    pending_checked: float = 0.0  # monotonic time of the last read of own pending entries


def coalesce(items: Sequence[tuple[str, OutboxEntry]], limit: int) -> list[tuple[list[str], OutboxEntry]]:
    """Consecutive entries of one user, session and time zone become one write of all their messages (one lock,
    one embedding call, one round of store calls instead of one per turn): what a backlog needs.
    The merged entry keeps the first one's preceding messages (the later ones' are the earlier turns,
    now inside it) and the earliest enqueue time (so an erase after any of them drops the write)."""
    out: list[tuple[list[str], OutboxEntry]] = []
    for entry_id, entry in items:
        if out and len(out[-1][0]) < limit:
            ids, last = out[-1]
            if (
                last.user_id == entry.user_id
                and last.session_id == entry.session_id
                and last.time_zone == entry.time_zone  # each turn's "昨天" is read in its own zone
            ):
                ids.append(entry_id)
                out[-1] = (ids, replace(last, messages=last.messages + entry.messages))
                continue
        out.append(([entry_id], entry))
    return out


class OutboxWorker:
    def __init__(
        self,
        outbox: Outbox,
        handler: Handler,
        *,
        consumer: str,
        batch: int = 64,
        idle_poll_seconds: float = 0.1,
        lease_ttl_ms: int = 30_000,
        max_backoff_seconds: float = 5.0,
        coalesce: int = 8,
        round_timeout_seconds: float = 90.0,
        pending_check_seconds: float = 1.0,
        import_batch: int = 2,
        look_ahead: Handler | None = None,
    ) -> None:
        """`round_timeout_seconds`: a handler call (one round's locks, embedding and store calls) still
        running after this is cancelled, which releases its locks; its entries stay pending and are
        retried. `pending_check_seconds`: this writer's own pending entries are read at least this
        often, whatever it believes (see `_read`). `import_batch`: entries a round takes from the import
        lanes (8 messages each; at most `batch`): a round runs to its end, so this bounds how long a chat
        turn that arrives meanwhile waits for its write. `look_ahead`: called, beside an import round,
        with the entries that follow it in their import lanes (read, not taken): the handler embeds them
        while this round is stored, and the next import round waits for it before it starts, so that
        one user's import keeps both cores busy (the models, then the store) instead of one at a time."""
        self._outbox = outbox
        self._handler = handler
        self._consumer = consumer
        self._idle_poll = idle_poll_seconds
        self._max_backoff = max_backoff_seconds
        self._coalesce = coalesce
        self._round_timeout = round_timeout_seconds
        self._pending_check = pending_check_seconds
        self.leases = PartitionLeases(outbox.redis, consumer, ttl_ms=lease_ttl_ms)
        self._stopping = asyncio.Event()
        self._grouped: set[str] = set()  # streams whose consumer group this worker has made sure of
        self._claim: set[str] = set()  # streams newly leased: others' pending entries come first
        self._turn = 0  # round-robin start over the held partitions
        # chat turns first; the import lane only when they gave a round nothing
        self._lanes = (
            _Lane(keys.outbox_stream, batch),
            _Lane(keys.import_stream, max(1, min(batch, import_batch))),
        )
        self._lane = self._lanes[0]  # the lane being read
        self._look_ahead = look_ahead
        self._ahead: asyncio.Task[None] | None = None  # the look-ahead of the last import round
        self.processed = 0

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Loop until `stop()`: refresh leases when due; per held partition own pending entries first,
        then the previous holder's, then new ones; give the leases back on the way out."""
        backoff = 0.0
        idle = 0.0
        try:
            while not self._stopping.is_set():
                try:
                    if self.leases.due() or not self.leases.held:
                        await self._refresh_leases()
                    entries = await self._read()
                    if not entries:
                        idle = min(self._idle_poll, max(0.01, idle * 2))
                        await self._sleep(idle if self.leases.held else self.leases.refresh_every_seconds)
                        continue
                    idle = 0.0
                    parsed = await self._parse(entries)
                    if self._lane is self._lanes[1] and self._look_ahead is not None:
                        await self._ahead_done()  # its vectors are this round's: not made twice
                        self._ahead = asyncio.create_task(self._peek_and_warm(entries))
                    await self._process(parsed)
                    backoff = 0.0
                except TRANSIENT as exc:
                    self._pending_everywhere()
                    if "NOGROUP" in str(exc):
                        self._grouped.clear()
                    backoff = min(self._max_backoff, max(0.2, backoff * 2))
                    log.warning("outbox write deferred", extra={"reason": str(exc), "retry_in_s": backoff})
                    await self._sleep(backoff)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    self._pending_everywhere()
                    log.exception("outbox worker error")
                    await self._sleep(1.0)
        finally:
            if self._ahead is not None:
                self._ahead.cancel()
            if self._stopping.is_set():  # a clean stop hands the partitions over at once; a crash
                with contextlib.suppress(Exception):  # leaves them to expire (`lease_ttl_ms`)
                    await asyncio.shield(self.leases.release_all())

    async def _ahead_done(self) -> None:
        if self._ahead is not None:
            await asyncio.wait({self._ahead})
            self._ahead = None

    async def _peek_and_warm(self, taken: Sequence[Read]) -> None:
        """The entries after `taken` in each of their import lanes (as many as a round takes), read
        without being taken, grouped as `_process` groups them, given to `look_ahead`. Only a cache:
        a failure here is logged and costs nothing but the time the next round then embeds."""
        assert self._look_ahead is not None
        last: dict[str, str] = {}
        for stream, entry_id, _ in taken:
            last[stream] = entry_id  # read in stream order
        try:
            by_user: dict[str, list[tuple[str, OutboxEntry]]] = {}
            for stream, after in last.items():
                found: Any = await self._outbox.redis.xrange(
                    stream, min=f"({after}", count=self._lanes[1].batch
                )
                for next_id, fields in found:
                    if fields:
                        entry = OutboxEntry.from_fields(dict(fields), str(next_id))
                        by_user.setdefault(entry.user_id, []).append((str(next_id), entry))
            ahead = [e for items in by_user.values() for _, e in coalesce(items, self._coalesce)]
            if ahead:
                await self._look_ahead(ahead)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - a cache: the round embeds what it lacks
            log.warning("import look-ahead failed", extra={"reason": f"{type(exc).__name__}: {exc}"})

    def _pending_everywhere(self) -> None:
        for lane in self._lanes:
            lane.own_pending = True

    async def _refresh_leases(self) -> None:
        _, acquired = await self.leases.refresh()
        for p in acquired:
            self._claim.update(lane.stream(p) for lane in self._lanes)

    async def _read(self) -> list[Read]:
        """Up to `batch` entries of the held partitions, from their chat streams; only when those give
        nothing, from their import lanes. A partition that cannot be read now (its Redis node is failing
        over, or refuses it) is skipped this round and the others are read: one partition's trouble
        never holds back the rest. Raises only when nothing could be read and some partition failed
        (the loop then backs off)."""
        held = list(self.leases.held)
        if not held:
            return []
        self._turn = (self._turn + 1) % len(held)
        held = held[self._turn :] + held[: self._turn]
        failed: dict[str, BaseException] = {}
        out: list[Read] = []
        for lane in self._lanes:
            self._lane = lane
            out = await self._read_lane([lane.stream(p) for p in held], failed)
            if out:
                break
        if failed:
            self._unreadable(failed)
            if not out:
                raise next(iter(failed.values()))
        return out

    async def _read_lane(self, held: list[str], failed: dict[str, BaseException]) -> list[Read]:
        """One lane's streams (`self._lane`): the previous holder's pending entries first (a partition
        just leased), then this writer's own pending ones, then new ones; `failed` gets the streams
        that could not be read."""
        lane = self._lane
        redis, group = self._outbox.redis, self._outbox.group
        for stream in held:
            if stream not in self._grouped:
                try:
                    await self._outbox.ensure_group(stream)
                except UNREADABLE as exc:
                    failed[stream] = exc
                    continue
                self._grouped.add(stream)
        readable = [s for s in held if s not in failed]
        out: list[Read] = []
        for stream in [s for s in readable if s in self._claim]:
            try:
                claimed: Any = await redis.xautoclaim(
                    stream, group, self._consumer, 0, start_id="0-0", count=lane.batch
                )
                entries = [(str(i), dict(f)) for i, f in claimed[1] if f]
                gone = [str(i) for i in claimed[2]] if len(claimed) > 2 else []
                if gone:  # deleted while pending (erase, scrub): settle them
                    await redis.xack(stream, group, *gone)
            except UNREADABLE as exc:
                failed[stream] = exc
                continue
            if not entries:
                self._claim.discard(stream)  # nothing of the previous holder's left
            out += [(stream, i, f) for i, f in entries]
        if not out:
            readable = [s for s in readable if s not in failed]
            # A read of new entries (">") whose answer is lost (a connection that breaks under it, then
            # redis-py's retry on another one: seen in a failover) leaves what it delivered in this
            # writer's pending list while the retry answers with what came after: so that list is also
            # read every `pending_check_seconds`, whatever this writer believes, and such entries are
            # written a moment late instead of never.
            if time.monotonic() - lane.pending_checked >= self._pending_check:
                lane.own_pending = True
            # own pending entries first (a round that failed, or read beyond the batch), then new ones
            for start in ("0", ">") if lane.own_pending else (">",):
                if start == "0":
                    lane.pending_checked = time.monotonic()
                responses = await self._read_group(readable, start, failed)
                for stream, response in responses:
                    out += await self._items(stream, response)
                if start == "0" and not out and not any(s in failed for s in held):
                    lane.own_pending = False
                if out:
                    break
        # what is read but not taken this round stays in this writer's pending list, in order
        lane.own_pending = lane.own_pending or len(out) > lane.batch
        return out[: lane.batch]

    async def _read_group(
        self, streams: Sequence[str], start: str, failed: dict[str, BaseException]
    ) -> list[tuple[str, Any]]:
        """XREADGROUP from `start` on every stream: one pipeline (one round trip per Redis node); if
        that fails, each stream on its own, so that the ones that answer are read (`failed` gets the
        others' errors), and from this writer's pending entries ("0"), which the failed pipeline may
        have added to."""
        if not streams:
            return []
        redis, group = self._outbox.redis, self._outbox.group
        try:
            async with redis.pipeline(transaction=False) as pipe:
                for stream in streams:
                    pipe.xreadgroup(group, self._consumer, {stream: start}, count=self._lane.batch)
                return list(zip(streams, await pipe.execute(), strict=True))
        except UNREADABLE:
            # the streams that answered before the failure may have delivered new entries the
            # exception took with it: this round reads this writer's pending entries instead (they
            # come first, in order), the next one new entries
            self._lane.own_pending = True
            start = "0"
        answers = await asyncio.gather(
            *(redis.xreadgroup(group, self._consumer, {s: start}, count=self._lane.batch) for s in streams),
            return_exceptions=True,
        )
        read: list[tuple[str, Any]] = []
        for stream, answer in zip(streams, answers, strict=True):
            if isinstance(answer, UNREADABLE):
                failed[stream] = answer
            elif isinstance(answer, BaseException):
                raise answer
            else:
                read.append((stream, answer))
        return read

    def _unreadable(self, failed: dict[str, BaseException]) -> None:
        """Partitions skipped this round: their entries stay pending (read again once they answer);
        a missing consumer group is made again."""
        self._pending_everywhere()  # a skipped partition may hold entries this writer read before
        for stream, exc in failed.items():
            if "NOGROUP" in str(exc):
                self._grouped.discard(stream)
        first = next(iter(failed.values()))
        log.warning(
            "outbox partitions skipped this round",
            extra={"partitions": len(failed), "reason": f"{type(first).__name__}: {first}"},
        )

    async def _items(self, stream: str, response: Any) -> list[Read]:
        if not response:
            return []
        # RESP2 answers [[stream, entries]], RESP3 answers {stream: [entries]}
        items = response[stream][0] if isinstance(response, dict) else response[0][1]
        gone = [str(i) for i, f in items if not f]  # deleted while pending (erase, scrub): settle them
        if gone:
            await self._outbox.redis.xack(stream, self._outbox.group, *gone)
        return [(stream, str(i), dict(f)) for i, f in items if f]

    async def _process(self, entries: Sequence[tuple[str, str, OutboxEntry | None]]) -> None:
        """One handler call per round: the next write of every user in the batch (each user's entries
        in stream order, consecutive turns of a session coalesced), so one round costs one lock per
        user and one store call per collection, not one per user. A round that fails on a store
        outage stays pending and is retried; one that fails otherwise is retried entry by entry, so
        a single bad entry cannot hold back everyone else's. A user whose lock another holder keeps
        (MemoryBusy) is left out of the round and of the rounds after it (their entries stay pending,
        in order); the round goes on for the others, and the busy one is raised at the end."""
        by_user: dict[str, list[tuple[str, OutboxEntry]]] = {}
        stream_of: dict[str, str] = {}
        for stream, entry_id, entry in entries:
            if entry is not None:
                by_user.setdefault(entry.user_id, []).append((entry_id, entry))
                stream_of[entry.user_id] = stream
        queues = [coalesce(items, self._coalesce) for items in by_user.values()]
        busy: dict[str, MemoryBusy] = {}
        for depth in range(max((len(q) for q in queues), default=0)):
            if self._stopping.is_set():  # shutting down: the rest stay pending for the next reader
                return
            round_ = [q[depth] for q in queues if depth < len(q) and q[depth][1].user_id not in busy]
            while round_:
                try:
                    await self._write([entry for _, entry in round_])
                except MemoryBusy as exc:
                    if all(e.user_id != exc.user_id for _, e in round_):
                        raise  # not one of this round's users: nothing to leave out
                    busy[exc.user_id] = exc
                    round_ = [(ids, e) for ids, e in round_ if e.user_id not in busy]
                    continue
                except TRANSIENT:
                    raise
                except Exception:
                    if len(round_) == 1:
                        raise
                    log.exception("outbox round failed; retrying its entries one by one")
                    await self._one_by_one(stream_of, round_, busy)
                    break
                for ids, entry in round_:
                    await self._ack(stream_of[entry.user_id], *ids)
                self.processed += sum(len(ids) for ids, _ in round_)
                break
        if busy:
            raise next(iter(busy.values()))

    async def _one_by_one(
        self,
        stream_of: dict[str, str],
        round_: Sequence[tuple[list[str], OutboxEntry]],
        busy: dict[str, MemoryBusy],
    ) -> None:
        failure: BaseException | None = None
        for ids, entry in round_:
            try:
                await self._write([entry])
            except MemoryBusy as exc:  # stays pending, and so do this user's later entries
                busy[exc.user_id] = exc
                continue
            except TRANSIENT:
                raise
            except Exception as exc:  # stays pending; the others are written
                failure = failure or exc
                continue
            await self._ack(stream_of[entry.user_id], *ids)
            self.processed += len(ids)
        if failure is not None:
            raise failure

    async def _write(self, batch: list[OutboxEntry]) -> None:
        """The handler, bounded by `round_timeout_seconds`. A round still running then is stuck (a
        call that never returns under a failover, seen with redis-py's cluster client): where it waits
        is logged, it is cancelled (which releases its locks, kept alive meanwhile by their keepers,
        so that no other writer waits on them for ever), and its entries stay pending."""
        task = asyncio.ensure_future(self._handler(batch))
        try:
            done, _ = await asyncio.wait({task}, timeout=self._round_timeout)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            return task.result()
        log.error(
            "outbox write round stalled: cancelled, its entries retried",
            extra={
                "seconds": self._round_timeout,
                "entries": len(batch),
                "awaits": await_chain(task.get_coro()),
            },
        )
        task.cancel()
        await asyncio.wait({task}, timeout=5.0)  # its locks are given back as it unwinds
        raise RoundStalled(f"a write round ran past {self._round_timeout:g} s and was cancelled")

    async def _parse(self, entries: Sequence[Read]) -> list[tuple[str, str, OutboxEntry | None]]:
        """Entries as read; a malformed one goes to the dead-letter stream (and is None here)."""
        out: list[tuple[str, str, OutboxEntry | None]] = []
        for stream, entry_id, fields in entries:
            try:
                out.append((stream, entry_id, OutboxEntry.from_fields(fields, entry_id)))
            except (KeyError, ValueError, TypeError):
                log.error("malformed outbox entry moved to dead letters", extra={"entry_id": entry_id})
                dead: dict[Any, Any] = {**fields, "source_id": entry_id, "source_stream": stream}
                await self._outbox.redis.xadd(DEAD_LETTER_STREAM, dead)
                await self._ack(stream, entry_id)
                out.append((stream, entry_id, None))
        return out

    async def _ack(self, stream: str, *entry_ids: str) -> None:
        redis: RedisClient = self._outbox.redis
        async with redis.pipeline(transaction=True) as pipe:
            pipe.xack(stream, self._outbox.group, *entry_ids)
            pipe.xdel(stream, *entry_ids)
            await pipe.execute()

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    async def drain(self, timeout: float = 30.0) -> bool:
        """Wait until every partition is empty (tests and benchmarks)."""
        deadline = asyncio.get_running_loop().time() + timeout
        while asyncio.get_running_loop().time() < deadline:
            if await self._outbox.pending() == 0:
                return True
            await asyncio.sleep(0.05)
        return False
