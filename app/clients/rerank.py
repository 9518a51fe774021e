"""A `Reranker` (memory/recall/rerank.py) over a rerank server, in either request shape:

- "cohere" (Cohere, Jina, Infinity, vLLM): POST {url}/rerank {"model","query","documents","top_n"}
  -> {"results": [{"index", "relevance_score"}, ...]};
- "tei" (text-embeddings-inference): POST {url}/rerank {"query","texts"} -> [{"index","score"}, ...].

No retry (the stage has a budget of its own, and the first-stage order is a fine answer); a circuit
breaker stops asking a server that keeps failing. Failures raise; the stage keeps the first order.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Literal

import httpx

from app.clients.breaker import CircuitBreaker
from monitoring import metrics

Style = Literal["cohere", "tei"]


class RerankFailed(Exception):
    pass


def request_body(style: Style, model: str, query: str, documents: Sequence[str]) -> dict[str, Any]:
    if style == "tei":
        return {"query": query, "texts": list(documents)}
    body: dict[str, Any] = {"query": query, "documents": list(documents), "top_n": len(documents)}
    if model:
        body["model"] = model
    return body


def parse_scores(style: Style, body: Any, n: int) -> list[float]:
    """A score per document, in the documents' order (a document the server left out scores -inf)."""
    rows = body.get("results") if style == "cohere" and isinstance(body, dict) else body
    key = "relevance_score" if style == "cohere" else "score"
    if not isinstance(rows, list):
        raise RerankFailed(f"unexpected rerank answer: {type(body).__name__}")
    out = [float("-inf")] * n
    for row in rows:
        try:
            index, score = int(row["index"]), float(row[key])
        except (KeyError, TypeError, ValueError) as exc:
            raise RerankFailed(f"malformed rerank result: {exc}") from None
        if not 0 <= index < n:
            raise RerankFailed(f"rerank result index {index} out of range")
        out[index] = score
    return out


class HttpReranker:
    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        style: Style = "cohere",
        model: str = "",
        breaker: CircuitBreaker | None = None,
    ) -> None:
        self._client = client
        self._style: Style = style
        self._model = model
        self._label = model or style
        self._breaker = breaker or CircuitBreaker(kind="rerank", model=self._label)

    async def aclose(self) -> None:
        await self._client.aclose()

    async def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        self._breaker.before()
        t0 = time.perf_counter()
        ok = False
        try:
            resp = await self._client.post(
                "rerank", json=request_body(self._style, self._model, query, documents)
            )
            if resp.status_code != 200:
                raise RerankFailed(f"rerank server answered {resp.status_code}: {resp.text[:200]}")
            out = parse_scores(self._style, resp.json(), len(documents))
            ok = True
            return out
        except (httpx.HTTPError, ValueError, RerankFailed):
            self._breaker.failure()
            raise
        finally:
            if ok:
                self._breaker.success()
            metrics.MODEL_REQUESTS.labels("rerank", self._label, "ok" if ok else "error").inc()
            metrics.MODEL_DURATION.labels("rerank", self._label).observe(time.perf_counter() - t0)


def build_reranker(
    url: str, *, style: Style, model: str, api_key: str | None, timeout: float
) -> HttpReranker:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    client = httpx.AsyncClient(
        base_url=url.rstrip("/") + "/",
        headers=headers,
        timeout=httpx.Timeout(timeout, connect=min(2.0, timeout)),
    )
    return HttpReranker(client, style=style, model=model)
