"""CORS (app/http/cors.py, docs/operations.md#cors-browser-front-ends): preflights for every route and every header the API
reads, the allowed origin mirrored, other origins refused with the envelope, and the CORS headers on
error answers (401, 403, 413, 422, 429, 503) so a page can read the code and Retry-After. What a real
browser makes of it is tested in tests/browser/test_web_chat.py."""

from __future__ import annotations

import re

import httpx
import pytest

from app.main import create_app
from app.settings import Settings
from harness.services import free_port
from memory import Embedder
from tests.conftest import AuthHeaders, app_client

pytestmark = [pytest.mark.integration]

ORIGIN = "http://127.0.0.1:8765"
OTHER = "http://evil.example"
API_HEADERS = "authorization, content-type, idempotency-key, if-match, x-session-id, x-request-id"


def preflight(origin: str, method: str, headers: str = API_HEADERS) -> dict[str, str]:
    return {
        "Origin": origin,
        "Access-Control-Request-Method": method,
        "Access-Control-Request-Headers": headers,
    }


def api_routes() -> list[tuple[str, str]]:
    """(method, path with sample ids) of every route in the OpenAPI document, plus /mcp and the console."""
    paths = create_app(Settings(_env_file=None, auth_jwt_secret="k" * 40)).openapi()["paths"]
    out = [
        (method.upper(), re.sub(r"\{[^}]+\}", "a.b", path))
        for path, methods in paths.items()
        for method in methods
    ]
    return [*out, ("POST", "/mcp"), ("GET", "/mcp"), ("DELETE", "/mcp"), ("GET", "/console/")]


@pytest.fixture
def cors_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"cors_allow_origins": f"{ORIGIN}, https://app.example.com:8443"})


class TestPreflight:
    async def test_every_route_and_header_is_allowed_for_the_origin(
        self, cors_settings: Settings, embedder: Embedder
    ) -> None:
        routes = api_routes()
        assert ("POST", "/v1/memory/a.b/search") in routes
        assert ("DELETE", "/v1/memory/a.b") in routes
        assert ("PATCH", "/v1/memory/a.b/a.b") in routes
        async with app_client(cors_settings, embedder) as (client, _):
            for method, path in routes:
                r = await client.options(path, headers=preflight(ORIGIN, method))
                assert r.status_code == 204, (method, path, r.text)
                assert r.headers["access-control-allow-origin"] == ORIGIN
                assert method in r.headers["access-control-allow-methods"]
                allowed = {h.strip().lower() for h in r.headers["access-control-allow-headers"].split(",")}
                assert set(API_HEADERS.split(", ")) <= allowed
                assert "Origin" in r.headers["vary"]
                assert r.headers["access-control-max-age"] == "600"
                assert "access-control-allow-credentials" not in r.headers  # bearer tokens, no cookies
                assert r.headers["x-request-id"]

    async def test_an_origin_not_listed_is_refused_with_the_envelope(
        self, cors_settings: Settings, embedder: Embedder
    ) -> None:
        async with app_client(cors_settings, embedder) as (client, _):
            for origin in (OTHER, "http://127.0.0.1:8766", "https://127.0.0.1:8765", "null"):
                r = await client.options("/v1/memory/alice/search", headers=preflight(origin, "POST"))
                assert r.status_code == 400
                assert "access-control-allow-origin" not in r.headers
                body = r.json()
                assert body["error"] == "cors_refused"
                assert "origin" in body["detail"]
                assert body["request_id"] == r.headers["x-request-id"]

    async def test_a_header_or_method_the_api_does_not_use_is_refused(
        self, cors_settings: Settings, embedder: Embedder
    ) -> None:
        async with app_client(cors_settings, embedder) as (client, _):
            r = await client.options("/v1/memory/alice/search", headers=preflight(ORIGIN, "POST", "x-evil"))
            assert r.status_code == 400
            assert "headers" in r.json()["detail"]
            r = await client.options("/v1/memory/alice/list", headers=preflight(ORIGIN, "PUT", ""))
            assert r.status_code == 400
            assert "method" in r.json()["detail"]

    async def test_no_origin_is_allowed_by_default(self, settings: Settings, embedder: Embedder) -> None:
        assert settings.cors_allow_origins == ""
        async with app_client(settings, embedder) as (client, _):
            r = await client.options("/healthz", headers=preflight(ORIGIN, "GET"))
            assert r.status_code == 400
            assert r.json()["error"] == "cors_refused"
            r = await client.get("/healthz", headers={"Origin": ORIGIN})
            assert r.status_code == 200
            assert "access-control-allow-origin" not in r.headers

    async def test_the_second_origin_is_normalised_and_allowed(
        self, cors_settings: Settings, embedder: Embedder
    ) -> None:
        async with app_client(cors_settings, embedder) as (client, _):
            r = await client.options("/healthz", headers=preflight("https://app.example.com:8443", "GET"))
            assert r.status_code == 204


class TestErrorsCarryCorsHeaders:
    """A page must be able to read an error's code, request id and Retry-After."""

    @staticmethod
    def readable(r: httpx.Response, *names: str) -> None:
        assert r.headers["access-control-allow-origin"] == ORIGIN
        exposed = {h.strip().lower() for h in r.headers["access-control-expose-headers"].split(",")}
        for name in ("x-request-id", *names):
            assert name in exposed
            assert name in r.headers, name
        assert r.json()["error"]

    async def test_401_403_413_422_and_success(
        self, cors_settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        small = cors_settings.model_copy(update={"max_body_bytes": 2048})
        o = {"Origin": ORIGIN}
        async with app_client(small, embedder) as (client, _):
            r = await client.get("/v1/memory/alice/list", headers=o)
            assert r.status_code == 401
            self.readable(r, "www-authenticate")
            r = await client.get("/v1/memory/bob/list", headers=o | auth("alice"))
            assert r.status_code == 403
            self.readable(r)
            big = {"query": "x" * 4000}
            r = await client.post("/v1/memory/alice/search", json=big, headers=o | auth("alice"))
            assert r.status_code == 413  # refused by the request-context middleware, inside CORS
            self.readable(r)
            r = await client.post("/v1/memory/alice/search", json={"query": " "}, headers=o | auth("alice"))
            assert r.status_code == 422
            self.readable(r)
            r = await client.get("/v1/sessions/alice", headers=o | auth("alice"))
            assert r.status_code == 200
            assert r.headers["access-control-allow-origin"] == ORIGIN
            assert "x-ratelimit-remaining" in r.headers

    async def test_429_exposes_retry_after_and_rate_limit_headers(
        self, cors_settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        limited = cors_settings.model_copy(update={"rate_limit_per_minute": 1})
        headers = {"Origin": ORIGIN} | auth("alice")
        async with app_client(limited, embedder) as (client, _):
            assert (await client.get("/v1/sessions/alice", headers=headers)).status_code == 200
            r = await client.get("/v1/sessions/alice", headers=headers)
            assert r.status_code == 429
            self.readable(r, "retry-after", "x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")

    async def test_503_exposes_retry_after(self, cors_settings: Settings, embedder: Embedder) -> None:
        # a second Chroma server that is down: readiness answers 503 naming it, with Retry-After
        down = f"http://127.0.0.1:{free_port()}"
        two = cors_settings.model_copy(
            update={"chroma_urls": f"a={cors_settings.chroma_url},b={down}", "chroma_timeout_seconds": 1.0}
        )
        async with app_client(two, embedder) as (client, _):
            r = await client.get("/readyz", headers={"Origin": ORIGIN})
            assert r.status_code == 503
            self.readable(r, "retry-after")


class TestSettings:
    @pytest.mark.parametrize(
        ("given", "kept"),
        [
            ("", []),
            ("HTTP://Example.COM:80", ["http://example.com"]),
            ("https://a.example:443, http://localhost:5173", ["https://a.example", "http://localhost:5173"]),
            ("http://[::1]:8080", ["http://[::1]:8080"]),
            ("*", ["*"]),
        ],
    )
    def test_origins_are_read_exactly(self, given: str, kept: list[str]) -> None:
        assert (
            Settings(_env_file=None, auth_jwt_secret="k" * 40, cors_allow_origins=given).cors_origins == kept
        )

    @pytest.mark.parametrize(
        "bad",
        [
            "example.com",
            "ftp://a.example",
            "http://a.example/",
            "http://a.example/app",
            "http://u@a.example",
            "*,http://a",
        ],
    )
    def test_a_malformed_origin_is_refused_at_startup(self, bad: str) -> None:
        with pytest.raises(ValueError, match="CORS"):
            Settings(_env_file=None, auth_jwt_secret="k" * 40, cors_allow_origins=bad)

    def test_wildcard_with_credentials_is_refused(self) -> None:
        with pytest.raises(ValueError, match="credentials"):
            Settings(
                _env_file=None, auth_jwt_secret="k" * 40, cors_allow_origins="*", cors_allow_credentials=True
            )
