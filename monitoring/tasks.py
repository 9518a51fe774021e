"""What a process's asyncio tasks are waiting on, for an operator: `log_task_stacks` logs, for every
task, the chain of awaits it is suspended in (outermost first, down to the future it waits for), one
record per task. The long-term writer calls it on SIGUSR1 (`docker compose kill -s USR1 writer-1`), so
a writer that stopped making progress says where it stands without being stopped.

`Task.print_stack` shows only the outermost frame of a suspended task, so the chain is walked here
through `cr_await` / `gi_yieldfrom` / `ag_await`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

log = logging.getLogger(__name__)


def await_chain(coro: Any, limit: int = 40) -> list[str]:
    """Where a suspended coroutine waits: one "file:line in function" per frame of its await chain,
    then what the innermost one waits on (a future, a sleep)."""
    out: list[str] = []
    while coro is not None and len(out) < limit:
        frame = (
            getattr(coro, "cr_frame", None)
            or getattr(coro, "gi_frame", None)
            or getattr(coro, "ag_frame", None)
        )
        if frame is None:
            out.append(f"waiting on {coro!r}"[:300])
            break
        out.append(f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}")
        coro = (
            getattr(coro, "cr_await", None)
            or getattr(coro, "gi_yieldfrom", None)
            or getattr(coro, "ag_await", None)
        )
    return out


def log_task_stacks() -> int:
    """Log the await chain of every task of the running loop; returns how many tasks there were."""
    tasks = asyncio.all_tasks()
    for task in tasks:
        log.warning("task stack", extra={"task": task.get_name(), "awaits": await_chain(task.get_coro())})
    return len(tasks)
