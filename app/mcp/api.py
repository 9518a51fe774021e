"""A small async client of mnemo's public HTTP API, acting with one bearer token. The MCP tools use
nothing else, so an MCP client can do exactly what the token may do through the API.

Every id is checked against the service's id rule before a path is built (an agent's placeholder or a
model's invented id is refused here, never sent), each path segment is fully percent-encoded (dots too:
httpx removes `.` and `..` segments), and a redirect is an error, never followed or parsed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import jwt

from app.mcp.rules import ID_RULE, is_valid_id, path_segment


class ApiError(Exception):
    """A non-2xx answer of the API, with its error envelope (`code` is mnemo's error code)."""

    def __init__(self, status: int, code: str, detail: str, request_id: str = "") -> None:
        super().__init__(f"{status} {code}: {detail}")
        self.status = status
        self.code = code
        self.detail = detail
        self.request_id = request_id


def token_subject(token: str) -> str:
    """The `sub` of a token, read without verifying it: only to default the user id; the API verifies."""
    try:
        sub = jwt.decode(token, options={"verify_signature": False}).get("sub")
    except jwt.InvalidTokenError:
        return ""
    return sub if isinstance(sub, str) else ""


def token_problem(subject: str) -> str | None:
    """Why the token's subject cannot be the default user of a call (None: it can), in words that name
    the token, not an argument the caller never gave."""
    if not subject:
        return (
            "the token given to mnemo's MCP server (--token or MNEMO_TOKEN) is not a mnemo token: it has "
            "no subject (sub). Mint one with `python -m app.cli.token --sub <user id>` "
            "(令牌不是 mnemo 的 JWT，缺少 sub)"
        )
    if not is_valid_id(subject):
        return (
            f"the token's subject (sub) {subject[:80]!r} is no user id ({ID_RULE}): mint a token for the "
            "user, or name user_id (令牌的 sub 不是合法的用户 id)"
        )
    return None


def _path(part: str, what: str) -> str:
    """One path segment from an id the caller gave: refused unless it follows the id rule."""
    if not is_valid_id(part):
        raise ApiError(422, "validation_error", f"{what} must be {ID_RULE}; got {part!r}")
    return path_segment(part)


@dataclass(frozen=True, slots=True)
class MnemoApi:
    """`user_id` is the token's own user: the default subject of every call."""

    client: httpx.AsyncClient
    token: str
    user_id: str
    request_id: str = ""

    async def _call(
        self,
        method: str,
        path: str,
        *,
        body: Mapping[str, Any] | None = None,
        params: Mapping[str, Any] | None = None,
        extra_headers: Mapping[str, str] | None = None,
    ) -> Any:
        headers = {"Authorization": f"Bearer {self.token}", **(extra_headers or {})}
        if self.request_id:
            headers["X-Request-ID"] = self.request_id
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = await self.client.request(method, path, json=body, params=query, headers=headers)
        except httpx.HTTPError as exc:
            where = str(self.client.base_url).rstrip("/")
            raise ApiError(
                503,
                "mnemo_unreachable",
                f"mnemo at {where} did not answer ({type(exc).__name__}): is it running there? "
                f"(mnemo 在 {where} 没有响应)",
            ) from exc
        if not response.is_success:  # 3xx included: this client never follows a redirect
            try:
                envelope = response.json()
            except ValueError:
                envelope = {}
            if not isinstance(envelope, dict):
                envelope = {}
            raise ApiError(
                response.status_code,
                str(envelope.get("error", "http_error")),
                str(envelope.get("detail", f"{response.reason_phrase} (mnemo never redirects its API)")),
                str(envelope.get("request_id", "")),
            )
        return None if response.status_code == 204 else response.json()

    async def ingest(
        self, user_id: str, session_id: str, messages: list[dict[str, Any]], time_zone: str | None = None
    ) -> Any:
        body: dict[str, Any] = {"session_id": session_id, "messages": messages}
        if time_zone is not None:
            body["time_zone"] = time_zone
        return await self._call("POST", f"/v1/memory/{_path(user_id, 'user_id')}/messages", body=body)

    async def search(self, user_id: str, body: Mapping[str, Any]) -> Any:
        return await self._call("POST", f"/v1/memory/{_path(user_id, 'user_id')}/search", body=body)

    async def list(self, user_id: str, params: Mapping[str, Any]) -> Any:
        return await self._call("GET", f"/v1/memory/{_path(user_id, 'user_id')}/list", params=params)

    async def forget(self, user_id: str, body: Mapping[str, Any]) -> Any:
        return await self._call("POST", f"/v1/memory/{_path(user_id, 'user_id')}/forget", body=body)

    async def delete(self, user_id: str, memory_id: str) -> None:
        await self._call("DELETE", f"/v1/memory/{_path(user_id, 'user_id')}/{_path(memory_id, 'memory_id')}")

    async def deleted(self, user_id: str, params: Mapping[str, Any]) -> Any:
        return await self._call("GET", f"/v1/memory/{_path(user_id, 'user_id')}/deleted", params=params)

    async def restore(self, user_id: str, memory_id: str) -> Any:
        return await self._call(
            "POST", f"/v1/memory/{_path(user_id, 'user_id')}/{_path(memory_id, 'memory_id')}/restore"
        )

    async def memory(self, user_id: str, memory_id: str) -> Any:
        return await self._call(
            "GET", f"/v1/memory/{_path(user_id, 'user_id')}/{_path(memory_id, 'memory_id')}"
        )

    async def edit(self, user_id: str, memory_id: str, body: Mapping[str, Any], version: str) -> Any:
        path = f"/v1/memory/{_path(user_id, 'user_id')}/{_path(memory_id, 'memory_id')}"
        return await self._call("PATCH", path, body=body, extra_headers={"If-Match": f'"{version}"'})

    async def profile(self, user_id: str) -> Any:
        return await self._call("GET", f"/v1/memory/{_path(user_id, 'user_id')}/profile")

    async def entities(self, user_id: str, params: Mapping[str, Any]) -> Any:
        return await self._call("GET", f"/v1/memory/{_path(user_id, 'user_id')}/entities", params=params)

    async def entity(self, user_id: str, entity_id: str) -> Any:
        path = f"/v1/memory/{_path(user_id, 'user_id')}/entities/{_path(entity_id, 'entity_id')}"
        return await self._call("GET", path)

    async def merges(self, user_id: str) -> Any:
        return await self._call("GET", f"/v1/memory/{_path(user_id, 'user_id')}/entities/merges")

    async def merge(self, user_id: str, source: str, target: str) -> Any:
        body = {"source": source, "target": target}
        return await self._call("POST", f"/v1/memory/{_path(user_id, 'user_id')}/entities/merges", body=body)

    async def split(self, user_id: str, merge_id: str) -> Any:
        path = f"/v1/memory/{_path(user_id, 'user_id')}/entities/merges/{_path(merge_id, 'merge_id')}"
        return await self._call("DELETE", path)

    async def sessions(self, user_id: str) -> Any:
        return await self._call("GET", f"/v1/sessions/{_path(user_id, 'user_id')}")

    async def session(self, user_id: str, session_id: str) -> Any:
        return await self._call(
            "GET", f"/v1/sessions/{_path(user_id, 'user_id')}/{_path(session_id, 'session_id')}"
        )
