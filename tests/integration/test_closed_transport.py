"""A pooled Redis connection whose socket was closed, used next under uvloop (the loop uvicorn runs).

The compose suite's Redis master kill once answered a chat turn 500: under uvloop, a write to a
connection whose transport is already closed raises `RuntimeError: unable to perform operation on
<TCPTransport closed=True ...>; the handler is closed` (asyncio's own loop drops the write and fails the
read, which redis-py knew). The service's Redis client raises it as the lost connection it is
(app/clients/redis.py `TransportCheckedConnection`): retried on a fresh connection, and answered 503
with Retry-After if Redis is really gone. Each test runs its whole scenario in a uvloop loop: pytest's
own loop would never raise this error and the tests would pass on the old code.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import pytest
import uvloop
from redis.asyncio import Redis, RedisCluster

from app.settings import Settings
from harness.services import RestartableRedis, ServerProcess
from memory import Embedder
from memory.redis_client import RedisClient
from tests.conftest import AuthHeaders, app_client, redis_of
from tests.integration.test_redis_outage import USER, Call, chat_body, outage_settings, seed, send
from tests.redis_cutter import RedisCutter

pytestmark = pytest.mark.integration


def pooled_transports(client: RedisClient) -> list[asyncio.BaseTransport]:
    """The transports of the client's idle pooled connections (one server or every cluster node)."""
    connections: list[Any]
    if isinstance(client, RedisCluster):
        connections = [c for node in client.get_nodes() for c in node._free]
    else:
        assert isinstance(client, Redis)
        connections = list(client.connection_pool._available_connections)
    return [c._writer.transport for c in connections if c._writer is not None]


def test_a_command_on_a_closed_connection_is_sent_again_on_a_fresh_one(settings: Settings) -> None:
    """Standalone and, in the cluster pass, a Redis Cluster: the command is retried, not a RuntimeError."""

    async def scenario() -> None:
        client = redis_of(settings)
        key = f"closed-transport:{uuid.uuid4().hex}"
        try:
            await client.set(key, "她说 / she said")
            transports = pooled_transports(client)
            assert transports, "no pooled connection to close"
            for transport in transports:
                transport.close()
            await asyncio.sleep(0.05)  # the loop closes the handles
            assert all(t.is_closing() for t in transports)
            assert await client.get(key) == "她说 / she said"
        finally:
            await client.delete(key)
            await client.aclose()

    uvloop.run(scenario())


@pytest.mark.standalone  # its own redis-server, behind a proxy that resets connections
def test_chat_turns_over_connections_reset_while_idle_answer_200(
    own_redis: RestartableRedis, chroma_server: ServerProcess, embedder: Embedder, auth: AuthHeaders
) -> None:
    """Every pooled connection of the service is reset while idle (Redis stays up), as a failover or a
    restart leaves them: the next session reads and chat turn are each retried on a fresh connection
    and answer 200 (before the fix: 500, `the handler is closed`)."""

    async def scenario() -> None:
        cutter = RedisCutter(own_redis.port)
        await cutter.start()
        try:
            async with app_client(outage_settings(cutter.url, chroma_server), embedder) as (client, _):
                await seed(client, auth)
                get = Call("get session", "GET", f"/v1/sessions/{USER}/s1")
                warm = await asyncio.gather(*(send(client, auth, get) for _ in range(8)))
                assert {r.status_code for r in warm} == {200}
                await asyncio.sleep(0.1)
                assert cutter.reset_all() >= 8
                await asyncio.sleep(0.1)
                calls = [get] * 8 + [
                    Call("chat", "POST", "/v1/chat/completions", chat_body("我还住在杭州吗？"))
                ]
                answers = await asyncio.gather(*(send(client, auth, call) for call in calls))
                assert [r.status_code for r in answers] == [200] * len(calls), [r.text[:200] for r in answers]
        finally:
            await cutter.aclose()

    uvloop.run(scenario())
