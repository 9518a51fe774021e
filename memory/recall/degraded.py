"""Searches that lost their embedding model (a model server down, its circuit open) and ranked by the
keyword channel alone: the query vector is all zeros (no dense candidate, cosine 0 everywhere, nothing
published for the writer), the search is counted, and whoever asked `watching()` learns it happened
(the search route flags its answer)."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from memory.errors import EmbeddingUnavailable
from monitoring import metrics

log = logging.getLogger(__name__)


@dataclass(slots=True)
class Degraded:
    """What the searches of one request lost (empty: nothing)."""

    reasons: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.reasons)


_CURRENT: ContextVar[Degraded | None] = ContextVar("mnemo_recall_degraded", default=None)


@contextlib.contextmanager
def watching() -> Iterator[Degraded]:
    """Collect, for the block, whether a search ran without its embedding model (mutated in place, so
    searches in tasks the block spawns report too)."""
    found = Degraded()
    token = _CURRENT.set(found)
    try:
        yield found
    finally:
        _CURRENT.reset(token)


def keyword_only(dimension: int, exc: EmbeddingUnavailable) -> tuple[np.ndarray, None]:
    """The query vectors of a search whose model is down: a zero dense vector (the dense channel
    finds and scores nothing) and no bridge vector."""
    metrics.SEARCHES_DEGRADED.inc()
    log.warning("search degraded to the keyword channel", extra={"reason": exc.reason})
    current = _CURRENT.get()
    if current is not None:
        current.reasons.append(exc.store)
    return np.zeros(dimension, dtype=np.float32), None
