"""No request can act on a resource it does not name (issue 22): dot segments, encoded dots, slashes
and trailing slashes in every path parameter of every route, sent with a user's and an admin's token,
through a client that sends the path as given and through one that normalises it (httpx: dot segments
removed, redirects followed), against mnemo served as `make run` serves it.

The promise, checked after every request: the victim's memories and sessions are as they were. And:
- as given: every answer is a 4xx (the id rule refuses dot-only ids, unknown paths are 404, the API
  never redirects);
- normalised: no write or delete succeeds. A normaliser turns `GET /v1/sessions/u/.` into
  `GET /v1/sessions/u`, a different request that the server cannot tell apart from a real one: it is
  answered as what it is, a read the token may make (docs/decisions.md, "Paths that normalise");
- through mnemo's own API client (the MCP tools use it): every such id is refused before a request is
  sent.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
import redis

from app.http.auth import TokenCodec
from app.main import create_app
from app.mcp.api import ApiError, MnemoApi
from harness.services import ServerProcess
from tests.conftest import TEST_SECRET, make_settings
from tests.served import serve

pytestmark = [pytest.mark.integration, pytest.mark.standalone]

REDIS_DB = 8  # a database of the suite's redis-server no other served test uses
HOSTILE = [".", "..", "%2e", "%2E%2E", "./", "a/..", "", "%2F", "..%2F..", "%2e/"]
VICTIM = "victim"
SESSION = "s1"
_TOKENS = TokenCodec(TEST_SECRET)
USER_TOKEN = _TOKENS.mint(VICTIM, ttl_seconds=3600)
ADMIN_TOKEN = _TOKENS.mint("root", role="admin", ttl_seconds=3600)

# bodies that would change the victim's data if a request reached the victim's route
BODIES: dict[str, dict[str, Any]] = {
    "messages": {"session_id": SESSION, "messages": [{"role": "user", "content": "覆盖 overwrite"}]},
    "search": {"query": "杭州 Hangzhou"},
    "forget": {"session_id": SESSION, "dry_run": False},
}


def routes() -> list[tuple[str, str]]:
    """(method, path template) of every API route with a path parameter, read from the app's own
    OpenAPI document, so a route added later is swept too."""
    app = create_app(make_settings("redis://127.0.0.1:1", "http://127.0.0.1:1"))  # never started
    paths: dict[str, dict[str, Any]] = app.openapi()["paths"]
    return sorted((method.upper(), path) for path, ops in paths.items() if "{" in path for method in ops)


def params_of(template: str) -> list[str]:
    return [part[1:-1] for part in template.split("/") if part.startswith("{")]


def fill(template: str, values: dict[str, str]) -> str:
    path = template
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    return path


def body_for(template: str) -> dict[str, Any] | None:
    return BODIES.get(template.rsplit("/", 1)[-1])


async def raw_request(base: str, method: str, path: str, token: str, body: Any) -> int:
    """HTTP/1.1 with the request target exactly as given: no normalisation, no redirect."""
    parts = urlsplit(base)
    reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
    payload = json.dumps(body).encode() if body is not None else b""
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nAuthorization: Bearer {token}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    )
    writer.write(head.encode() + payload)
    await writer.drain()
    status_line = await reader.readline()
    writer.close()
    return int(status_line.split()[1])


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[str]:
    url = f"{redis_server.url}/{REDIS_DB}"
    redis.Redis.from_url(url).flushdb()
    env = {"RATE_LIMIT_PER_MINUTE": "100000", "REDIS_URL": url}
    with serve(tmp_path_factory.mktemp("paths-served"), redis_server, chroma_server, env) as base:
        yield base
    redis.Redis.from_url(url).flushdb()


def victim_state(client: httpx.Client) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    listed = client.get(f"/v1/memory/{VICTIM}/list", params={"limit": 100}, headers=auth).json()
    sessions = client.get(f"/v1/sessions/{VICTIM}", headers=auth).json()
    session = client.get(f"/v1/sessions/{VICTIM}/{SESSION}", headers=auth).json()
    return {
        "memories": sorted(m["id"] for m in listed["items"]),
        "sessions": sessions["session_ids"],
        "buffer": [m["content"] for m in session["buffer"]],
    }


def state_of(base: str) -> dict[str, Any]:
    with httpx.Client(base_url=base, timeout=60) as client:
        return victim_state(client)


@pytest.fixture(scope="module")
def victim(served: str) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {USER_TOKEN}"}
    with httpx.Client(base_url=served, timeout=60) as client:
        said = [
            {"role": "user", "content": "我住在杭州，记住这个", "id": "m1"},
            {"role": "user", "content": "I keep bees on my rooftop", "id": "m2"},
        ]
        stored = client.post(
            f"/v1/memory/{VICTIM}/messages", json={"session_id": "s0", "messages": said}, headers=auth
        )
        assert stored.status_code == 200, stored.text
        chat = {
            "messages": [{"role": "user", "content": "我的猫叫Mimi / my cat is Mimi"}],
            "session_id": SESSION,
        }
        assert client.post("/v1/chat/completions", json=chat, headers=auth).status_code == 200
        deadline = time.monotonic() + 60
        while client.get(f"/v1/memory/{VICTIM}/export", headers=auth).json()["pending_writes"]:
            assert time.monotonic() < deadline, "the chat turn's long-term write never arrived"
            time.sleep(0.2)
        state = victim_state(client)
    assert len(state["memories"]) >= 2
    assert state["sessions"] == [SESSION]
    assert state["buffer"]
    return {"state": state, "memory_id": state["memories"][0]}


def cases(memory_id: str) -> Iterator[tuple[str, str, str, str]]:
    """(method, template, parameter, path) for every route x parameter x hostile value."""
    valid = {"user_id": VICTIM, "memory_id": memory_id, "session_id": SESSION}
    for method, template in routes():
        for name in params_of(template):
            for value in HOSTILE:
                yield method, template, name, fill(template, {**valid, name: value})


class TestSweep:
    def test_every_route_with_a_path_parameter_is_swept(self) -> None:
        swept = {(m, t) for m, t in routes()}
        assert ("DELETE", "/v1/memory/{user_id}") in swept
        assert ("DELETE", "/v1/memory/{user_id}/{memory_id}") in swept
        assert ("GET", "/v1/sessions/{user_id}/{session_id}") in swept
        assert len(swept) >= 10

    @pytest.mark.parametrize("token", [USER_TOKEN, ADMIN_TOKEN], ids=["user", "admin"])
    async def test_as_given_every_answer_is_a_4xx(
        self, served: str, victim: dict[str, Any], token: str
    ) -> None:
        answers: dict[str, int] = {}
        for method, template, _, path in cases(victim["memory_id"]):
            answers[f"{method} {path}"] = await raw_request(served, method, path, token, body_for(template))
        wrong = {request: status for request, status in answers.items() if not 400 <= status < 500}
        assert wrong == {}, wrong
        assert state_of(served) == victim["state"]

    @pytest.mark.parametrize("token", [USER_TOKEN, ADMIN_TOKEN], ids=["user", "admin"])
    async def test_normalised_no_write_succeeds_and_reads_stay_reads(
        self, served: str, victim: dict[str, Any], token: str
    ) -> None:
        headers = {"Authorization": f"Bearer {token}"}
        succeeded: list[str] = []
        async with httpx.AsyncClient(base_url=served, timeout=60, follow_redirects=True) as client:
            for method, template, _, path in cases(victim["memory_id"]):
                resp = await client.request(method, path, json=body_for(template), headers=headers)
                assert resp.status_code < 500, (method, path, resp.text)
                if resp.is_success:
                    succeeded.append(f"{method} {path} -> {resp.request.method} {resp.url.path}")
        assert state_of(served) == victim["state"]
        # what a normaliser can still reach: GETs of a list the token may read (the session list, the
        # entity list: `/v1/sessions/u/.` is `/v1/sessions/u` once normalised; the model list:
        # `/v1/models/.`), never a write or delete
        lists = ("GET /v1/sessions/", "GET /v1/memory/victim/entities", "GET /v1/models")
        assert all(s.split(" -> ")[1].startswith(lists) for s in succeeded), succeeded
        assert not [s for s in succeeded if s.split()[0] != "GET"], succeeded

    async def test_the_erase_needs_its_confirmation(self, served: str, victim: dict[str, Any]) -> None:
        headers = {"Authorization": f"Bearer {USER_TOKEN}"}
        async with httpx.AsyncClient(base_url=served, timeout=60, follow_redirects=True) as client:
            for path in (f"/v1/memory/{VICTIM}/.", f"/v1/memory/{VICTIM}/", f"/v1/memory/{VICTIM}"):
                resp = await client.delete(path, headers=headers)
                assert resp.status_code in (404, 422), (path, resp.text)
            wrong = await client.delete(
                f"/v1/memory/{VICTIM}", params={"confirm": "victim2"}, headers=headers
            )
            assert wrong.status_code == 422
            assert wrong.json()["error"] == "confirmation_required"
            assert "confirm=victim" in wrong.json()["detail"]
            assert state_of(served) == victim["state"]
            other = f"other-{uuid.uuid4().hex[:6]}"
            other_auth = {"Authorization": f"Bearer {_TOKENS.mint(other)}"}
            said = {"session_id": "s", "messages": [{"role": "user", "content": "temporary 临时"}]}
            assert (
                await client.post(f"/v1/memory/{other}/messages", json=said, headers=other_auth)
            ).is_success
            erased = await client.delete(f"/v1/memory/{other}", params={"confirm": other}, headers=other_auth)
            assert erased.status_code == 200, erased.text
            assert (await client.get(f"/v1/memory/{other}/list", headers=other_auth)).json()["total"] == 0

    @pytest.mark.parametrize("token", [USER_TOKEN, ADMIN_TOKEN], ids=["user", "admin"])
    async def test_mnemos_own_client_refuses_before_sending(
        self, served: str, victim: dict[str, Any], token: str
    ) -> None:
        sent: list[str] = []

        async def record(request: httpx.Request) -> None:
            sent.append(f"{request.method} {request.url.raw_path.decode()}")

        hostile = [".", "..", "./", "a/..", "", "%2e", " ", "a\n"]
        async with httpx.AsyncClient(
            base_url=served, timeout=60, event_hooks={"request": [record]}
        ) as client:
            api = MnemoApi(client, token, VICTIM)
            for bad in hostile:
                calls = [
                    api.delete(VICTIM, bad),
                    api.delete(bad, victim["memory_id"]),
                    api.session(VICTIM, bad),
                    api.session(bad, SESSION),
                    api.sessions(bad),
                    api.list(bad, {}),
                    api.search(bad, {"query": "杭州"}),
                    api.forget(bad, {"session_id": SESSION, "dry_run": False}),
                    api.ingest(bad, SESSION, [{"role": "user", "content": "x"}]),
                ]
                for call in calls:
                    with pytest.raises(ApiError) as info:
                        await call
                    assert info.value.status == 422
                    assert info.value.code == "validation_error"
            assert sent == []
        assert state_of(served) == victim["state"]
