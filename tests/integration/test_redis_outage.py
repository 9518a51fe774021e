"""Redis outages against a real redis-server of the test's own (issue #12).

Every route that needs Redis answers 503 `redis_unavailable` with Retry-After while Redis is stopped,
hung, loading its AOF or failing over, never 500, and the export checks Redis before its first byte.
A restart from AOF costs only the seconds Redis is really down (stale pooled connections are retried
on fresh ones, a lock left behind by a failed release does not hold the next turn). A turn's outcome is
its commit: Redis going away right after it (tests/redis_cutter.py cuts the network at that exact point)
still answers 200, and a retry with the same Idempotency-Key is answered from the record, never
committed twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import redis
import redis.asyncio as aredis
from prometheus_client import REGISTRY

from app.settings import Settings
from harness.services import RestartableRedis, ServerProcess, free_port
from memory import Embedder, keys
from memory.outbox.stream import Outbox
from tests.conftest import AuthHeaders, app_client, error_code, make_settings
from tests.redis_cutter import Command, RedisCutter, is_outbox_append

pytestmark = [pytest.mark.integration, pytest.mark.standalone]  # its own restartable redis-server

USER = "alice"
SAID = "我住在杭州，离西湖不远。I live in Hangzhou, near the West Lake."


def outage_settings(redis_url: str, chroma: ServerProcess, **overrides: Any) -> Settings:
    return make_settings(redis_url, chroma.url, **overrides)


def chat_body(text: str = SAID, session: str = "s1", **extra: Any) -> dict[str, Any]:
    return {"model": "mnemo", "messages": [{"role": "user", "content": text}], "session_id": session, **extra}


def sse_events(body: str) -> list[Any]:
    """The `data:` payloads of an SSE body, JSON-decoded ([DONE] kept as the string)."""
    events: list[Any] = []
    for line in body.splitlines():
        if line.startswith("data:"):
            data = line[len("data:") :].strip()
            events.append(data if data == "[DONE]" else json.loads(data))
    return events


def redis_unavailable_problem(resp: httpx.Response) -> str | None:
    """What is wrong with `resp` as a 503 redis_unavailable answer (None: nothing)."""
    if resp.status_code != 503:
        return f"{resp.status_code} {resp.text[:200]}"
    body = resp.json()
    if isinstance(body.get("error"), dict):  # OpenAI's envelope on /v1/chat/* (app/http/openai_errors.py)
        error = body["error"]
        body = {
            "error": error.get("code"),
            "detail": error.get("message"),
            "request_id": body.get("request_id"),
        }
    if set(body) != {"error", "detail", "request_id"} or body["error"] != "redis_unavailable":
        return f"503 with {body}"
    if not isinstance(body["detail"], str) or not body["detail"]:
        return f"no detail in {body}"
    if body["request_id"] != resp.headers.get("X-Request-ID"):
        return f"request id {body['request_id']!r} is not the header's"
    if resp.headers.get("Retry-After") != "2":
        return f"Retry-After {resp.headers.get('Retry-After')!r}"
    return None


def assert_redis_unavailable(resp: httpx.Response, what: str) -> None:
    problem = redis_unavailable_problem(resp)
    assert problem is None, f"{what}: {problem}"


@dataclass(frozen=True)
class Call:
    name: str
    method: str
    path: str
    body: dict[str, Any] | None = None
    admin: bool = False


async def send(client: httpx.AsyncClient, auth: AuthHeaders, call: Call) -> httpx.Response:
    headers = auth("root", role="admin") if call.admin else auth(USER)
    return await client.request(call.method, call.path, json=call.body, headers=headers)


async def seed(client: httpx.AsyncClient, auth: AuthHeaders) -> str:
    """A memory (its id returned), a session with a turn, an audit entry."""
    stored = await client.post(
        f"/v1/memory/{USER}/messages",
        json={
            "session_id": "s0",
            "messages": [{"role": "user", "content": "我喜欢喝龙井茶 / I like Longjing tea"}],
        },
        headers=auth(USER),
    )
    assert stored.status_code == 200, stored.text
    turn = await client.post("/v1/chat/completions", json=chat_body(), headers=auth(USER))
    assert turn.status_code == 200, turn.text
    listed = await client.get(f"/v1/memory/{USER}/list", headers=auth(USER))
    assert listed.status_code == 200
    return str(stored.json()["memories"][0]["id"])


def redis_routes(memory_id: str) -> list[Call]:
    """Every route that needs Redis to do its work."""
    return [
        Call("chat", "POST", "/v1/chat/completions", chat_body()),
        Call("chat stream", "POST", "/v1/chat/completions", chat_body(stream=True)),
        Call(
            "messages",
            "POST",
            f"/v1/memory/{USER}/messages",
            {
                "session_id": "s2",
                "messages": [{"role": "user", "content": "明天下午3点开会 / meeting at 3pm"}],
            },
        ),
        Call(
            "import",
            "POST",
            f"/v1/memory/{USER}/imports",
            {"session_id": "h", "messages": [{"role": "user", "content": "我住在杭州 / I live in Hangzhou"}]},
        ),
        Call("import status", "GET", f"/v1/memory/{USER}/imports/imp_{'0' * 32}"),
        Call("get session", "GET", f"/v1/sessions/{USER}/s1"),
        Call("delete session", "DELETE", f"/v1/sessions/{USER}/s1"),
        Call("delete memory", "DELETE", f"/v1/memory/{USER}/{memory_id}"),
        Call(
            "forget",
            "POST",
            f"/v1/memory/{USER}/forget",
            {"query": "龙井茶 Longjing tea", "min_similarity": 0.3},
        ),
        Call("export", "GET", f"/v1/memory/{USER}/export"),
        Call("erase", "DELETE", f"/v1/memory/{USER}?confirm={USER}"),
        Call("audit", "GET", "/v1/audit", admin=True),
    ]


class TestOutageAnswers503:
    @pytest.mark.parametrize("outage", ["stopped", "hung"])
    async def test_every_route_that_needs_redis(
        self,
        own_redis: RestartableRedis,
        chroma_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
        outage: str,
    ) -> None:
        # a short socket timeout keeps the hung case quick; without the writer no background reads
        settings = outage_settings(
            own_redis.url, chroma_server, redis_socket_timeout=0.5, outbox_worker=False
        )
        async with app_client(settings, embedder) as (client, _):
            memory_id = await seed(client, auth)
            own_redis.kill() if outage == "stopped" else own_redis.pause()
            try:
                problems: list[str] = []
                for call in redis_routes(memory_id):
                    try:
                        problem = redis_unavailable_problem(await send(client, auth, call))
                    except Exception as exc:  # a response that started 200 and was then cut
                        problem = f"body cut: {type(exc).__name__}: {exc}"
                    if problem is not None:
                        problems.append(f"{call.name}: {problem}")
                assert not problems, "\n".join(problems)
                # routes that can do without Redis still answer
                assert (await client.get("/healthz")).status_code == 200
                # a list cannot: which tier answers for a memory being archived is in Redis, and a list
                # without the archived memories would say mnemo forgot them (search says what it searched)
                listed = await client.get(f"/v1/memory/{USER}/list", headers=auth(USER))
                assert redis_unavailable_problem(listed) is None, listed.text
            finally:
                own_redis.resume() if outage == "hung" else own_redis.restart()
            back = await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))
            assert back.status_code == 200, back.text
            assert [m["role"] for m in back.json()["buffer"]] == ["user", "assistant"]

    async def test_failover_readonly_and_masterdown(
        self, own_redis: RestartableRedis, chroma_server: ServerProcess, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """The server we talk to is demoted to a replica of a master that is gone: writes answer
        READONLY, then (stale reads refused) reads answer MASTERDOWN; once it is promoted, turns pass."""
        settings = outage_settings(own_redis.url, chroma_server, outbox_worker=False)
        admin = redis.Redis.from_url(own_redis.url)
        async with app_client(settings, embedder) as (client, _):
            await seed(client, auth)
            admin.replicaof("127.0.0.1", free_port())
            try:
                turn = await client.post(
                    "/v1/chat/completions", json=chat_body("还记得我住哪吗？"), headers=auth(USER)
                )
                assert_redis_unavailable(turn, "chat on a replica")
                stale = await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))
                assert stale.status_code == 200  # a replica serves (stale) reads by default
                admin.config_set("replica-serve-stale-data", "no")
                read = await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))
                assert_redis_unavailable(read, "read on a replica without its master")
            finally:
                admin.config_set("replica-serve-stale-data", "yes")
                admin.replicaof("NO", "ONE")
            promoted = await client.post(
                "/v1/chat/completions", json=chat_body("do you remember where I live?"), headers=auth(USER)
            )
            assert promoted.status_code == 200, promoted.text


class TestRestartFromAof:
    async def test_costs_only_the_seconds_redis_is_down(
        self, own_redis: RestartableRedis, chroma_server: ServerProcess, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """Requests loop through a kill and a restart that loads the AOF for about two seconds
        (answering LOADING meanwhile): only 200s and 503s, and every request started a second after
        Redis is ready succeeds at once: no stale pooled connection, no lock left behind, holds it up."""
        filler = redis.Redis.from_url(own_redis.url)
        with filler.pipeline(transaction=False) as pipe:
            for i in range(4000):
                pipe.set(f"filler:{i}", "x")
            pipe.execute()
        # a long lock TTL: a lock left behind by the outage would hold a later turn for many seconds;
        # no long-term writer in the app: its catching up would only compete for the 2 cores (and so no
        # backpressure either: with nobody writing, the user's partition fills up and turns would wait)
        settings = outage_settings(
            own_redis.url,
            chroma_server,
            session_lock_ttl_seconds=30,
            outbox_worker=False,
            outbox_max_backlog=0,
        )
        results: list[tuple[float, float, str, int, str]] = []  # started, seconds, call, status, code
        async with app_client(settings, embedder) as (client, _):
            await seed(client, auth)
            # many pooled connections, most of them idle (and stale) through the restart
            burst = [
                send(client, auth, Call("get session", "GET", f"/v1/sessions/{USER}/s1")) for _ in range(12)
            ]
            assert {r.status_code for r in await asyncio.gather(*burst)} == {200}
            stop_at = [float("inf")]

            async def loop(worker: int) -> None:
                calls = [
                    Call(
                        "chat",
                        "POST",
                        "/v1/chat/completions",
                        chat_body(f"第{worker}个会话 session {worker}", f"w{worker}"),
                    ),
                    Call("get session", "GET", f"/v1/sessions/{USER}/w{worker}"),
                    Call(
                        "messages",
                        "POST",
                        f"/v1/memory/{USER}/messages",
                        {
                            "session_id": f"w{worker}",
                            "messages": [
                                {"role": "user", "content": f"事实 {worker} fact", "id": f"m{worker}"}
                            ],
                        },
                    ),
                    Call("audit", "GET", "/v1/audit?limit=5", admin=True),
                    Call("export", "GET", f"/v1/memory/{USER}/export"),
                ]
                n = 0
                while time.monotonic() < stop_at[0]:
                    call = calls[n % len(calls)]
                    n += 1
                    started = time.monotonic()
                    resp = await send(client, auth, call)
                    code = error_code(resp) if resp.status_code != 200 else ""
                    results.append((started, time.monotonic() - started, call.name, resp.status_code, code))
                    if resp.status_code == 503:
                        assert resp.headers["Retry-After"] == "2"
                    await asyncio.sleep(0.02)

            loops = [asyncio.create_task(loop(w)) for w in range(3)]
            await asyncio.sleep(1.0)
            own_redis.kill()
            await asyncio.sleep(0.3)
            own_redis.restart(load_delay_us=500, wait=False)
            await asyncio.to_thread(own_redis.wait_ready)
            ready = time.monotonic()
            stop_at[0] = ready + 4.0
            await asyncio.gather(*loops)
            after = await asyncio.gather(
                *(
                    send(client, auth, Call("get session", "GET", f"/v1/sessions/{USER}/s1"))
                    for _ in range(12)
                )
            )
        statuses = {status for _, _, _, status, _ in results}
        assert statuses <= {200, 503}, sorted((c, s, e) for _, _, c, s, e in results if s not in (200, 503))
        assert {code for *_, status, code in results if status == 503} == {"redis_unavailable"}
        assert any(status == 503 for *_, status, _ in results), "the outage was never seen"
        late = [
            (call, round(seconds, 2), status)
            for started, seconds, call, status, _ in results
            if started >= ready + 1.0
        ]
        timeline = [
            (round(st - ready, 2), round(sec, 2), c, s) for st, sec, c, s, _ in results if st > ready - 3
        ]
        assert late, f"no request after the restart: {timeline}"
        assert all(status == 200 for _, _, status in late), late
        slow = [x for x in late if x[1] >= 3.0]
        assert not slow, (slow, timeline)  # no turn waited for a stale lock
        assert [r.status_code for r in after] == [200] * 12


class TestStaleConnections:
    async def test_pooled_connections_reset_while_idle(
        self, cutter: RedisCutter, chroma_server: ServerProcess, embedder: Embedder, auth: AuthHeaders
    ) -> None:
        """Every pooled connection is reset (RST) while idle, Redis itself stays up: the next use of
        each fails with "Connection lost" (before the fix: a 500 each, whenever it was next used, as
        the ones seen minutes after a recovery) and is retried on a fresh connection."""
        settings = outage_settings(cutter.url, chroma_server)
        async with app_client(settings, embedder) as (client, _):
            await seed(client, auth)
            get = Call("get session", "GET", f"/v1/sessions/{USER}/s1")
            assert {
                r.status_code for r in await asyncio.gather(*(send(client, auth, get) for _ in range(8)))
            } == {200}
            await asyncio.sleep(0.1)
            assert cutter.reset_all() >= 8
            await asyncio.sleep(0.1)
            calls = [get] * 8 + [Call("chat", "POST", "/v1/chat/completions", chat_body("我还住在杭州吗？"))]
            answers = await asyncio.gather(*(send(client, auth, call) for call in calls))
            assert [r.status_code for r in answers] == [200] * len(calls), [r.text[:200] for r in answers]


def outbox_xadd_matcher(command: Command) -> bool:
    return is_outbox_append(command)


def ltm_bump_matcher(command: Command) -> bool:
    """The write's version bump (a script on the user's ltm version and change log keys), as EVALSHA
    or as EVAL (the script not cached yet)."""
    verb = command[0].upper() if command else b""
    return verb in {b"EVALSHA", b"EVAL"} and any(arg.endswith(b":ltm:changes") for arg in command[1:])


@pytest.fixture
async def cutter(own_redis: RestartableRedis) -> AsyncIterator[RedisCutter]:
    proxy = RedisCutter(own_redis.port)
    await proxy.start()
    yield proxy
    await proxy.aclose()


async def drain(redis_url: str) -> None:
    r = aredis.Redis.from_url(redis_url)
    try:
        for _ in range(1200):  # 60 s: a writer backing off after the outage, on 2 shared cores
            if await Outbox(r).pending() == 0:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("outbox did not drain")
    finally:
        await r.aclose()


async def turn(
    client: httpx.AsyncClient, auth: AuthHeaders, body: dict[str, Any], key: str | None
) -> httpx.Response:
    headers = auth(USER) | ({"Idempotency-Key": key} if key else {})
    return await client.post("/v1/chat/completions", json=body, headers=headers)


def answer_of(resp: httpx.Response, stream: bool) -> tuple[str, str]:
    """(completion id, reply text) of a chat response, streamed or not."""
    if not stream:
        body = resp.json()
        return body["id"], body["choices"][0]["message"]["content"]
    events = sse_events(resp.text)
    assert events[-1] == "[DONE]", events[-3:]
    assert not any(isinstance(e, dict) and "error" in e for e in events), events
    final = events[-2]
    text = "".join(e["choices"][0]["delta"].get("content") or "" for e in events[:-1])
    assert final["response"] == text
    return final["id"], text


class TestTurnOutcomeIsItsCommit:
    @pytest.mark.parametrize("stream", [False, True])
    async def test_redis_gone_right_after_the_commit(
        self,
        own_redis: RestartableRedis,
        cutter: RedisCutter,
        chroma_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
        stream: bool,
    ) -> None:
        """Redis answers the commit, then every connection drops and it is unreachable for a second
        (before the fix: the lock release after the commit failed, the committed turn answered 500,
        the client's retry stored it twice and waited ~5 s for the lock left behind)."""
        settings = outage_settings(cutter.url, chroma_server)
        key = f"turn-{uuid.uuid4()}"
        body = chat_body(stream=stream)
        async with app_client(settings, embedder) as (client, _):
            back_up = cutter.cut_after(outbox_xadd_matcher, forward_reply=True, down_for=1.0)
            first = await turn(client, auth, body, key)
            assert first.status_code == 200, first.text
            first_id, first_text = answer_of(first, stream)
            await asyncio.wait_for(back_up.wait(), 10)

            retry = await turn(client, auth, body, key)
            assert retry.status_code == 200, retry.text
            assert retry.headers["Idempotent-Replayed"] == "true"
            assert answer_of(retry, stream) == (first_id, first_text)

            r = aredis.Redis.from_url(own_redis.url, decode_responses=True)
            assert await r.exists(keys.lock(USER, "s1")) == 0  # released with the commit
            state = (await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))).json()
            assert [m["role"] for m in state["buffer"]] == ["user", "assistant"]
            assert state["summary"]["version"] == 1

            started = time.monotonic()
            nxt = await turn(client, auth, chat_body("好的，谢谢 / ok thanks"), None)
            assert nxt.status_code == 200, nxt.text
            assert time.monotonic() - started < 1.0  # no lock left behind to wait for

            await drain(own_redis.url)
            listed = (await client.get(f"/v1/memory/{USER}/list?limit=100", headers=auth(USER))).json()
            assert [m["content"] for m in listed["items"]].count(SAID) == 1
            await r.aclose()

    @pytest.mark.parametrize("stream", [False, True])
    async def test_commit_applied_but_its_answer_lost(
        self,
        own_redis: RestartableRedis,
        cutter: RedisCutter,
        chroma_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
        stream: bool,
    ) -> None:
        """Redis applies the commit and the connection drops before the answer arrives: the client
        gets 503 (a stream: its in-band `redis_unavailable` error; the outcome is unknown to mnemo and
        the commit is not re-sent), retries with the same key and gets the recorded answer; nothing is
        stored twice and the lock went with the commit."""
        settings = outage_settings(cutter.url, chroma_server)
        key = f"lost-{uuid.uuid4()}"
        body = chat_body(stream=stream)
        async with app_client(settings, embedder) as (client, _):
            back_up = cutter.cut_after(outbox_xadd_matcher, forward_reply=False, down_for=1.0)
            first = await turn(client, auth, body, key)
            if stream:
                assert first.status_code == 200  # the answer was streaming when the commit failed
                events = sse_events(first.text)
                assert events[-1] == "[DONE]"
                assert events[-2]["error"]["code"] == "redis_unavailable", events[-2]
            else:
                assert_redis_unavailable(first, "commit without its answer")
            await asyncio.wait_for(back_up.wait(), 10)
            started = time.monotonic()
            retry = await turn(client, auth, body, key)
            assert retry.status_code == 200, retry.text
            assert retry.headers["Idempotent-Replayed"] == "true"
            assert time.monotonic() - started < 1.0
            answer_of(retry, stream)
            state = (await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))).json()
            assert [m["content"] for m in state["buffer"]][0] == SAID
            assert len(state["buffer"]) == 2
            r = aredis.Redis.from_url(own_redis.url)
            assert await r.hlen(keys.actions(USER, "s1")) == 1 + 1  # one action + the sequence counter
            assert await Outbox(r).pending() <= 1
            await r.aclose()

    async def test_a_failed_release_after_a_write_is_not_an_error(
        self,
        own_redis: RestartableRedis,
        cutter: RedisCutter,
        chroma_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
    ) -> None:
        """POST /messages: the write is stored and its version bumped, then Redis is unreachable for a
        second, so releasing the user's long-term lock fails. The write stands (200), the failure is
        counted, and the next write of this user does not wait for the lock's 10 s TTL."""
        settings = outage_settings(cutter.url, chroma_server)
        failures = REGISTRY.get_sample_value("mnemo_lock_release_failures_total", {"lock": "ltm"}) or 0.0
        async with app_client(settings, embedder) as (client, _):
            # a first write loads the bump script into Redis: the cut then follows a bump that Redis
            # applied (EVALSHA answered), not a NOSCRIPT answer that redis-py follows with an EVAL
            warm = {"session_id": "s0", "messages": [{"role": "user", "content": "I keep bees / 我养蜜蜂"}]}
            assert (
                await client.post(f"/v1/memory/{USER}/messages", json=warm, headers=auth(USER))
            ).is_success
            back_up = cutter.cut_after(ltm_bump_matcher, forward_reply=True, down_for=1.0)
            body = {"session_id": "s1", "messages": [{"role": "user", "content": SAID}]}
            first = await client.post(f"/v1/memory/{USER}/messages", json=body, headers=auth(USER))
            assert first.status_code == 200, first.text
            assert first.json()["stored"] == 1
            after = REGISTRY.get_sample_value("mnemo_lock_release_failures_total", {"lock": "ltm"})
            assert after == failures + 1
            await asyncio.wait_for(back_up.wait(), 10)
            started = time.monotonic()
            body2 = {
                "session_id": "s1",
                "messages": [{"role": "user", "content": "我的订单号是 A12345678 / order A12345678"}],
            }
            second = await client.post(f"/v1/memory/{USER}/messages", json=body2, headers=auth(USER))
            assert second.status_code == 200, second.text
            assert time.monotonic() - started < 2.0


async def finds(client: httpx.AsyncClient, auth: AuthHeaders, words: str) -> bool:
    resp = await client.post(f"/v1/memory/{USER}/search", json={"query": words}, headers=auth(USER))
    assert resp.status_code == 200, resp.text
    return any(words in hit["content"] for hit in resp.json()["results"])


@contextlib.asynccontextmanager
async def two_workers(
    own_redis: RestartableRedis, cutter: RedisCutter, chroma_server: ServerProcess, embedder: Embedder
) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    """Worker `a` reaches Redis through the cutter, worker `b` directly (it never sees the outage)."""
    settings = outage_settings(cutter.url, chroma_server, outbox_worker=False)
    direct = settings.model_copy(update={"redis_url": f"{own_redis.url}/0"})
    async with app_client(settings, embedder) as (a, _), app_client(direct, embedder) as (b, _):
        yield a, b


class TestVersionBumpLost:
    """Redis goes away just before a write's or a delete's version bump reaches it. Worker `b` talks
    to Redis directly and never sees the outage: its cached index is at the current version, the worst
    case. Nothing is acknowledged that `b` cannot see, and `b` sees it within 2 s of Redis being back,
    whether or not the client retries."""

    CODE = "QX7741"
    SAID = f"我的储物柜密码是 {CODE}，别忘了。My locker code is {CODE}."

    async def test_a_write_whose_version_was_not_recorded_is_a_503_and_found_once_redis_is_back(
        self,
        own_redis: RestartableRedis,
        cutter: RedisCutter,
        chroma_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
    ) -> None:
        async with two_workers(own_redis, cutter, chroma_server, embedder) as (a, b):
            warm = {"session_id": "s1", "messages": [{"role": "user", "content": SAID}]}
            assert (
                await a.post(f"/v1/memory/{USER}/messages", json=warm, headers=auth(USER))
            ).status_code == 200
            assert await finds(b, auth, "Hangzhou")  # b caches alice's index at this version
            body = {"session_id": "s2", "messages": [{"role": "user", "content": self.SAID, "id": "locker"}]}
            back_up = cutter.cut_before(ltm_bump_matcher, down_for=1.0)
            first = await a.post(f"/v1/memory/{USER}/messages", json=body, headers=auth(USER))
            assert_redis_unavailable(first, "a write whose version bump never reached Redis")
            # issue 39: the 503 says the write was stored, so a client knows it need not fear a loss
            assert first.headers["Mnemo-Write-Stored"] == "true"
            assert "was stored" in first.json()["detail"]
            await asyncio.wait_for(back_up.wait(), 10)
            back = time.monotonic()
            while not (await finds(a, auth, self.CODE) and await finds(b, auth, self.CODE)):
                assert time.monotonic() - back < 2.0, "not searchable on both workers 2 s after Redis is back"
                await asyncio.sleep(0.1)
            retry = await a.post(f"/v1/memory/{USER}/messages", json=body, headers=auth(USER))
            assert retry.status_code == 200, retry.text  # the client's retry writes the same memory
            listed = (await b.get(f"/v1/memory/{USER}/list", headers=auth(USER))).json()
            assert sum(self.CODE in m["content"] for m in listed["items"]) == 1

    async def test_a_delete_whose_version_was_not_recorded_is_a_503_and_gone_once_redis_is_back(
        self,
        own_redis: RestartableRedis,
        cutter: RedisCutter,
        chroma_server: ServerProcess,
        embedder: Embedder,
        auth: AuthHeaders,
    ) -> None:
        async with two_workers(own_redis, cutter, chroma_server, embedder) as (a, b):
            body = {"session_id": "s1", "messages": [{"role": "user", "content": self.SAID}]}
            stored = await a.post(f"/v1/memory/{USER}/messages", json=body, headers=auth(USER))
            memory_id = stored.json()["memories"][0]["id"]
            assert await finds(b, auth, self.CODE)
            back_up = cutter.cut_before(ltm_bump_matcher, down_for=1.0)
            gone = await a.delete(f"/v1/memory/{USER}/{memory_id}", headers=auth(USER))
            assert_redis_unavailable(gone, "a delete whose version bump never reached Redis")
            await asyncio.wait_for(back_up.wait(), 10)
            back = time.monotonic()
            while await finds(a, auth, self.CODE) or await finds(b, auth, self.CODE):
                assert time.monotonic() - back < 2.0, "still found 2 s after Redis is back"
                await asyncio.sleep(0.1)
            again = await a.delete(f"/v1/memory/{USER}/{memory_id}", headers=auth(USER))
            assert again.status_code == 404  # gone already; the retry records the version again
            assert not await finds(b, auth, self.CODE)


class TestIdempotencyKey:
    async def test_chat_key_semantics(
        self, client: httpx.AsyncClient, auth: AuthHeaders, settings: Settings
    ) -> None:
        key = f"chat-{uuid.uuid4()}"
        first = await turn(client, auth, chat_body(), key)
        assert first.status_code == 200, first.text
        assert "Idempotent-Replayed" not in first.headers
        again = await turn(client, auth, chat_body(), f'"{key}"')  # a structured-field string is the same key
        assert again.status_code == 200
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json()["id"] == first.json()["id"]
        assert again.json()["response"] == first.json()["response"]
        other = await turn(client, auth, chat_body("换一个问题 / another question"), key)
        assert other.status_code == 422
        assert error_code(other) == "idempotency_key_reused"
        streamed = await turn(client, auth, chat_body(stream=True), key)  # stream is part of the request
        assert streamed.status_code == 422
        bad = await turn(client, auth, chat_body(), "has space")
        assert bad.status_code == 422
        state = (await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))).json()
        assert len(state["buffer"]) == 2  # one turn, however often it was sent
        r = aredis.Redis.from_url(settings.redis_url, decode_responses=True)
        records = [k async for k in r.scan_iter(match=f"{keys.user_prefix(USER)}:idem:*")]
        assert len(records) == 1
        assert 3590 <= await r.ttl(records[0]) <= 3600
        raw = await r.get(records[0])
        assert raw is not None
        assert SAID not in raw  # the fingerprint, not the question
        await r.aclose()

    async def test_concurrent_duplicates_make_one_turn(
        self, client: httpx.AsyncClient, auth: AuthHeaders
    ) -> None:
        key = f"dup-{uuid.uuid4()}"
        answers = await asyncio.gather(*(turn(client, auth, chat_body(), key) for _ in range(5)))
        assert [a.status_code for a in answers] == [200] * 5
        assert len({a.json()["id"] for a in answers}) == 1
        assert sum(a.headers.get("Idempotent-Replayed") == "true" for a in answers) == 4
        state = (await client.get(f"/v1/sessions/{USER}/s1", headers=auth(USER))).json()
        assert len(state["buffer"]) == 2

    async def test_messages_key_semantics(self, client: httpx.AsyncClient, auth: AuthHeaders) -> None:
        """Messages with ids are idempotent by themselves; with a key, a retry gets the recorded answer
        and messages without ids get ids derived from the key."""
        key = f"ingest-{uuid.uuid4()}"
        body = {
            "session_id": "s1",
            "messages": [{"role": "user", "content": "我对花生过敏 / I am allergic to peanuts"}],
        }
        headers = auth(USER) | {"Idempotency-Key": key}
        first = await client.post(f"/v1/memory/{USER}/messages", json=body, headers=headers)
        assert first.status_code == 200, first.text
        assert first.json()["memories"][0]["source_message_ids"][0].startswith("idem-")
        again = await client.post(f"/v1/memory/{USER}/messages", json=body, headers=headers)
        assert again.status_code == 200
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.json() == first.json()
        changed = {"session_id": "s1", "messages": [{"role": "user", "content": "I am allergic to cats"}]}
        other = await client.post(f"/v1/memory/{USER}/messages", json=changed, headers=headers)
        assert other.status_code == 422
        assert other.json()["error"] == "idempotency_key_reused"
        listed = (await client.get(f"/v1/memory/{USER}/list", headers=auth(USER))).json()
        assert listed["total"] == 1
