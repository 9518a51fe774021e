"""The bundled models served over HTTP, as a deployment's model server would serve its own: the real
OpenAI `/v1/embeddings` protocol and both rerank protocols, for the served-models test lane and
bench/served_models.py. Run as a subprocess (`start_model_server`) on a free loopback port.

- POST /v1/embeddings {"model", "input": str | [str], "dimensions"?} -> {"object": "list", "data":
  [{"object": "embedding", "index", "embedding"}], "model", "usage"}. Models: "all-MiniLM-L6-v2"
  (the int8 ONNX MiniLM, as mnemo runs it in process: 128 tokens), "use-multilingual-v3" (USE v3).
- POST /rerank and /v1/rerank: Cohere/Jina {"model", "query", "documents", "top_n"} -> {"results":
  [{"index", "relevance_score"}]}, or TEI {"query", "texts"} -> [{"index", "score"}]. The scores are
  USE v3 cosines (a stand-in for a cross-encoder), unless the test set scores of its own: POST
  /control {"scores": {document: score}, "delay_seconds": s} (a document not named scores 0).
- GET /health.

`python -m harness.model_server --port N`.
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from harness.services import ServerProcess, free_port, http_answers, wait_ready

MINILM = "all-MiniLM-L6-v2"
USE = "use-multilingual-v3"
DIMENSIONS = {MINILM: 384, USE: 512}
log = logging.getLogger("model-server")


class Models:
    def __init__(self) -> None:
        from memory.embedding.multilingual import MultilingualEmbedder
        from memory.embedding.onnx import OnnxEmbedder

        self.minilm = OnnxEmbedder(None, batch_size=32, threads=1, max_tokens=128)
        self.use = MultilingualEmbedder(threads=1)
        self.lock = threading.Lock()
        self.scores: dict[str, float] | None = None
        self.delay = 0.0

    def embed(self, model: str, texts: Sequence[str]) -> np.ndarray:
        if model == MINILM:
            return self.minilm.embed_sync(texts)
        if model == USE:
            return self.use.embed_sync(texts)
        raise KeyError(model)

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        if self.delay:
            time.sleep(self.delay)
        if self.scores is not None:
            return [self.scores.get(d, 0.0) for d in documents]
        vectors = self.use.embed_sync([query, *documents])
        return [float(x) for x in vectors[1:] @ vectors[0]]


def handler(models: Models) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes: no 40 ms delayed-ACK stall

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            pass

        def _send(self, status: int, body: object) -> None:
            raw = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self._send(200, {"status": "ok"} if self.path == "/health" else {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            length = int(self.headers.get("Content-Length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, {"error": {"message": "invalid JSON"}})
                return
            if self.path == "/v1/embeddings":
                self._embeddings(body)
            elif self.path in {"/rerank", "/v1/rerank"}:
                self._rerank(body)
            elif self.path == "/control":
                models.scores = body.get("scores")
                models.delay = float(body.get("delay_seconds", 0.0))
                self._send(200, {"ok": True})
            else:
                self._send(404, {"error": {"message": "not found"}})

        def _embeddings(self, body: dict[str, Any]) -> None:
            model, texts = body.get("model"), body.get("input")
            if isinstance(texts, str):
                texts = [texts]
            if model not in DIMENSIONS or not isinstance(texts, list):
                self._send(400, {"error": {"message": f"unknown model {model!r} or no input"}})
                return
            if body.get("dimensions") not in (None, DIMENSIONS[model]):
                self._send(400, {"error": {"message": "this model cannot be cut"}})
                return
            vectors = models.embed(model, texts)
            data = [
                {"object": "embedding", "index": i, "embedding": v.tolist()} for i, v in enumerate(vectors)
            ]
            usage = {"prompt_tokens": sum(len(t) for t in texts), "total_tokens": sum(len(t) for t in texts)}
            self._send(200, {"object": "list", "data": data, "model": model, "usage": usage})

        def _rerank(self, body: dict[str, Any]) -> None:
            query = body.get("query")
            tei = "texts" in body
            documents = body.get("texts") if tei else body.get("documents")
            if not isinstance(query, str) or not isinstance(documents, list):
                self._send(400, {"error": {"message": "query and documents (or texts) are required"}})
                return
            docs = [d if isinstance(d, str) else str(d.get("text", "")) for d in documents]
            scores = models.rerank(query, docs)
            order = sorted(range(len(docs)), key=lambda i: -scores[i])
            if tei:
                self._send(200, [{"index": i, "score": scores[i]} for i in order])
            else:
                top = order[: int(body.get("top_n") or len(order))]
                self._send(200, {"results": [{"index": i, "relevance_score": scores[i]} for i in top]})

    return Handler


def start_model_server(workdir: Path, *, port: int | None = None) -> ServerProcess:
    """The model server in a subprocess on `port` (a free one by default), ready to answer."""
    import subprocess
    import sys

    port = port or free_port()
    log_path = workdir / f"model-server-{port}.log"
    with log_path.open("ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.model_server", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parent.parent,
        )
    url = f"http://127.0.0.1:{port}"
    wait_ready(lambda: http_answers(f"{url}/health"), proc, "model server", log_path)
    return ServerProcess(url, port, proc, log_path)


@contextmanager
def model_server(workdir: Path) -> Iterator[ServerProcess]:
    server = start_model_server(workdir)
    try:
        yield server
    finally:
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler(Models()))
    server.serve_forever()


if __name__ == "__main__":
    main()
