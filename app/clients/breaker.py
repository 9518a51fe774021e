"""A circuit breaker for a model server: after `failures` calls in a row fail, calls are refused at
once for `reset_seconds` (no request waits on a server known to be down); then calls go out again
(half-open): the first success closes the circuit, a failure opens it for another `reset_seconds`."""

from __future__ import annotations

import time
from collections.abc import Callable

from monitoring import metrics


class CircuitOpen(Exception):
    def __init__(self, seconds_left: float) -> None:
        super().__init__(f"circuit open for another {seconds_left:.1f}s after repeated failures")
        self.seconds_left = seconds_left


class CircuitBreaker:
    def __init__(
        self,
        *,
        kind: str,
        model: str,
        failures: int = 5,
        reset_seconds: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failures < 1 or reset_seconds <= 0:
            raise ValueError("a circuit breaker needs failures >= 1 and reset_seconds > 0")
        self._threshold = failures
        self._reset = reset_seconds
        self._clock = clock
        self._failures = 0
        self._opened_at: float | None = None
        self._gauge = metrics.MODEL_CIRCUIT_OPEN.labels(kind, model)
        self._gauge.set(0)

    @property
    def is_open(self) -> bool:
        return self._opened_at is not None and self._clock() - self._opened_at < self._reset

    def before(self) -> None:
        """Raise `CircuitOpen` unless a call may go out now."""
        if self._opened_at is None:
            return
        left = self._reset - (self._clock() - self._opened_at)
        if left > 0:
            raise CircuitOpen(left)

    def success(self) -> None:
        self._failures = 0
        if self._opened_at is not None:
            self._opened_at = None
            self._gauge.set(0)

    def failure(self) -> None:
        self._failures += 1
        if self._opened_at is not None or self._failures >= self._threshold:
            self._opened_at = self._clock()
            self._gauge.set(1)
