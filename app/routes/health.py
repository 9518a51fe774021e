"""Liveness and readiness. Neither needs a token; readiness pings each store."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Response

from app.http.body import StrictJSONRoute
from app.http.deps import RedisDep, StoreDep
from app.http.errors import ServiceUnavailable
from monitoring import metrics

router = APIRouter(tags=["health"], route_class=StrictJSONRoute)
PING_TIMEOUT_SECONDS = 2.0


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (no dependency is touched)."""
    return {"status": "ok"}


@router.get("/readyz", responses={503: {"description": "a named dependency is down"}})
async def readyz(redis: RedisDep, store: StoreDep) -> dict[str, str]:
    """Redis and Chroma both answer; otherwise 503 naming the ones that failed."""

    async def check(name: str, probe: asyncio.Future[object] | object) -> str | None:
        try:
            await asyncio.wait_for(probe, PING_TIMEOUT_SECONDS)  # type: ignore[arg-type]
        except Exception:
            return name
        return None

    failed = [
        name
        for name in await asyncio.gather(check("redis", redis.ping()), check("chroma", store.ping()))
        if name
    ]
    if failed:
        raise ServiceUnavailable(f"not ready: {', '.join(failed)} unreachable", code="not_ready")
    return {"status": "ready", "redis": "ok", "chroma": "ok"}


@router.get("/metrics", include_in_schema=False)
async def prometheus_metrics() -> Response:
    """Prometheus exposition across every worker (no token, never rate limited: scrape from inside the
    deployment's network only)."""
    body, content_type = metrics.exposition()
    return Response(content=body, media_type=content_type)
