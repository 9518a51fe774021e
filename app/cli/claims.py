"""Facts that change for memories stored before them: `python -m app.cli.claims (--user ID ... | --all)`.

Memories written before supersession carry no claims, so a newer "I moved to Suzhou" never supersedes
an older "I live in Hangzhou" stored then. This reads the claims of each user's memories that carry
none and supersedes in time order across all of them, as the writer would have (under the user's write
lock; the old memories are kept and marked). Safe to run again: a second run changes nothing. With
`--all`, the users are found on every Chroma server (a pass over their records' metadata). Prints one
JSON line per user, `{"user_id", "changed"}`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys

import anyio.to_thread

from app.clients.redis import build_redis
from app.composition import build_embedder, build_memory_service, build_store, ensure_layout
from app.composition.dense import dense_layout, dense_models
from app.settings import Settings, load_settings
from memory.redis_client import close
from monitoring.logging import configure_logging

log = logging.getLogger("mnemo.claims")


async def run(settings: Settings, users: list[str] | None) -> dict[str, int]:
    """`users`: these ids, or None for every user on every configured Chroma server."""
    embedder = await anyio.to_thread.run_sync(build_embedder, settings)
    redis = build_redis(settings, "mnemo-claims")
    try:
        await ensure_layout(redis, settings)
        store = build_store(settings, redis, layout=await dense_layout(settings, redis, record=False))
        dense = await dense_models(settings, embedder, store)
        memory = build_memory_service(settings, store, embedder, redis, searches=False, dense=dense)
        if users is None:
            found: set[str] = set()
            for server in store.servers.values():
                found |= set(await server.user_counts())
            users = sorted(found)
        out: dict[str, int] = {}
        for user in users:
            out[user] = await memory.backfill_claims(user)
            sys.stdout.write(json.dumps({"user_id": user, "changed": out[user]}) + "\n")
        return out
    finally:
        await close(redis)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    who = parser.add_mutually_exclusive_group(required=True)
    who.add_argument("--user", action="append", help="a user id (repeatable)")
    who.add_argument("--all", action="store_true", help="every user on every Chroma server")
    args = parser.parse_args()
    settings = load_settings()
    configure_logging(settings.log_level)
    asyncio.run(run(settings, None if args.all else list(args.user)))


if __name__ == "__main__":
    main()
