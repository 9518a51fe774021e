"""IDOR sweep and list filters: a user token never learns anything about another user."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import AuthHeaders, error_code, error_detail

pytestmark = pytest.mark.integration

# every route that takes a user_id, with a body where it needs one
ROUTES: list[tuple[str, str, dict[str, object] | None]] = [
    ("POST", "/v1/memory/{u}/messages", {"session_id": "s", "messages": [{"role": "user", "content": "hi"}]}),
    ("POST", "/v1/memory/{u}/search", {"query": "杭州"}),
    ("GET", "/v1/memory/{u}/list", None),
    ("GET", "/v1/memory/{u}/export", None),
    ("POST", "/v1/memory/{u}/forget", {"topic": "travel"}),
    ("DELETE", "/v1/memory/{u}?confirm={u}", None),
    ("DELETE", "/v1/memory/{u}/{mid}", None),
    ("GET", "/v1/sessions/{u}/s1", None),
    ("DELETE", "/v1/sessions/{u}/s1", None),
    ("POST", "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "user_id": "{u}"}),
]


def _fill(value: object, user: str, mid: str) -> object:
    if isinstance(value, str):
        return value.replace("{u}", user).replace("{mid}", mid)
    if isinstance(value, dict):
        return {k: _fill(v, user, mid) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, user, mid) for v in value]
    return value


class TestIdor:
    @pytest.mark.parametrize(("method", "path", "body"), ROUTES)
    async def test_other_users_routes_are_forbidden_and_say_nothing(
        self,
        client: httpx.AsyncClient,
        auth: AuthHeaders,
        method: str,
        path: str,
        body: dict[str, object] | None,
    ) -> None:
        stored = await client.post(
            "/v1/memory/alice/messages",
            json={"session_id": "s1", "messages": [{"role": "user", "content": "我住在杭州"}]},
            headers=auth("alice"),
        )
        existing = stored.json()["memories"][0]["id"]
        answers = []
        for target, mid in (("alice", existing), ("nobody", "mem_doesnotexist")):
            resp = await client.request(
                method, str(_fill(path, target, mid)), json=_fill(body, target, mid), headers=auth("mallory")
            )
            assert resp.status_code == 403, resp.text
            answers.append((resp.status_code, error_code(resp), error_detail(resp)))
        assert answers[0] == answers[1]  # same answer whether alice's data exists or not
        assert (await client.get("/v1/memory/alice/list", headers=auth("alice"))).json()["total"] == 1


class TestListFilters:
    async def test_topic_session_and_source(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        for session, messages in (
            (
                "trip",
                [("user", "下周要去日本旅行，机票订好了"), ("assistant", "Have a great flight to Tokyo!")],
            ),
            ("work", [("user", "明天要和客户开项目会议"), ("user", "the meeting with my boss went well")]),
        ):
            await client.post(
                "/v1/memory/alice/messages",
                json={"session_id": session, "messages": [{"role": r, "content": c} for r, c in messages]},
                headers=auth("alice"),
            )

        async def contents(query: str) -> list[str]:
            resp = await client.get(f"/v1/memory/alice/list?{query}", headers=auth("alice"))
            assert resp.status_code == 200, resp.text
            return sorted(m["content"] for m in resp.json()["items"])

        assert await contents("topic=travel") == [
            "Have a great flight to Tokyo!",
            "下周要去日本旅行，机票订好了",
        ]
        assert await contents("topic=work") == [
            "the meeting with my boss went well",
            "明天要和客户开项目会议",
        ]
        assert await contents("session_id=trip&source=assistant") == ["Have a great flight to Tokyo!"]
        assert (
            await client.get("/v1/memory/alice/list?source=robot", headers=auth("alice"))
        ).status_code == 422
