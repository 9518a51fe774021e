"""Waiting for the background writer: the long-term outbox drained (integration tests, bench/llm_lane.py)."""

from __future__ import annotations

import asyncio

from app.clients.redis import build_redis
from app.settings import Settings
from memory.outbox.stream import Outbox


async def drain(settings: Settings) -> None:
    """Wait until the long-term outbox is empty (the background worker wrote everything)."""
    outbox = Outbox(build_redis(settings, "mnemo-test"))
    for _ in range(600):
        if await outbox.pending() == 0:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("outbox did not drain")
