"""The memory API against real Redis, a real Chroma server and the real embedding model."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from app.settings import Settings
from memory import Embedder, keys
from tests.conftest import AuthHeaders, app_client, redis_of

pytestmark = pytest.mark.integration

ZH_EN_MESSAGES = [
    {
        "role": "user",
        "content": "我住在杭州，记住这个",
        "id": "zh-1",
        "timestamp": "2026-11-01T10:00:00+08:00",
    },
    {"role": "user", "content": "我最喜欢的水果是芒果", "id": "zh-2", "timestamp": 1793404800},
    {"role": "user", "content": "I work as a nurse at a children's hospital", "id": "en-1", "name": "Alice"},
    {"role": "assistant", "content": "Noted: your flight to Lisbon leaves on Friday.", "id": "en-2"},
]


async def ingest(
    client: httpx.AsyncClient, auth: AuthHeaders, user: str = "alice", **body: object
) -> httpx.Response:
    payload = {"session_id": "s1", "messages": ZH_EN_MESSAGES, **body}
    return await client.post(f"/v1/memory/{user}/messages", json=payload, headers=auth(user))


def assert_envelope(resp: httpx.Response, status: int, code: str | None = None) -> dict[str, str]:
    assert resp.status_code == status, resp.text
    body = resp.json()
    assert set(body) == {"error", "detail", "request_id"}
    assert body["request_id"] == resp.headers["x-request-id"]
    assert body["detail"]
    if code is not None:
        assert body["error"] == code
    return body  # type: ignore[no-any-return]


class TestIngest:
    async def test_stores_every_message_with_provenance(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        resp = await ingest(client, auth)
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["stored"] == 4
        first = body["memories"][0]
        assert first["content"] == "我住在杭州"  # "记住这个" pins it (an anchor) and is not kept in the text
        assert first["created_at"] == "2026-11-01T02:00:00Z"
        assert first["source_message_ids"] == ["zh-1"]
        assert first["source"] == "user"
        assert body["memories"][3]["source"] == "assistant"
        assert set(first) == {
            "id",
            "content",
            "created_at",
            "session_id",
            "source",
            "importance",
            "topic",
            "tier",
            "source_message_ids",
            "valid_from",
            "valid_to",
            "superseded_by",
            "archive_tier",
            "pinned",
        }
        assert first["valid_from"] == first["created_at"]
        assert first["valid_to"] is None
        assert first["superseded_by"] is None
        assert first["archive_tier"] == "hot"  # just written

    async def test_retry_with_same_ids_does_not_duplicate(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        first = (await ingest(client, auth)).json()
        second = (await ingest(client, auth)).json()
        assert [m["id"] for m in first["memories"]] == [m["id"] for m in second["memories"]]
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 4


class TestSearch:
    @pytest.mark.parametrize(
        ("query", "expected_id"),
        [
            ("我住在哪个城市？", "zh-1"),
            ("我喜欢吃什么水果", "zh-2"),
            ("What is my job?", "en-1"),
            ("When does my flight to Lisbon leave?", "en-2"),
        ],
    )
    async def test_matching_message_comes_first(
        self, client: httpx.AsyncClient, auth: AuthHeaders, query: str, expected_id: str
    ) -> None:
        await ingest(client, auth)
        resp = await client.post("/v1/memory/alice/search", json={"query": query}, headers=auth("alice"))
        assert resp.status_code == 200, resp.text
        results = resp.json()["results"]
        assert results[0]["source_message_ids"] == [expected_id]
        scores = [r["score"] for r in results]
        assert scores == sorted(scores, reverse=True)
        assert all(-1.0 <= r["similarity"] <= 1.0 for r in results)

    async def test_users_never_see_each_other(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        await ingest(client, auth, user="alice")
        await client.post(
            "/v1/memory/bob/messages",
            json={
                "session_id": "s1",
                "messages": [{"role": "user", "content": "I live in Berlin", "id": "b1"}],
            },
            headers=auth("bob"),
        )
        resp = await client.post(
            "/v1/memory/bob/search", json={"query": "我住在哪个城市？", "top_k": 100}, headers=auth("bob")
        )
        assert [r["source_message_ids"] for r in resp.json()["results"]] == [["b1"]]

    async def test_filters(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        await ingest(client, auth)
        await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "s2", "messages": [{"role": "user", "content": "我住在苏州", "id": "s2-1"}]},
            headers=auth("alice"),
        )

        async def ids(**body: object) -> list[str]:
            resp = await client.post(
                "/v1/memory/alice/search",
                # every candidate: this is about the filters, not about what is relevant
                json={"query": "住在哪里", "top_k": 10, "min_relevance": 0, **body},
                headers=auth("alice"),
            )
            assert resp.status_code == 200, resp.text
            return [r["source_message_ids"][0] for r in resp.json()["results"]]

        assert await ids(session_id="s2") == ["s2-1"]
        assert "s2-1" not in await ids(exclude_session_id="s2")
        # zh-2 is at epoch 1793404800 (2026-10-31T00:00Z); zh-1 at 2026-11-01T02:00Z; en-* at "now"
        assert set(await ids(until="2026-10-31T23:59:59Z")) == {"zh-2"}
        assert "zh-2" not in await ids(since=1793404801)
        assert await ids(topic="travel") == ["en-2"]  # "your flight to Lisbon" is about travel

    async def test_empty_user_gets_empty_results(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.post(
            "/v1/memory/nobody/search", json={"query": "anything"}, headers=auth("nobody")
        )
        assert resp.status_code == 200
        assert resp.json() == {
            "results": [],
            "tiers": {"searched": ["hot", "warm"], "choice": "default", "detail": "no cold memories"},
            "degraded": None,  # the embedding model answered (issue 44: "embeddings_unavailable" else)
        }


class TestListAndDelete:
    async def test_list_pages_newest_first(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        messages = [
            {"role": "user", "content": f"fact number {i}", "id": f"f{i}", "timestamp": 1_700_000_000 + i}
            for i in range(7)
        ]
        await client.post(
            "/v1/memory/alice/messages", json={"session_id": "s", "messages": messages}, headers=auth("alice")
        )
        page1 = (await client.get("/v1/memory/alice/list?limit=3", headers=auth("alice"))).json()
        page3 = (await client.get("/v1/memory/alice/list?limit=3&offset=6", headers=auth("alice"))).json()
        assert page1["total"] == 7
        assert [m["source_message_ids"][0] for m in page1["items"]] == ["f6", "f5", "f4"]
        assert [m["source_message_ids"][0] for m in page3["items"]] == ["f0"]
        by_importance = await client.get("/v1/memory/alice/list?sort=importance", headers=auth("alice"))
        assert by_importance.status_code == 200
        assert by_importance.json()["total"] == 7

    async def test_delete_then_gone_everywhere(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        memories = (await ingest(client, auth)).json()["memories"]
        target = memories[0]["id"]
        resp = await client.delete(f"/v1/memory/alice/{target}", headers=auth("alice"))
        assert resp.status_code == 204
        assert resp.content == b""
        search = await client.post(
            "/v1/memory/alice/search", json={"query": "我住在哪个城市？", "top_k": 100}, headers=auth("alice")
        )
        assert target not in [r["id"] for r in search.json()["results"]]
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 3
        again = await client.delete(f"/v1/memory/alice/{target}", headers=auth("alice"))
        assert_envelope(again, 404, "memory_not_found")

    async def test_cannot_delete_another_users_memory_even_as_owner_of_path(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        alice_id = (await ingest(client, auth)).json()["memories"][0]["id"]
        resp = await client.delete(f"/v1/memory/bob/{alice_id}", headers=auth("bob"))
        assert_envelope(resp, 404, "memory_not_found")
        listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
        assert listed["total"] == 4


class TestBusy:
    async def test_a_held_write_lock_gives_409_memory_busy_and_loses_nothing(
        self, settings: Settings, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """Another write of the user holds the long-term lock past the bounded wait: the write is refused
        and stores nothing. Deletes do not wait for that lock (a tombstone keeps them safe), so one goes
        through at once."""
        quick = settings.model_copy(update={"ltm_lock_wait_seconds": 0.2})
        async with app_client(quick, embedder) as (client, _):
            memory_id = (await ingest(client, auth)).json()["memories"][0]["id"]
            r = redis_of(quick)
            await r.set(keys.ltm_lock("alice"), "someone-else", ex=10)
            stored = await ingest(client, auth, session_id="s2")
            body = assert_envelope(stored, 409, "memory_busy")
            assert stored.headers["retry-after"] == "1"
            assert "busy" in body["detail"]
            deleted = await client.delete(f"/v1/memory/alice/{memory_id}", headers=auth("alice"))
            assert deleted.status_code == 204
            assert await r.get(keys.ltm_lock("alice")) == "someone-else"  # still held throughout
            await r.delete(keys.ltm_lock("alice"))
            await r.aclose()
            listed = (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()
            assert listed["total"] == 3  # the refused write stored nothing; the delete went through


class TestAccess:
    async def test_user_on_other_users_path_is_forbidden(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        await ingest(client, auth)
        for method, path, body in [
            ("POST", "/v1/memory/alice/messages", {"session_id": "s", "messages": ZH_EN_MESSAGES}),
            ("POST", "/v1/memory/alice/search", {"query": "杭州"}),
            ("GET", "/v1/memory/alice/list", None),
            ("DELETE", "/v1/memory/alice/mem_x", None),
        ]:
            resp = await client.request(method, path, json=body, headers=auth("mallory"))
            assert_envelope(resp, 403, "forbidden")

    async def test_admin_may_act_for_anyone(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        await ingest(client, auth)
        resp = await client.post(
            "/v1/memory/alice/search", json={"query": "杭州"}, headers=auth("ops", role="admin")
        )
        assert resp.status_code == 200
        assert resp.json()["results"]

    @pytest.mark.parametrize(
        "header",
        [
            None,
            "Bearer not.a.token",
            "Basic YWxpY2U6c2VjcmV0",
        ],
    )
    async def test_missing_or_garbage_token(self, client: httpx.AsyncClient, header: str | None) -> None:
        headers = {"Authorization": header} if header else {}
        resp = await client.post("/v1/memory/alice/search", json={"query": "x"}, headers=headers)
        assert_envelope(resp, 401)
        assert resp.headers["www-authenticate"] == "Bearer"

    async def test_unauthenticated_gets_401_before_validation(self, client: httpx.AsyncClient) -> None:
        resp = await client.post("/v1/memory/alice/search", json={"top_k": 0})
        assert_envelope(resp, 401)


class TestBadInput:
    @pytest.mark.parametrize(
        ("body", "status", "code"),
        [
            ({"session_id": "s", "messages": []}, 422, "validation_error"),
            (
                {"session_id": "s", "messages": [{"role": "user", "content": "x" * 32_001}]},
                422,
                "validation_error",
            ),
            ({"session_id": "s", "messages": [{"role": "system", "content": "x"}]}, 422, "validation_error"),
            (
                {"session_id": "s", "messages": [{"role": "user", "content": "x", "timestamp": "昨天"}]},
                422,
                None,
            ),
            ({"session_id": "s", "messages": [{"role": "user", "content": "x", "id": "i" * 129}]}, 422, None),
            ({"messages": [{"role": "user", "content": "x"}]}, 422, "validation_error"),
            ({"session_id": "s", "messages": [{"role": "user", "content": "x"}], "extra": 1}, 422, None),
        ],
    )
    async def test_ingest_validation(
        self,
        client: httpx.AsyncClient,
        auth: AuthHeaders,
        body: dict[str, object],
        status: int,
        code: str | None,
    ) -> None:
        resp = await client.post("/v1/memory/alice/messages", json=body, headers=auth("alice"))
        assert_envelope(resp, status, code)

    @pytest.mark.parametrize("top_k", [0, 1000, -1, "many"])
    async def test_search_top_k(self, client: httpx.AsyncClient, auth: AuthHeaders, top_k: object) -> None:
        resp = await client.post(
            "/v1/memory/alice/search", json={"query": "x", "top_k": top_k}, headers=auth("alice")
        )
        body = assert_envelope(resp, 422, "validation_error")
        assert "top_k" in body["detail"]

    async def test_non_json_body(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.post(
            "/v1/memory/alice/search",
            content=b"{not json",
            headers={**auth("alice"), "content-type": "application/json"},
        )
        assert_envelope(resp, 400, "invalid_json")

    async def test_form_body(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        resp = await client.post("/v1/memory/alice/search", content=b"query=x", headers=auth("alice"))
        assert 400 <= resp.status_code < 500
        assert_envelope(resp, resp.status_code)

    async def test_ten_megabyte_body(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        big = b'{"query": "' + b"x" * (10 * 1024 * 1024) + b'"}'
        resp = await client.post(
            "/v1/memory/alice/search",
            content=big,
            headers={**auth("alice"), "content-type": "application/json"},
        )
        assert_envelope(resp, 413, "payload_too_large")

    async def test_chunked_oversized_body(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        async def chunks() -> AsyncIterator[bytes]:
            for _ in range(10):
                yield b"x" * (1024 * 1024)

        resp = await client.post(
            "/v1/memory/alice/search",
            content=chunks(),
            headers={**auth("alice"), "content-type": "application/json"},
        )
        assert_envelope(resp, 413, "payload_too_large")

    async def test_bad_paths(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        assert_envelope(await client.get("/v1/nowhere", headers=auth("alice")), 404, "not_found")
        assert_envelope(
            await client.put("/v1/memory/alice/list", headers=auth("alice")), 405, "method_not_allowed"
        )
        resp = await client.get("/v1/memory/alice/list?limit=0", headers=auth("alice"))
        assert_envelope(resp, 422)
        resp = await client.get("/v1/memory/alice/list?sort=random", headers=auth("alice"))
        assert_envelope(resp, 422)
        resp = await client.post("/v1/memory/a%7Bb%7D/search", json={"query": "x"}, headers=auth("alice"))
        assert 400 <= resp.status_code < 500


class TestRequestIds:
    async def test_generated_and_echoed(self, client: httpx.AsyncClient) -> None:
        resp = await client.get("/healthz")
        assert len(resp.headers["x-request-id"]) == 32
        resp = await client.get("/healthz", headers={"X-Request-ID": "trace-abc.123"})
        assert resp.headers["x-request-id"] == "trace-abc.123"

    async def test_unsafe_client_id_is_replaced(self, client: httpx.AsyncClient) -> None:
        resp = await client.get("/healthz", headers={"X-Request-ID": "bad id\twith spaces"})
        assert resp.headers["x-request-id"] != "bad id\twith spaces"
