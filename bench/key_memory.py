"""Bytes per Redis key kind, per user and per session: `MEMORY USAGE <key> SAMPLES 0` (exact, key and
value and their allocations) of every key on every master, grouped by what the key layout
(memory/keys.py) says the key is. What the capacity model's Redis memory comes from."""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from typing import Any

import redis.asyncio as aredis

from bench.served import Served

USER_KEY = re.compile(r"^mnemo:\{p\d+\}:u:\{(?P<user>[^}]*)\}:(?P<rest>.*)$")
SESSION_PART = re.compile(r"^s:\{(?P<session>[^}]*)\}:(?P<part>.*)$")
LENGTH = {"stream": "XLEN", "list": "LLEN", "hash": "HLEN", "set": "SCARD", "zset": "ZCARD"}
PARTITION_KEY = re.compile(r"^mnemo:\{p\d+\}:(?P<rest>.*)$")


def kind_of(key: str) -> tuple[str, str | None, str | None]:
    """(kind, user, session) of a key of layout 2."""
    user_key = USER_KEY.match(key)
    if user_key is None:
        partition_key = PARTITION_KEY.match(key)
        if partition_key is not None:
            rest = partition_key["rest"]
            return "partition " + ("erased marker" if rest.startswith("erased:") else rest), None, None
        return "global " + key, None, None
    user, rest = user_key["user"], user_key["rest"]
    session = SESSION_PART.match(rest)
    if session is not None:
        part = session["part"]
        return "session " + ("slot" if part.startswith("slot:") else part), user, session["session"]
    head = rest.split(":", 1)[0]
    if head in ("vec", "idem"):
        return f"user {head}", user, None
    return "user " + rest, user, None


def master_ports(svc: Served) -> list[int]:
    if svc.cluster is not None:
        return [n.port for n in svc.cluster.masters()]
    assert svc.redis is not None
    return [svc.redis.port]


async def key_memory(svc: Served) -> dict[str, Any]:
    sizes: dict[str, list[int]] = defaultdict(list)
    ttls: dict[str, list[int]] = defaultdict(list)
    items: dict[str, list[int]] = defaultdict(list)  # entries of a stream, list, hash, set or sorted set
    users: set[str] = set()
    sessions: set[tuple[str, str]] = set()
    used_memory = 0
    dataset = 0
    for port in master_ports(svc):
        node = aredis.Redis(host="127.0.0.1", port=port, decode_responses=True)
        try:
            info = await node.info("memory")
            used_memory += int(info["used_memory"])
            dataset += int(info["used_memory_dataset"])
            batch: list[str] = []
            async for key in node.scan_iter(count=1000):
                batch.append(key)
            for start in range(0, len(batch), 500):
                chunk = batch[start : start + 500]
                async with node.pipeline(transaction=False) as pipe:
                    for key in chunk:
                        pipe.memory_usage(key, samples=0)
                        pipe.pttl(key)
                        pipe.type(key)
                    answers = await pipe.execute()
                types = answers[2::3]
                async with node.pipeline(transaction=False) as pipe:
                    for key, kind_name in zip(chunk, types, strict=True):
                        pipe.execute_command(LENGTH.get(str(kind_name), "STRLEN"), key)
                    lengths = await pipe.execute(raise_on_error=False)
                for i, key in enumerate(chunk):
                    size, ttl = answers[3 * i], answers[3 * i + 1]
                    if size is None:  # expired between SCAN and MEMORY USAGE
                        continue
                    kind, user, session = kind_of(key)
                    sizes[kind].append(int(size))
                    ttls[kind].append(int(ttl))
                    if str(types[i]) in LENGTH and isinstance(lengths[i], int):
                        items[kind].append(lengths[i])
                    if user is not None:
                        users.add(user)
                    if session is not None:
                        sessions.add((str(user), session))
        finally:
            await node.aclose()
    table = [
        "| key kind | keys | bytes | bytes per key (mean) | entries per key (mean) | TTL left (median) |",
        "|---|---|---|---|---|---|",
    ]
    for kind in sorted(sizes, key=lambda k: -sum(sizes[k])):
        ttl = statistics.median(ttls[kind])
        ttl_text = "none" if ttl < 0 else f"{ttl / 1000:.0f} s"
        table.append(
            f"| {kind} | {len(sizes[kind])} | {sum(sizes[kind]):,} | {sum(sizes[kind]) / len(sizes[kind]):,.0f} "
            f"| {statistics.mean(items[kind]) if items[kind] else 0:.1f} | {ttl_text} |"
        )
    session_bytes = sum(sum(v) for k, v in sizes.items() if k.startswith("session "))
    user_bytes = sum(sum(v) for k, v in sizes.items() if k.startswith("user "))
    per_session = session_bytes / len(sessions) if sessions else 0.0
    summary = (
        f"{len(sessions)} sessions of {len(users)} users: {per_session:,.0f} bytes per session (session keys), "
        f"{user_bytes / max(1, len(users)):,.0f} bytes per user in user-level keys (ltm bookkeeping, rate "
        f"limit, recall vectors); used_memory {used_memory:,} bytes, of it dataset {dataset:,} (masters)"
    )
    return {
        "kinds": {
            kind: {
                "keys": len(v),
                "bytes": sum(v),
                "mean_bytes": round(sum(v) / len(v)),
                "median_ttl_ms": statistics.median(ttls[kind]),
                "mean_entries": round(statistics.mean(items[kind]), 1) if items[kind] else None,
            }
            for kind, v in sizes.items()
        },
        "sessions": len(sessions),
        "users": len(users),
        "bytes_per_session": round(per_session),
        "user_level_bytes_per_user": round(user_bytes / max(1, len(users))),
        "used_memory": used_memory,
        "used_memory_dataset": dataset,
        "table": table,
        "summary": summary,
    }
