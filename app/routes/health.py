"""Liveness and readiness. Neither needs a token; readiness pings each store."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from app.http.body import StrictJSONRoute
from app.http.deps import RedisDep, StoreDep
from app.http.errors import REQUEST_ID_HEADER, request_id_of
from monitoring import metrics

router = APIRouter(tags=["health"], route_class=StrictJSONRoute)
PING_TIMEOUT_SECONDS = 2.0
RETRY_AFTER_SECONDS = "5"


@router.get("/healthz")
async def healthz() -> dict[str, str]:
    """The process is up (no dependency is touched)."""
    return {"status": "ok"}


@router.get("/readyz", response_model=None, responses={503: {"description": "a named dependency is down"}})
async def readyz(request: Request, redis: RedisDep, store: StoreDep) -> dict[str, Any] | JSONResponse:
    """Redis and every Chroma server answer; otherwise 503 (with Retry-After) naming the ones that did
    not. Any user may need any server, so one server down makes the worker not ready; memory calls
    still degrade per user meanwhile (a user on a healthy server is served)."""

    async def redis_up() -> bool:
        try:
            await asyncio.wait_for(redis.ping(), PING_TIMEOUT_SECONDS)
        except Exception:
            return False
        return True

    redis_ok, servers = await asyncio.gather(redis_up(), store.ping_each(PING_TIMEOUT_SECONDS))
    down = [name for name, ok in servers.items() if not ok]
    checks: dict[str, Any] = {
        "redis": "ok" if redis_ok else "down",
        "chroma": "down" if down else "ok",
        "chroma_servers": {name: "ok" if ok else "down" for name, ok in servers.items()},
    }
    if redis_ok and not down:
        return {"status": "ready", **checks}
    failed = [] if redis_ok else ["redis"]
    if down:
        failed.append("chroma" if len(servers) == 1 else f"chroma ({', '.join(down)})")
    request_id = request_id_of(request)
    headers = {"Retry-After": RETRY_AFTER_SECONDS}
    if request_id:
        headers[REQUEST_ID_HEADER] = request_id
    return JSONResponse(
        status_code=503,
        content={
            "error": "not_ready",
            "detail": f"not ready: {', '.join(failed)} unreachable",
            "request_id": request_id,
            **checks,
        },
        headers=headers,
    )


@router.get("/metrics", include_in_schema=False)
async def prometheus_metrics() -> Response:
    """Prometheus exposition across every worker (no token, never rate limited: scrape from inside the
    deployment's network only)."""
    body, content_type = metrics.exposition()
    return Response(content=body, media_type=content_type)
