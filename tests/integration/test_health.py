"""Liveness/readiness against real servers, including a Chroma server that is stopped and restarted."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
import redis
from asgi_lifespan import LifespanManager

from app.main import create_app
from app.settings import normalized_url
from harness.services import ServerProcess, free_port, start_chroma
from memory import Embedder
from tests.conftest import AuthHeaders, make_settings

pytestmark = pytest.mark.integration


async def _client_for(app_settings: object, embedder: Embedder) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(app_settings, embedder=embedder)  # type: ignore[arg-type]
    async with (
        LifespanManager(app, startup_timeout=120) as manager,
        httpx.AsyncClient(transport=httpx.ASGITransport(app=manager.app), base_url="http://mnemo.test") as c,
    ):
        yield c


class TestHealthz:
    async def test_healthz_needs_nothing(self, client: httpx.AsyncClient) -> None:
        resp = await client.get("/healthz")
        assert resp.status_code == 200
        assert resp.json() == {"status": "ok"}

    async def test_ready_when_both_answer(
        self, client: httpx.AsyncClient, chroma_server: ServerProcess
    ) -> None:
        resp = await client.get("/readyz")
        assert resp.status_code == 200
        assert resp.json() == {
            "status": "ready",
            "redis": "ok",
            "chroma": "ok",
            "chroma_servers": {normalized_url(chroma_server.url): "ok"},
        }


class TestReadyz:
    async def test_names_chroma_when_it_stops_and_recovers_when_it_returns(
        self,
        tmp_path: Path,
        redis_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
    ) -> None:
        chroma = start_chroma(tmp_path / "chroma")
        try:
            settings = make_settings(redis_server.url, chroma.url)
            async for client in _client_for(settings, embedder):
                assert (await client.get("/readyz")).status_code == 200
                stored = await client.post(
                    "/v1/memory/alice/messages",
                    json={"session_id": "s", "messages": [{"role": "user", "content": "I live in Hangzhou"}]},
                    headers=auth("alice"),
                )
                assert stored.status_code == 200

                chroma.stop()
                resp = await client.get("/readyz")
                assert resp.status_code == 503
                body = resp.json()
                assert body["error"] == "not_ready"
                assert "chroma" in body["detail"]
                assert "redis" not in body["detail"]
                assert (await client.get("/healthz")).status_code == 200
                # alice's index is in this worker (her write built it): her recall needs no Chroma
                cached = await client.post(
                    "/v1/memory/alice/search", json={"query": "Hangzhou 杭州"}, headers=auth("alice")
                )
                assert cached.status_code == 200
                assert cached.json()["results"][0]["content"] == "I live in Hangzhou"
                # bob's would have to be read from Chroma
                down = await client.post(
                    "/v1/memory/bob/search", json={"query": "我住在哪里？"}, headers=auth("bob")
                )
                assert down.status_code == 503
                assert down.json()["error"] == "chroma_unavailable"

                chroma = start_chroma(tmp_path / "chroma", port=chroma.port)
                assert (await client.get("/readyz")).status_code == 200
                found = await client.post(
                    "/v1/memory/alice/search", json={"query": "Hangzhou"}, headers=auth("alice")
                )
                assert found.status_code == 200
                assert found.json()["results"][0]["content"] == "I live in Hangzhou"
        finally:
            chroma.stop()
            redis.Redis.from_url(f"{redis_server.url}/0").flushdb()  # its users' placements name this server

    @pytest.mark.standalone
    async def test_names_redis_when_it_is_unreachable(
        self, chroma_server: ServerProcess, embedder: Embedder
    ) -> None:
        settings = make_settings(
            f"redis://127.0.0.1:{free_port()}", chroma_server.url, redis_socket_timeout=0.5
        )
        async for client in _client_for(settings, embedder):
            resp = await client.get("/readyz")
            assert resp.status_code == 503
            assert resp.json()["detail"] == "not ready: redis unreachable"

    async def test_app_starts_while_chroma_is_down(
        self, redis_server: ServerProcess, embedder: Embedder
    ) -> None:
        settings = make_settings(redis_server.url, f"http://127.0.0.1:{free_port()}")
        async for client in _client_for(settings, embedder):
            resp = await client.get("/readyz")
            assert resp.status_code == 503
            assert resp.json()["detail"] == "not ready: chroma unreachable"
