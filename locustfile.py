"""Load test for mnemo (issue #6): chat that remembers, memory search, and an admin.

Run the service in one terminal, then locust in another (from the repo root, so `.env` is found):

    make run
    .venv/bin/locust -f locustfile.py --headless -u 100 -r 10 -t 2m --host http://127.0.0.1:8000 --only-summary

Keep the statistics as CSV (bench/results/locust_stats.csv, ..._failures.csv, ..._stats_history.csv):

    .venv/bin/locust -f locustfile.py --headless -u 100 -r 10 -t 2m --host http://127.0.0.1:8000 \\
        --only-summary --csv bench/results/locust

Interactive (web UI on http://127.0.0.1:8089): `.venv/bin/locust -f locustfile.py`.

Users (each simulated user has its own id `load-<n>` and its own token, so it has its own rate-limit budget):

- `ChatUser` (weight 6): `POST /v1/chat/completions` in Chinese and English: tells a fact ("我住在杭州，记住这个",
  "My sister Anna lives in Lisbon") or asks about one ("我住在哪里？", "Where does my sister live?"), about a
  third of the turns streamed (`stream: true`, the SSE is read to `[DONE]` and the whole stream is timed;
  with `LOCUST_FIRST_TOKEN=1` the time to the first token is reported too, as a pseudo-request
  `SSE /v1/chat/completions [first token]`). It moves to a new session every few turns, so recall
  (which excludes the current session) has earlier sessions to draw on.
- `SearchUser` (weight 3): stores a few facts once (`POST /v1/memory/[user]/messages`), then searches
  (`POST /v1/memory/[user]/search`) in both languages and now and then stores another message.
- `AdminUser` (weight 1): an admin token (`"role": "admin"`); lists a load user's memories, deletes one of them
  (an id taken from the list, never one another admin already took) and reads a chat session.

Tokens are HS256 JWTs minted here with `AUTH_JWT_SECRET` from the environment, else from `.env` in the
working directory (where `make run` writes it), else from `.env` next to this file; `AUTH_JWT_AUDIENCE` /
`AUTH_JWT_ISSUER` are honoured the same way. A response whose status is not the expected one is a failure,
429 (rate limited) included: every task waits 1-3 s (the admin 2-5 s) and makes at most two requests, so a
user stays far below the default 100 requests per minute.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time
from functools import cache
from pathlib import Path
from typing import Any, cast

import jwt
from locust import HttpUser, between, task
from locust.clients import ResponseContextManager

ALGORITHM = "HS256"
ADMIN_ROLE = "admin"
TOKEN_TTL_SECONDS = 6 * 3600
USER_PREFIX = "load"
DEFAULT_HOST = "http://127.0.0.1:8000"
TURNS_PER_SESSION = 5
TIMEOUT_SECONDS = 60.0
# LOCUST_FIRST_TOKEN=1 adds a pseudo-request per stream (time to the first token); off by default so the
# request counts and req/s stay those of real HTTP requests
REPORT_FIRST_TOKEN = os.environ.get("LOCUST_FIRST_TOKEN", "") not in {"", "0", "false", "no"}

CHAT = "/v1/chat/completions"
CHAT_STREAM = "/v1/chat/completions [stream]"
FIRST_TOKEN = "/v1/chat/completions [first token]"
MESSAGES = "/v1/memory/[user]/messages"
SEARCH = "/v1/memory/[user]/search"
LIST = "/v1/memory/[user]/list"
DELETE = "/v1/memory/[user]/[memory_id]"
SESSION = "/v1/sessions/[user]/[session]"

# (a fact to tell, a question that recalls it), Chinese and English
FACTS: tuple[tuple[str, str], ...] = (
    ("我住在杭州，记住这个", "我住在哪里？"),
    ("记住：我对花生过敏", "我对什么过敏？"),
    ("我妹妹小雨在上海读大学", "我妹妹在哪里读书？"),
    ("我的订单号是 A12345，下周三送到", "我的订单号是多少？"),
    ("我最喜欢喝龙井茶，不喜欢咖啡", "我喜欢喝什么茶？"),
    ("下个月我要去成都出差三天", "我下个月去哪里出差？"),
    ("My sister Anna lives in Lisbon", "Where does my sister live?"),
    ("Remember that my dog is called Biscuit", "What is my dog's name?"),
    ("I prefer green tea over coffee", "What do I like to drink?"),
    ("My dentist appointment is on March 14 at 3pm", "When is my dentist appointment?"),
    ("I work as a data engineer at a logistics company", "What is my job?"),
    ("Don't forget: my quote number is Q-2291", "What was my quote number?"),
)
SEARCH_QUERIES: tuple[str, ...] = (
    "我住在哪个城市？",
    "我对什么过敏？",
    "我妹妹在哪里？",
    "订单号",
    "Where does my sister live?",
    "what is my dog called?",
    "what do I drink?",
    "when is the dentist?",
)

_user_numbers = itertools.count(1)
_admin_numbers = itertools.count(1)
# Shared by the users of this locust process (gevent: no preemption between these statements).
_load_users: list[str] = []
_chat_sessions: list[tuple[str, str]] = []
_claimed_memory_ids: set[str] = set()


def _read_dotenv(path: Path) -> dict[str, str]:
    values: dict[str, str] = {}
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return values
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip().upper()] = value
    return values


def setting(name: str) -> str | None:
    """`name` from the environment, else from ./.env, else from .env next to this file."""
    if value := os.environ.get(name, "").strip():
        return value
    for path in (Path.cwd() / ".env", Path(__file__).resolve().parent / ".env"):
        if value := _read_dotenv(path).get(name, "").strip():
            return value
    return None


@cache
def jwt_secret() -> str:
    secret = setting("AUTH_JWT_SECRET")
    if not secret:
        raise RuntimeError(
            "AUTH_JWT_SECRET is not set and no .env holds it: export the service's secret, "
            "or run locust from the directory where `make run` wrote .env"
        )
    return secret


def mint_token(sub: str, *, role: str | None = None, ttl_seconds: int = TOKEN_TTL_SECONDS) -> str:
    """An HS256 token for `sub`, as the service's `python -m app.cli.token` mints it."""
    now = int(time.time())
    claims: dict[str, Any] = {"sub": sub, "iat": now, "exp": now + ttl_seconds}
    if role:
        claims["role"] = role
    if audience := setting("AUTH_JWT_AUDIENCE"):
        claims["aud"] = audience
    if issuer := setting("AUTH_JWT_ISSUER"):
        claims["iss"] = issuer
    return jwt.encode(claims, jwt_secret(), algorithm=ALGORITHM)


def new_user_id() -> str:
    return f"{USER_PREFIX}-{next(_user_numbers)}"


def new_admin_id() -> str:
    return f"{USER_PREFIX}-admin-{next(_admin_numbers)}"


def _fail(resp: ResponseContextManager, reason: str) -> None:
    resp.failure(reason)  # type: ignore[no-untyped-call]


def _meta(resp: ResponseContextManager) -> dict[str, Any]:
    """What locust will report for this request (a dict, typed as a Mapping)."""
    return cast(dict[str, Any], resp.request_meta)


def _body_excerpt(resp: ResponseContextManager) -> str:
    try:
        return resp.text[:300]
    except Exception:  # a streamed body that broke off
        return "<unreadable body>"


def expect_status(resp: ResponseContextManager, status: int) -> bool:
    """Fail the request unless it answered `status` (429 from the rate limiter included)."""
    if resp.status_code == status:
        return True
    if resp.status_code == 0:
        _fail(resp, f"no response: {resp.error!r}")
    else:
        _fail(resp, f"expected {status}, got {resp.status_code}: {_body_excerpt(resp)}")
    return False


def json_object(resp: ResponseContextManager) -> dict[str, Any] | None:
    try:
        data = resp.json()
    except ValueError:
        _fail(resp, f"not JSON: {_body_excerpt(resp)}")
        return None
    if not isinstance(data, dict):
        _fail(resp, f"not a JSON object: {_body_excerpt(resp)}")
        return None
    return data


def expect_json(resp: ResponseContextManager, status: int, field: str, kind: type) -> dict[str, Any] | None:
    """Fail the request unless it answered `status` with a JSON object whose `field` is a `kind`."""
    if not expect_status(resp, status) or (data := json_object(resp)) is None:
        return None
    if not isinstance(data.get(field), kind):
        _fail(resp, f"no {kind.__name__} {field!r}: {_body_excerpt(resp)}")
        return None
    return data


class MnemoUser(HttpUser):
    """A user with its own id and token."""

    abstract = True
    host = DEFAULT_HOST
    user_id: str
    token: str

    def on_start(self) -> None:
        self.user_id = new_user_id()
        self.token = mint_token(self.user_id)
        _load_users.append(self.user_id)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


class ChatUser(MnemoUser):
    """Chats through the OpenAI-compatible endpoint: tells facts, asks about them, sometimes streaming."""

    weight = 6
    wait_time = between(1, 3)

    def on_start(self) -> None:
        super().on_start()
        self.session_number = 0
        self.turns = 0
        self.told: list[int] = []
        self._next_session()

    def _next_session(self) -> None:
        self.session_number += 1
        self.turns = 0
        self.session_id = f"s{self.session_number}"
        _chat_sessions.append((self.user_id, self.session_id))

    def _message(self, *, recall: bool) -> str:
        if recall and self.told:
            return FACTS[random.choice(self.told)][1]
        index = random.randrange(len(FACTS))
        if recall:
            return FACTS[index][1]
        self.told.append(index)
        return FACTS[index][0]

    def _body(self, content: str, *, stream: bool) -> dict[str, Any]:
        self.turns += 1
        if self.turns > TURNS_PER_SESSION:
            self._next_session()
            self.turns = 1
        return {
            "model": "mnemo",
            "messages": [{"role": "user", "content": content}],
            "session_id": self.session_id,
            "stream": stream,
        }

    @task(3)
    def tell_fact(self) -> None:
        self._chat(self._body(self._message(recall=False), stream=False))

    @task(4)
    def ask_recall(self) -> None:
        self._chat(self._body(self._message(recall=True), stream=False))

    @task(2)
    def ask_recall_streaming(self) -> None:
        self._chat_stream(self._body(self._message(recall=True), stream=True))

    @task(1)
    def tell_fact_streaming(self) -> None:
        self._chat_stream(self._body(self._message(recall=False), stream=True))

    def _chat(self, body: dict[str, Any]) -> None:
        with self.client.post(
            CHAT, json=body, headers=self.headers(), name=CHAT, catch_response=True, timeout=TIMEOUT_SECONDS
        ) as resp:
            if not expect_status(resp, 200) or (data := json_object(resp)) is None:
                return
            choices = data.get("choices") or [{}]
            content = (choices[0].get("message") or {}).get("content")
            debug = data.get("debug") or {}
            if not isinstance(content, str) or not content:
                _fail(resp, f"no assistant message: {_body_excerpt(resp)}")
            elif debug.get("session_id") != body["session_id"]:
                _fail(resp, f"debug.session_id is {debug.get('session_id')!r}, sent {body['session_id']!r}")

    def _chat_stream(self, body: dict[str, Any]) -> None:
        started = time.perf_counter()
        with self.client.post(
            CHAT,
            json=body,
            headers={**self.headers(), "Accept": "text/event-stream"},
            name=CHAT_STREAM,
            catch_response=True,
            stream=True,
            timeout=TIMEOUT_SECONDS,
        ) as resp:
            if not expect_status(resp, 200):
                return
            problem = self._read_sse(resp, started, body["session_id"])
            # locust timed the headers only: report the whole stream
            _meta(resp)["response_time"] = (time.perf_counter() - started) * 1000
            if problem:
                _fail(resp, problem)

    def _read_sse(self, resp: ResponseContextManager, started: float, session_id: str) -> str | None:
        """Reads the event stream to its end; returns what was wrong with it, if anything."""
        events: list[str] = []
        size = 0
        first_token = False
        try:
            for raw in resp.iter_lines():
                size += len(raw) + 1
                line = raw.decode("utf-8") if isinstance(raw, bytes) else str(raw)
                if not line.startswith("data:"):
                    continue  # blank separators, ": ping" comments, event/id fields
                events.append(line.removeprefix("data:").strip())
                if REPORT_FIRST_TOKEN and not first_token and _has_content(events[-1]):
                    first_token = True
                    self.environment.events.request.fire(
                        request_type="SSE",
                        name=FIRST_TOKEN,
                        response_time=(time.perf_counter() - started) * 1000,
                        response_length=0,
                        response=None,
                        exception=None,
                        context={},
                    )
        except Exception as exc:  # the connection broke mid-stream
            return f"stream broke off after {len(events)} events: {exc!r}"
        _meta(resp)["response_length"] = size
        if not events or events[-1] != "[DONE]":
            return f"stream did not end with [DONE] ({len(events)} events)"
        try:
            chunks = [json.loads(e) for e in events[:-1]]
        except ValueError:
            return f"an event is not JSON: {events[:3]!r}"
        if not chunks or not all(isinstance(c, dict) for c in chunks):
            return f"no chunk objects before [DONE]: {events[:3]!r}"
        last: dict[str, Any] = chunks[-1]
        if "error" in last:
            return f"in-band error: {last['error']!r}"
        debug = last.get("debug") or {}
        if not last.get("response") or debug.get("session_id") != session_id:
            return f"last chunk lacks response or this session's debug: {events[-2][:300]}"
        return None


def _has_content(event: str) -> bool:
    """Whether an SSE data payload is a chunk carrying some assistant text."""
    try:
        data = json.loads(event)
    except ValueError:
        return False
    if not isinstance(data, dict):
        return False
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return False
    delta = choices[0].get("delta")
    return isinstance(delta, dict) and bool(delta.get("content"))


class SearchUser(MnemoUser):
    """Stores a few facts once, then searches them in Chinese and English."""

    weight = 3
    wait_time = between(1, 3)

    def on_start(self) -> None:
        super().on_start()
        self.stored = 0
        facts = random.sample(FACTS, 4)
        self._store([fact for fact, _ in facts], session_id="seed")

    def _store(self, contents: list[str], *, session_id: str) -> None:
        messages = []
        for content in contents:
            self.stored += 1
            messages.append({"role": "user", "content": content, "id": f"m{self.stored}"})
        with self.client.post(
            f"/v1/memory/{self.user_id}/messages",
            json={"session_id": session_id, "messages": messages},
            headers=self.headers(),
            name=MESSAGES,
            catch_response=True,
            timeout=TIMEOUT_SECONDS,
        ) as resp:
            expect_json(resp, 200, "stored", int)

    def _search(self, body: dict[str, Any]) -> None:
        with self.client.post(
            f"/v1/memory/{self.user_id}/search",
            json=body,
            headers=self.headers(),
            name=SEARCH,
            catch_response=True,
            timeout=TIMEOUT_SECONDS,
        ) as resp:
            expect_json(resp, 200, "results", list)

    @task(6)
    def search(self) -> None:
        self._search({"query": random.choice(SEARCH_QUERIES), "top_k": random.choice((3, 5, 10))})

    @task(2)
    def search_recent(self) -> None:
        self._search({"query": random.choice(SEARCH_QUERIES), "since": int(time.time()) - 86400})

    @task(1)
    def store_message(self) -> None:
        self._store([random.choice(FACTS)[0]], session_id=f"s{random.randint(1, 3)}")


class AdminUser(HttpUser):
    """An operator: lists a load user's memories, deletes one, reads a chat session."""

    weight = 1
    wait_time = between(2, 5)
    host = DEFAULT_HOST

    def on_start(self) -> None:
        self.admin_id = new_admin_id()
        self.token = mint_token(self.admin_id, role=ADMIN_ROLE)

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def _target(self) -> str:
        return random.choice(_load_users) if _load_users else self.admin_id

    @task(2)
    def list_and_delete(self) -> None:
        user = self._target()
        with self.client.get(
            f"/v1/memory/{user}/list",
            params={"limit": 20, "sort": random.choice(("recent", "importance"))},
            headers=self.headers(),
            name=LIST,
            catch_response=True,
            timeout=TIMEOUT_SECONDS,
        ) as resp:
            data = expect_json(resp, 200, "items", list)
        if data is None:
            return
        ids = [i["id"] for i in data["items"] if isinstance(i, dict) and isinstance(i.get("id"), str)]
        free = [i for i in ids if i not in _claimed_memory_ids]
        if not free:
            return
        memory_id = random.choice(free)
        _claimed_memory_ids.add(memory_id)
        with self.client.delete(
            f"/v1/memory/{user}/{memory_id}",
            headers=self.headers(),
            name=DELETE,
            catch_response=True,
            timeout=TIMEOUT_SECONDS,
        ) as resp:
            expect_status(resp, 204)

    @task(1)
    def read_session(self) -> None:
        user, session = random.choice(_chat_sessions) if _chat_sessions else (self.admin_id, "s1")
        with self.client.get(
            f"/v1/sessions/{user}/{session}",
            headers=self.headers(),
            name=SESSION,
            catch_response=True,
            timeout=TIMEOUT_SECONDS,
        ) as resp:
            expect_json(resp, 200, "buffer", list)
