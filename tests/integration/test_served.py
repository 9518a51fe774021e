"""The service as `make run` serves it: `uvicorn --factory app.main:create_app` with 2 workers,
configured only through environment variables."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.http.auth import TokenCodec
from harness.services import ServerProcess
from tests.conftest import TEST_SECRET, drop_collections
from tests.served import serve

# uvicorn processes of their own, each on its own database of the suite's redis-server
pytestmark = [pytest.mark.integration, pytest.mark.standalone]


@pytest.fixture
def served(tmp_path: Path, redis_server: ServerProcess, chroma_server: ServerProcess) -> Iterator[str]:
    with serve(tmp_path, redis_server, chroma_server, {"RATE_LIMIT_PER_MINUTE": "100000"}) as base:
        yield base


def test_two_workers_serve_the_memory_api(served: str) -> None:
    headers = {"Authorization": f"Bearer {TokenCodec(TEST_SECRET).mint('alice')}"}
    with httpx.Client(base_url=served, headers=headers, timeout=30) as http:
        stored = http.post(
            "/v1/memory/alice/messages",
            json={
                "session_id": "s1",
                "messages": [
                    {"role": "user", "content": "我住在杭州，记住这个", "id": "zh"},
                    {"role": "user", "content": "I keep bees on my rooftop", "id": "en"},
                ],
            },
        )
        assert stored.status_code == 200, stored.text
        # Several calls so both workers are very likely to answer at least once.
        for _ in range(6):
            zh = http.post("/v1/memory/alice/search", json={"query": "我住在哪个城市？"}).json()
            en = http.post("/v1/memory/alice/search", json={"query": "what insects do I keep?"}).json()
            assert zh["results"][0]["source_message_ids"] == ["zh"]
            assert en["results"][0]["source_message_ids"] == ["en"]
        assert http.get("/healthz").status_code == 200


def test_rate_limit_holds_across_two_workers(
    tmp_path: Path, redis_server: ServerProcess, chroma_server: ServerProcess
) -> None:
    headers = {"Authorization": f"Bearer {TokenCodec(TEST_SECRET).mint('limited')}"}
    with (
        serve(
            tmp_path,
            redis_server,
            chroma_server,
            {"RATE_LIMIT_PER_MINUTE": "7", "REDIS_URL": f"{redis_server.url}/2"},
        ) as base,
        httpx.Client(base_url=base, headers=headers, timeout=30) as http,
    ):
        # new connections each time, so the two workers share the requests between them
        statuses = []
        last = None
        for _ in range(10):
            last = httpx.post(
                f"{base}/v1/memory/limited/search", json={"query": "x"}, headers=headers, timeout=30
            )
            statuses.append(last.status_code)
        assert statuses == [200] * 7 + [429] * 3
        assert last is not None
        assert last.json()["error"] == "rate_limited"
        assert 1 <= int(last.headers["retry-after"]) <= 60
        assert last.headers["x-ratelimit-limit"] == "7"
        assert last.headers["x-ratelimit-remaining"] == "0"
        assert http.get("/healthz").status_code == 200  # never limited


def _pids_that_served(log_path: Path, route: str) -> set[int]:
    pids = set()
    for line in log_path.read_text().splitlines():
        with contextlib.suppress(ValueError):
            record = json.loads(line)
            if record.get("route") == route and record.get("msg") == "request":
                pids.add(int(record["pid"]))
    return pids


def _sample(exposition: str, name: str, **labels: str) -> float:
    """The value of one sample in a Prometheus text exposition (0 when absent)."""
    for family in text_string_to_metric_families(exposition):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return float(sample.value)
    return 0.0


def test_metrics_add_up_across_two_workers(tmp_path: Path, served: str) -> None:
    """Requests answered by both workers; one scrape (served by either) shows the totals of both."""
    headers = {"Authorization": f"Bearer {TokenCodec(TEST_SECRET).mint('metered')}"}
    route = "/v1/memory/{user_id}/search"
    sent = 0
    while sent < 80 and (sent < 10 or len(_pids_that_served(tmp_path / "uvicorn.log", route)) < 2):
        # a new connection each time, so either worker may accept it
        resp = httpx.post(
            f"{served}/v1/memory/metered/search", json={"query": "杭州 weather"}, headers=headers
        )
        assert resp.status_code == 200
        sent += 1
    assert len(_pids_that_served(tmp_path / "uvicorn.log", route)) == 2, "one worker answered everything"
    assert httpx.get(f"{served}/v1/no-such-route").status_code == 404

    text = httpx.get(f"{served}/metrics").text
    assert _sample(text, "mnemo_http_requests_total", route=route, method="POST", status="200") == sent
    assert _sample(text, "mnemo_http_request_duration_seconds_count", route=route, method="POST") == sent
    assert _sample(text, "mnemo_http_requests_total", route="unmatched", method="GET", status="404") == 1
    assert _sample(text, "mnemo_retrieval_duration_seconds_count", pipeline="hybrid") == sent
    assert "metered" not in text  # user ids never become label values
    rss = [
        s
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "mnemo_process_resident_memory_bytes"
    ]
    assert len({s.labels["pid"] for s in rss}) == 2
    assert all(s.value > 50e6 for s in rss)  # a worker with a model loaded


def test_writer_process_drains_the_outbox_and_stops_cleanly(
    tmp_path: Path, redis_server: ServerProcess, chroma_server: ServerProcess
) -> None:
    """`python -m app.cli.writer` (what `make run` and the compose `writer` service run) writes pending chat
    turns to long-term memory, and a SIGTERM stops it without losing what it has not written."""
    import asyncio

    import redis.asyncio as aredis

    from memory.models import Message
    from memory.outbox.stream import Outbox, OutboxEntry

    prefix = f"t{uuid.uuid4().hex[:12]}"
    redis_url = f"{redis_server.url}/3"

    async def append(n: int) -> None:
        r = aredis.Redis.from_url(redis_url, decode_responses=True)
        for i in range(n):
            msgs = (Message("user", f"我住在杭州 note {i}: I keep bees", id=f"{i}:u"),)
            await Outbox(r).append(OutboxEntry("wendy", "s1", msgs))
        await r.aclose()

    async def pending() -> int:
        r = aredis.Redis.from_url(redis_url, decode_responses=True)
        try:
            return await Outbox(r).pending()
        finally:
            await r.aclose()

    asyncio.run(append(5))
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "CHROMA_URL": chroma_server.url,
        "AUTH_JWT_SECRET": TEST_SECRET,
        "CHROMA_COLLECTION_PREFIX": prefix,
        "MEMORY_SHARDS": "2",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    log = (tmp_path / "writer.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli.writer", "--nice", "0"],
        env=env,
        cwd=tmp_path,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while asyncio.run(pending()) and time.monotonic() < deadline:
            assert proc.poll() is None, (tmp_path / "writer.log").read_text()[-2000:]
            time.sleep(0.2)
        assert asyncio.run(pending()) == 0
        import chromadb
        from chromadb.config import Settings as ChromaSettings

        client = chromadb.HttpClient(
            host="127.0.0.1", port=chroma_server.port, settings=ChromaSettings(anonymized_telemetry=False)
        )
        stored = sum(
            len(client.get_collection(c.name).get(where={"user_id": "wendy"}, include=[])["ids"])
            for c in client.list_collections()
            if c.name.startswith(f"{prefix}-mem-")  # the records (the bridge channel has its own)
        )
        assert stored == 5  # written to Chroma, not just taken off the stream
        bridged = sum(
            len(client.get_collection(c.name).get(where={"user_id": "wendy"}, include=[])["ids"])
            for c in client.list_collections()
            if c.name.startswith(f"{prefix}-xl-mem-")
        )
        assert bridged == 5  # the writer process writes the bridge channel with every record
        proc.send_signal(15)
        assert proc.wait(timeout=30) == 0
        assert "writer stopped" in (tmp_path / "writer.log").read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
        drop_collections(chroma_server.url, prefix)


@pytest.mark.parametrize(
    "raw",
    [
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-ID: abc\ndef\r\n\r\n",  # a bare LF inside a header
        b"GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
        b"GET /v1/memory/alice/list HTT\r\n\r\n",
    ],
)
def test_a_request_that_is_not_http_gets_the_json_envelope(served: str, raw: bytes) -> None:
    """Issue 39: uvicorn answered these in plain text ("Invalid HTTP request received.")."""
    host, port = served.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(raw)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 400"), answer
    assert b"content-type: application/json" in head.lower()
    envelope = json.loads(body)
    assert envelope["error"] == "invalid_request"
    assert "HTTP/1.1" in envelope["detail"]
