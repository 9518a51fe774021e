"""monitoring/tasks.py: where a suspended task waits, down its whole await chain (what SIGUSR1 logs in
the writer), not only its outermost frame as Task.print_stack shows it."""

from __future__ import annotations

import asyncio
import logging

import pytest

from monitoring.tasks import await_chain, log_task_stacks


async def waits_inside(event: asyncio.Event) -> None:
    await event.wait()


async def waits_outside(event: asyncio.Event) -> None:
    await waits_inside(event)


async def test_the_chain_names_every_frame_down_to_what_it_waits_on() -> None:
    event = asyncio.Event()
    task = asyncio.create_task(waits_outside(event), name="stuck-round")
    await asyncio.sleep(0)
    chain = await_chain(task.get_coro())
    event.set()
    await task
    assert [line.rsplit(" in ", 1)[-1] for line in chain[:3]] == ["waits_outside", "waits_inside", "wait"]
    assert chain[-1].startswith("waiting on ")


async def test_every_task_is_logged_with_its_chain(caplog: pytest.LogCaptureFixture) -> None:
    event = asyncio.Event()
    task = asyncio.create_task(waits_outside(event), name="stuck-round")
    await asyncio.sleep(0)
    with caplog.at_level(logging.WARNING, logger="monitoring.tasks"):
        count = log_task_stacks()
    event.set()
    await task
    logged = {
        r.__dict__["task"]: r.__dict__["awaits"] for r in caplog.records if r.getMessage() == "task stack"
    }
    assert count == len(logged) >= 2  # this test's own task and the stuck one
    assert any("waits_inside" in frame for frame in logged["stuck-round"])
