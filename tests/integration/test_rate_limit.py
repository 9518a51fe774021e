"""Per-user rate limiting in Redis: headers, 429 envelope, isolation, fail-open."""

from __future__ import annotations

import pytest

from app.settings import Settings
from harness.services import ServerProcess, free_port
from memory import Embedder
from tests.conftest import AuthHeaders, app_client, make_settings

pytestmark = pytest.mark.integration


class TestRateLimit:
    async def test_exactly_the_limit_then_429_with_headers(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        limited = settings.model_copy(update={"rate_limit_per_minute": 3})
        async with app_client(limited, embedder) as (client, _):
            seen = []
            for _ in range(3):
                resp = await client.get("/v1/memory/alice/list", headers=auth("alice"))
                assert resp.status_code == 200
                assert resp.headers["x-ratelimit-limit"] == "3"
                seen.append(resp.headers["x-ratelimit-remaining"])
            assert seen == ["2", "1", "0"]
            refused = await client.post("/v1/memory/alice/search", json={"query": "x"}, headers=auth("alice"))
            assert refused.status_code == 429
            assert refused.json()["error"] == "rate_limited"
            assert refused.json()["request_id"] == refused.headers["x-request-id"]
            assert 1 <= int(refused.headers["retry-after"]) <= 60
            assert refused.headers["x-ratelimit-remaining"] == "0"
            # another user has a budget of their own; health is never limited
            assert (await client.get("/v1/memory/bob/list", headers=auth("bob"))).status_code == 200
            for _ in range(5):
                health = await client.get("/healthz")
                assert health.status_code == 200
                assert "x-ratelimit-limit" not in health.headers
            chat = await client.post(
                "/v1/chat/completions",
                json={"messages": [{"role": "user", "content": "hi"}]},
                headers=auth("alice"),
            )
            assert chat.status_code == 429

    @pytest.mark.standalone
    async def test_fails_open_when_redis_is_down(
        self, chroma_server: ServerProcess, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        down = make_settings(
            f"redis://127.0.0.1:{free_port()}",
            chroma_server.url,
            rate_limit_per_minute=1,
            redis_socket_timeout=0.3,
        )
        async with app_client(down, embedder) as (client, _):
            for _ in range(3):
                resp = await client.post(
                    "/v1/memory/alice/search", json={"query": "x"}, headers=auth("alice")
                )
                assert resp.status_code == 200
                assert "x-ratelimit-limit" not in resp.headers
