"""An `Embedder` over any OpenAI-compatible `/v1/embeddings` server (OpenAI, vLLM, llama.cpp, Ollama,
Infinity, text-embeddings-inference), for the dense channel, the bridge channel or both.

One `httpx.AsyncClient` per model (nothing blocks the event loop). Texts go `batch_size` per request;
connect errors, timeouts, 429 and 5xx are retried with exponential backoff and jitter; a circuit
breaker (`breaker.py`) refuses calls at once while the server is known down. Every failure is an
`EmbeddingUnavailable` (a `StoreUnavailable`): a write that needs the model answers 503 with
Retry-After and is retried (the outbox keeps a chat turn's write pending), a search degrades to its
keyword channel. Vectors are L2-normalised here; an answer of another size than `dimension` is
refused (never stored, never ranked beside vectors of another model).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import numpy as np
from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt, wait_exponential_jitter

from app.clients.breaker import CircuitBreaker, CircuitOpen
from memory.embedding.base import Caller, Vectors
from memory.errors import EmbeddingUnavailable
from monitoring import metrics

log = logging.getLogger(__name__)
RETRY_STATUS = {408, 429, 500, 502, 503, 504}


class _Retryable(Exception):
    def __init__(self, status: int, body: str) -> None:
        super().__init__(f"server answered {status}: {body[:200]}")


class _Refused(Exception):
    """An answer that is no use and would be the same on a retry (4xx, wrong shape or size)."""


def _is_retryable(exc: BaseException) -> bool:
    return isinstance(exc, _Retryable | httpx.TransportError)


@dataclass(frozen=True, slots=True)
class ServedModel:
    """Where and how to reach one served model."""

    url: str  # the API base, e.g. http://gpu:8080/v1 (`/embeddings` is appended)
    model: str
    dimension: int
    api_key: str | None = None
    send_dimensions: bool = False  # send `dimensions` (models trained to be cut, e.g. text-embedding-3)
    batch_size: int = 64
    timeout_seconds: float = 10.0
    max_attempts: int = 3
    backoff_seconds: float = 0.2
    breaker_failures: int = 5
    breaker_reset_seconds: float = 10.0
    extra_headers: dict[str, str] = field(default_factory=dict)

    @property
    def model_name(self) -> str:
        """The name vectors of this model are recorded with: a vector of another model or size is never
        read beside these."""
        return f"http:{self.model}@{self.dimension}"


def client_for(model: ServedModel, transport: httpx.AsyncBaseTransport | None = None) -> httpx.AsyncClient:
    headers = dict(model.extra_headers)
    if model.api_key:
        headers["Authorization"] = f"Bearer {model.api_key}"
    return httpx.AsyncClient(
        base_url=model.url.rstrip("/") + "/",
        headers=headers,
        timeout=httpx.Timeout(model.timeout_seconds, connect=min(2.0, model.timeout_seconds)),
        transport=transport,
    )


class HttpEmbedder:
    """`Embedder` (and bridge model: `model_name`, `for_caller`) over an embeddings server."""

    def __init__(
        self,
        model: ServedModel,
        client: httpx.AsyncClient | None = None,
        *,
        caller: Caller = "query",
        _breaker: CircuitBreaker | None = None,
    ) -> None:
        self.served = model
        self.client = client or client_for(model)
        self.model_name = model.model_name
        self._caller = caller
        self.breaker = _breaker or CircuitBreaker(
            kind="embeddings",
            model=model.model,
            failures=model.breaker_failures,
            reset_seconds=model.breaker_reset_seconds,
        )

    def for_caller(self, caller: Caller) -> HttpEmbedder:
        """The same client and circuit under another metrics label."""
        return HttpEmbedder(self.served, self.client, caller=caller, _breaker=self.breaker)

    @property
    def dimension(self) -> int:
        return self.served.dimension

    async def aclose(self) -> None:
        await self.client.aclose()

    async def embed(self, texts: Sequence[str]) -> Vectors:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        size = self.served.batch_size
        parts = [await self._batch(list(texts[i : i + size])) for i in range(0, len(texts), size)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)

    def _payload(self, texts: list[str]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.served.model, "input": texts, "encoding_format": "float"}
        if self.served.send_dimensions:
            payload["dimensions"] = self.served.dimension
        return payload

    async def _batch(self, texts: list[str]) -> Vectors:
        model = self.served.model
        try:
            self.breaker.before()
        except CircuitOpen as exc:
            metrics.MODEL_REQUESTS.labels("embeddings", model, "open").inc()
            raise EmbeddingUnavailable(str(exc)) from None
        t0 = time.perf_counter()
        outcome: Literal["ok", "error"] = "error"
        try:
            vectors = await self._post(texts)
            outcome = "ok"
        except (_Retryable, _Refused, httpx.HTTPError, ValueError) as exc:
            self.breaker.failure()
            log.warning(
                "embeddings server failed", extra={"model": model, "reason": f"{type(exc).__name__}: {exc}"}
            )
            raise EmbeddingUnavailable(f"{type(exc).__name__}: {exc}") from None
        finally:
            if outcome == "ok":
                self.breaker.success()
            metrics.MODEL_REQUESTS.labels("embeddings", model, outcome).inc()
            metrics.MODEL_DURATION.labels("embeddings", model).observe(time.perf_counter() - t0)
        metrics.EMBEDDING_BATCH.observe(len(texts))
        return vectors

    async def _post(self, texts: list[str]) -> Vectors:
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self.served.max_attempts),
            wait=wait_exponential_jitter(
                multiplier=self.served.backoff_seconds, max=5.0, jitter=self.served.backoff_seconds
            ),
            retry=retry_if_exception(_is_retryable),
            reraise=True,
        ):
            with attempt:
                if attempt.retry_state.attempt_number > 1:
                    metrics.MODEL_REQUESTS.labels("embeddings", self.served.model, "retry").inc()
                resp = await self.client.post("embeddings", json=self._payload(texts))
                if resp.status_code in RETRY_STATUS:
                    raise _Retryable(resp.status_code, resp.text)
                if resp.status_code != 200:
                    raise _Refused(f"server answered {resp.status_code}: {resp.text[:200]}")
                return self._vectors(resp.json(), len(texts))
        raise AssertionError("unreachable: tenacity reraises")

    def _vectors(self, body: Any, n: int) -> Vectors:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or len(data) != n:
            raise _Refused(f"expected {n} embeddings, got {type(data).__name__}")
        rows = sorted(data, key=lambda d: int(d.get("index", 0)) if isinstance(d, dict) else 0)
        try:
            out = np.asarray([d["embedding"] for d in rows], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as exc:
            raise _Refused(f"malformed embeddings: {exc}") from None
        if out.shape != (n, self.dimension):
            raise _Refused(
                f"model {self.served.model!r} answered vectors of shape {out.shape[1:]}, configured "
                f"dimension {self.dimension}: refused (never mixed with vectors of another size)"
            )
        if not np.all(np.isfinite(out)):
            raise _Refused("non-finite values in embeddings")
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.clip(norms, 1e-12, None), dtype=np.float32)
