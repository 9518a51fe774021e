"""The models `/v1/models` lists: the upstream's own list, cached for a while, else the configured model.

Front ends (Open WebUI, LibreChat, LobeChat...) list models before the first message. The list is the
upstream's `GET /models`, read through the upstream client and kept `LLM_MODELS_CACHE_SECONDS`; when no
upstream is configured (the offline responder), or it lists nothing, or it cannot be read (then retried
after `FAILED_RETRY_SECONDS`), the list is the configured model alone (`LLM_MODEL`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.clients.upstream import OpenAICompatibleLLM
from memory.errors import UpstreamFailed

log = logging.getLogger(__name__)
FAILED_RETRY_SECONDS = 10.0
OWNED_BY = "mnemo"


@dataclass(frozen=True, slots=True)
class ModelCard:
    id: str
    created: int
    owned_by: str


class ModelCatalog:
    def __init__(
        self,
        upstream: OpenAICompatibleLLM | None,
        configured: str,
        *,
        ttl_seconds: float,
        clock: Callable[[], float] = time.monotonic,
        started: float | None = None,
    ) -> None:
        self._upstream = upstream
        self._configured = configured
        self._ttl = ttl_seconds
        self._clock = clock
        self._created = int(started if started is not None else time.time())
        self._cached: tuple[ModelCard, ...] = ()
        self._until = float("-inf")
        self._lock = asyncio.Lock()

    def _fallback(self) -> tuple[ModelCard, ...]:
        return (ModelCard(self._configured, self._created, OWNED_BY),)

    async def models(self) -> tuple[ModelCard, ...]:
        if self._upstream is None:
            return self._fallback()
        if self._clock() < self._until:
            return self._cached
        async with self._lock:  # one upstream read per expiry, however many requests wait
            if self._clock() < self._until:
                return self._cached
            try:
                listed = [self._card(m) for m in await self._upstream.list_models()]
                self._cached = tuple(listed) or self._fallback()
                self._until = self._clock() + self._ttl
            except UpstreamFailed as exc:
                log.warning("upstream model list unavailable", extra={"reason": exc.reason})
                self._cached = self._fallback()
                self._until = self._clock() + min(self._ttl, FAILED_RETRY_SECONDS)
            return self._cached

    async def find(self, model_id: str) -> ModelCard | None:
        return next((m for m in await self.models() if m.id == model_id), None)

    def _card(self, raw: dict[str, Any]) -> ModelCard:
        created = raw.get("created")
        owned_by = raw.get("owned_by")
        return ModelCard(
            id=str(raw["id"]),
            created=created if isinstance(created, int) and not isinstance(created, bool) else self._created,
            owned_by=owned_by if isinstance(owned_by, str) and owned_by else "upstream",
        )
