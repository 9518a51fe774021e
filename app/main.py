"""The app factory. `uvicorn --factory app.main:create_app` builds one app per worker."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from starlette.routing import Route

from app import __version__
from app.http.cors import CorsMiddleware
from app.http.errors import ErrorBodyResponses, install_error_handlers
from app.http.middleware import RequestContextMiddleware
from app.http.openai_errors import OpenAIErrorMiddleware
from app.lifespan import make_lifespan
from app.mcp.endpoint import McpEndpoint
from app.routes import (
    admin,
    audit,
    chat,
    corrections,
    health,
    memories,
    models,
    relations,
    sessions,
    usage,
)
from app.routes.console import ConsoleFiles, console_home
from app.settings import Settings, load_settings
from memory import Embedder
from monitoring.logging import configure_logging
from monitoring.middleware import MetricsMiddleware


def create_app(
    settings: Settings | None = None,
    *,
    embedder: Embedder | None = None,
    llm_transport: httpx.AsyncBaseTransport | None = None,
) -> FastAPI:
    """Build the service. `embedder` lets tests share one loaded model across apps; `llm_transport`
    lets them put a fake OpenAI-compatible upstream behind LLM_BASE_URL."""
    settings = settings or load_settings()
    configure_logging(settings.log_level)
    mcp = McpEndpoint()
    app = FastAPI(
        title="mnemo",
        version=__version__,
        summary="Memory service for chatbots",
        lifespan=mcp.lifespan(make_lifespan(settings, embedder, llm_transport)),
        responses=ErrorBodyResponses,
        # no trailing-slash redirects: a client following `DELETE /v1/memory/u/` -> `/v1/memory/u` would
        # reach the erase. A path that names no route is a 404, never a hop to another route
        redirect_slashes=False,
    )
    install_error_handlers(app)
    app.add_middleware(RequestContextMiddleware, max_body_bytes=settings.max_body_bytes)
    app.add_middleware(MetricsMiddleware)  # outside the request context: it also sees 413s and 500s
    # outermost: every answer a page may need to read (401, 429, 503, the last-resort 500) has CORS headers
    app.add_middleware(CorsMiddleware, settings=settings)
    # outermost: the OpenAI-compatible routes answer every error, CORS refusals too, in OpenAI's shape
    app.add_middleware(OpenAIErrorMiddleware)
    app.include_router(health.router)
    app.include_router(memories.router)
    app.include_router(relations.router)  # before corrections: /{user}/entities is no memory id
    app.include_router(corrections.router)  # after: /{user}/list and /{user}/export keep their paths
    app.include_router(sessions.router)
    app.include_router(chat.router)
    app.include_router(models.router)
    app.include_router(usage.router)
    app.include_router(audit.router)
    app.include_router(admin.router)
    app.router.routes.append(Route("/mcp", mcp, methods=["GET", "POST", "DELETE"], include_in_schema=False))
    # the one redirect the service makes: a person typing /console lands on the console (GET only)
    app.router.routes.append(
        Route("/console", console_home, methods=["GET", "HEAD"], include_in_schema=False)
    )
    app.mount("/console", ConsoleFiles(), name="console")
    return app
