"""Move a deployment's Redis keys from layout 1 to layout 2, online:  python -m app.cli.migrate_keys

Layout 1 (`mnemo:{alice}:...`, one global `mnemo:outbox` stream) cannot run on a Redis Cluster: a turn
wrote the user's keys and the global stream in one transaction. Layout 2 (memory/keys.py) puts a user's
keys and the outbox partition of their turns under one hash tag. Upgrade: deploy the new version (it
reads and writes layout 2 only), then run this against the same (standalone) Redis while it serves.

- Every layout-1 user key is renamed to its layout-2 name (TTL kept). If the new version already wrote
  that key (the user chatted between deploy and migration), the two are merged instead: buffers and
  rate-limit logs (sorted sets) are united, hashes (actions, tombstones, entities) get the fields they
  lack, and for plain values (summary, slots, versions) the newer one, already in layout 2, wins.
- Every entry of the layout-1 outbox stream, pending or not, is re-appended to its user's partition
  with its original enqueue time, and removed from the old stream in the same transaction; an old
  writer still running at the same time can at worst write an entry twice, which changes nothing
  (memory ids derive from message ids). The old stream is deleted once empty.
- Erase markers (`mnemo:erased:<hash>`) stay where they are: the hash hides the user, so they cannot be
  placed in a partition. Layout 2 reads them too (memory/longterm/tombstones.py) until they expire.

Idempotent and resumable: what is moved no longer matches the layout-1 patterns, so a second run (or a
run after a crash) only moves what is left. `--dry-run` counts without changing anything.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from app.clients.redis import build_redis, check_layout
from app.settings import Settings, load_settings
from memory import keys
from memory.redis_client import close
from monitoring.logging import configure_logging

log = logging.getLogger("mnemo.migrate_keys")
_SESSION_REST = re.compile(r"^s:(.+):(summary|actions|buffer|lock|slot:[^:]+)$")


@dataclass
class MigrationReport:
    keys_renamed: int = 0
    keys_merged: int = 0
    outbox_entries_moved: int = 0
    skipped: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "keys_renamed": self.keys_renamed,
            "keys_merged": self.keys_merged,
            "outbox_entries_moved": self.outbox_entries_moved,
            "skipped": len(self.skipped),
        }


def new_name(user_id: str, rest: str) -> str | None:
    """The layout-2 name of a layout-1 key `mnemo:{user}:<rest>` (None if it is no key mnemo made)."""
    session = _SESSION_REST.match(rest)
    if session:
        return f"{keys.session_prefix(user_id, session.group(1))}:{session.group(2)}"
    if rest.split(":", 1)[0] in {"ltm", "rl", "vec"}:
        return f"{keys.user_prefix(user_id)}:{rest}"
    return None


class KeyMigration:
    def __init__(self, redis: Redis, *, dry_run: bool = False, page: int = 500) -> None:
        self._redis = redis
        self._dry_run = dry_run
        self._page = page
        self.report = MigrationReport()

    async def run(self) -> MigrationReport:
        await self.migrate_user_keys()
        await self.migrate_outbox()
        log.info("key migration done", extra={**self.report.as_dict(), "dry_run": self._dry_run})
        return self.report

    async def migrate_user_keys(self) -> None:
        seen = 0
        async for raw in self._redis.scan_iter(match=keys.Legacy.USER_KEYS, count=self._page):
            key = str(raw)
            parsed = keys.Legacy.user_of(key)
            target = new_name(*parsed) if parsed else None
            if target is None:
                if parsed is not None:
                    self.report.skipped.append(key)
                continue
            seen += 1
            if not self._dry_run:
                await self._move(key, target)
            elif await self._redis.exists(target):
                self.report.keys_merged += 1
            else:
                self.report.keys_renamed += 1
            if seen % 1000 == 0:
                log.info("keys migrated", extra=self.report.as_dict())

    async def _move(self, old: str, new: str) -> None:
        if await self._redis.renamenx(old, new):
            self.report.keys_renamed += 1
            return
        kind = await self._redis.type(old)
        if kind == "zset":
            ttl = int(await self._redis.pttl(new))
            await self._redis.zunionstore(new, [new, old], aggregate="MAX")  # a store drops the TTL
            if ttl > 0:
                await self._redis.pexpire(new, ttl)
        elif kind == "hash":
            for name, value in (await self._redis.hgetall(old)).items():
                await self._redis.hsetnx(new, name, value)
        # strings (summary, slots, version, lock, vectors) and streams (change log): the layout-2 one
        # is newer; the change log only feeds caches, which rebuild from the store
        await self._redis.delete(old)
        self.report.keys_merged += 1

    async def migrate_outbox(self) -> None:
        stream = keys.Legacy.OUTBOX_STREAM
        if await self._redis.type(stream) != "stream":
            return
        start = "-"
        while True:
            batch: Any = await self._redis.xrange(stream, min=start, count=self._page)
            for entry_id, fields in batch:
                await self._move_entry(stream, str(entry_id), dict(fields))
            if len(batch) < self._page:
                break
            start = f"({batch[-1][0]}"
        if not self._dry_run and int(await self._redis.xlen(stream)) == 0:
            await self._redis.delete(stream)

    async def _move_entry(self, stream: str, entry_id: str, fields: dict[str, str]) -> None:
        user_id = fields.get("user_id")
        if not user_id:
            self.report.skipped.append(f"{stream} {entry_id}")
            return
        self.report.outbox_entries_moved += 1
        if self._dry_run:
            return
        moved: dict[Any, Any] = {**fields}
        moved.setdefault("enqueued_at", repr(int(entry_id.split("-", 1)[0]) / 1000))
        async with self._redis.pipeline(transaction=True) as pipe:  # one server: one transaction
            pipe.xadd(keys.outbox_stream_of(user_id), moved)
            pipe.xdel(stream, entry_id)
            await pipe.execute()


async def migrate(settings: Settings, *, dry_run: bool) -> MigrationReport:
    if settings.redis_cluster_nodes:
        raise SystemExit(
            "layout 1 never ran on a Redis Cluster (its turn transaction was cross-slot): "
            "migrate the standalone server, then move to the cluster"
        )
    redis = build_redis(settings, "mnemo-migrate")
    assert isinstance(redis, Redis)
    try:
        await check_layout(redis, settings.outbox_partitions)
        return await KeyMigration(redis, dry_run=dry_run).run()
    finally:
        await close(redis)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m app.cli.migrate_keys", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--dry-run", action="store_true", help="count what would move, change nothing")
    args = parser.parse_args(argv)
    settings = load_settings()
    configure_logging(settings.log_level)
    report = asyncio.run(migrate(settings, dry_run=args.dry_run))
    log.info("summary", extra=report.as_dict())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
