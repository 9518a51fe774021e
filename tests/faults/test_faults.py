"""The fault suite: a bounded chat load on loopback while one component is killed with SIGKILL.

Every case asserts the same promises: no acknowledged turn lost (it is in its session buffer and in
long-term memory), none stored twice, no 5xx but 503 (each with Retry-After) while the component is
down, and readiness back within a bound once it is up again.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.http.auth import TokenCodec
from tests.conftest import TEST_SECRET
from tests.faults.deployment import Deployment, deployed
from tests.faults.load import Books, ChatLoad, MessagesLoad, check_books

READY_WITHIN_SECONDS = 20.0
USERS = ["fault-ana", "fault-bo", "fault-chen", "fault-dee"]
WRITERS = ["fault-wu", "fault-xi", "fault-yan", "fault-zoe"]  # POST /messages load beside the chat load
_TOKENS = TokenCodec(TEST_SECRET)
log = logging.getLogger(__name__)


def headers_of(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {_TOKENS.mint(user, ttl_seconds=3600)}"}


def admin_headers(_: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {_TOKENS.mint('fault-admin', role='admin', ttl_seconds=3600)}"}


def assert_promises_kept(d: Deployment, books: Books, users: list[str] = USERS) -> None:
    assert books.acknowledged(), "the load acknowledged no turn at all"
    assert books.server_errors() == {}, f"5xx other than 503: {books.server_errors()}\n{d.log('api.log')}"
    assert not [t.code for t in books.turns if t.unanswered_503], "a 503 without Retry-After"
    ledger = check_books(books, d.wait_drained(users, admin_headers))
    log.info(
        "fault case books",
        extra={
            "turns": len(books.turns),
            "acknowledged": len(books.acknowledged()),
            "statuses": dict(books.statuses()),
        },
    )
    assert ledger.lost == [], f"acknowledged turns lost: {ledger.lost}"
    assert ledger.duplicated_in_session == [], f"stored twice in a session: {ledger.duplicated_in_session}"
    assert ledger.duplicated_in_memory == [], (
        f"stored twice in long-term memory: {ledger.duplicated_in_memory}"
    )


@pytest.fixture
def deployment(tmp_path: Path) -> Iterator[Deployment]:
    with deployed(tmp_path) as d:
        yield d


async def test_chroma_killed_and_restarted(deployment: Deployment) -> None:
    load = ChatLoad(deployment.base_url, headers_of, USERS, "FC")
    task = asyncio.create_task(load.run(seconds=14))
    await asyncio.sleep(3)
    await asyncio.to_thread(deployment.kill_chroma)
    down_from = time.monotonic()
    await asyncio.sleep(4)
    down_until = time.monotonic()
    await asyncio.to_thread(deployment.start_chroma)
    assert await asyncio.to_thread(deployment.wait_ready, READY_WITHIN_SECONDS) < READY_WITHIN_SECONDS
    books = await task
    during = books.sent_between(down_from, down_until)
    assert len([t for t in during if t.acknowledged]) >= len(USERS), "chat must go on while Chroma is down"
    assert_promises_kept(deployment, books)


async def test_redis_killed_and_restarted_from_its_aof(deployment: Deployment) -> None:
    load = ChatLoad(deployment.base_url, headers_of, USERS, "FR")
    task = asyncio.create_task(load.run(seconds=14))
    writes = MessagesLoad(deployment.base_url, headers_of, WRITERS, "MR")
    writing = asyncio.create_task(writes.run(seconds=14))
    await asyncio.sleep(3)
    acknowledged_before = len(load.books.acknowledged())
    await asyncio.to_thread(deployment.kill_redis)
    down_from = time.monotonic()
    await asyncio.sleep(3)
    down_until = time.monotonic()
    await asyncio.to_thread(deployment.start_redis)
    back = time.monotonic()
    assert await asyncio.to_thread(deployment.wait_ready, READY_WITHIN_SECONDS) < READY_WITHIN_SECONDS
    # every write acknowledged so far (those answered around the kill included) is found by a search
    # for its own words on every API worker within 2 s of Redis being back (issue 22: a write answered
    # while its version bump failed stayed invisible to the workers' cached indexes)
    await asyncio.sleep(max(0.0, back + 2.0 - time.monotonic()))
    # those that met the outage first: they are the ones a lost version bump would hide
    acked = sorted((w for w in writes.writes if w.acknowledged), key=lambda w: set(w.statuses) == {200})
    assert any(503 in w.statuses or 0 in w.statuses for w in writes.writes), "no write met the outage"
    missing = {
        (w.code, pid)
        for w in acked
        for pid, contents in (
            await asyncio.to_thread(deployment.search_on_every_worker, w.user, w.code, headers_of(w.user))
        ).items()
        if not any(w.code in c for c in contents)
    }
    assert missing == set(), f"acknowledged writes a worker's search misses: {sorted(missing)}"
    books = await task
    await writing
    assert acknowledged_before > 0
    # every user may be retrying the turn they were on when Redis died (no turn *first* sent in the
    # window, which once failed this case on CI): what counts is that the outage was answered, with 503s
    assert books.answered_between(down_from, down_until)[503] > 0, (
        f"no 503 answered while Redis was down: the case tested nothing {books.statuses()}"
    )
    assert_promises_kept(deployment, books)


async def test_writer_killed_with_a_backlog(deployment: Deployment) -> None:
    await asyncio.to_thread(deployment.kill_writer)
    books = await ChatLoad(deployment.base_url, headers_of, USERS, "FW").run(seconds=6)
    deployment.start_writer()
    await asyncio.sleep(2.5)  # the writer has loaded its model and is draining
    await asyncio.to_thread(deployment.kill_writer)
    deployment.start_writer()
    assert_promises_kept(deployment, books)


async def test_one_of_two_writers_killed_mid_round(deployment: Deployment) -> None:
    await asyncio.to_thread(deployment.kill_writer)
    books = await ChatLoad(deployment.base_url, headers_of, USERS, "FV").run(seconds=6)
    first, second = deployment.start_writer(), deployment.start_writer()
    await asyncio.sleep(3)  # both loaded their model and share the partitions
    await asyncio.to_thread(deployment.kill_writer, first)
    assert second.poll() is None
    assert_promises_kept(deployment, books)


async def test_api_worker_killed_mid_stream(tmp_path: Path) -> None:
    # slow streams (3-6 s each) from 8 users at once: both workers are mid-stream when one is killed
    with deployed(tmp_path, llm_first_token_ms=300, llm_tokens_per_second=8) as d:
        workers = d.api_workers()
        assert len(workers) == 2
        users = [*USERS, "fault-eve", "fault-fay", "fault-gus", "fault-hal"]
        load = ChatLoad(d.base_url, headers_of, users, "FA", stream=True, pause=0.0)
        task = asyncio.create_task(load.run(seconds=12))
        await asyncio.sleep(3)
        busy = await asyncio.to_thread(d.streaming_worker)
        assert busy is not None, "no API worker held a stream: the case would test nothing"
        d_killed = busy
        await asyncio.to_thread(_kill, d_killed)
        start = time.monotonic()
        while time.monotonic() - start < READY_WITHIN_SECONDS and len(set(d.api_workers()) - {d_killed}) < 2:
            await asyncio.sleep(0.2)
        assert len(set(d.api_workers()) - {d_killed}) == 2, "uvicorn did not replace the killed worker"
        books = await task
        assert 0 in books.statuses(), "no stream was cut: the case tested nothing"
        assert_promises_kept(d, books, users)


def _kill(pid: int) -> None:
    os.kill(pid, signal.SIGKILL)
