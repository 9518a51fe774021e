"""The tail every batch job's `main()` shares (rebalance, reembed, archive): settings, logging, one
`asyncio.run`, and the exit contract each documents: 0 done, 1 some items failed (a re-run retries
them), 2 it could not run (bad configuration, a busy run lock, a store down). The JSON report goes to
stdout; logs go to stderr.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any, Protocol

from app.settings import Settings
from monitoring import metrics
from monitoring.logging import configure_logging


class JobReport(Protocol):
    @property
    def failures(self) -> int: ...

    def as_dict(self) -> dict[str, object]: ...


def run_job(
    job: Callable[[Settings], Coroutine[Any, Any, JobReport]],
    *,
    log: logging.Logger,
    name: str,
    could_not_run: tuple[type[BaseException], ...],
) -> int:
    """Run `job` with the environment's settings; `could_not_run`: the exceptions that mean exit 2
    (logged as "<name> could not run")."""
    try:
        settings = Settings()
    except ValueError as exc:
        sys.stderr.write(f"{exc}\n")
        return 2
    configure_logging(settings.log_level)
    try:
        report = asyncio.run(job(settings))
    except could_not_run as exc:
        log.error(f"{name} could not run", extra={"reason": str(exc)})
        return 2
    finally:
        metrics.mark_self_dead()
    sys.stdout.write(json.dumps(report.as_dict(), ensure_ascii=False) + "\n")
    return 1 if report.failures else 0
