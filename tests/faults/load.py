"""A bounded chat load that keeps the books: every turn carries a unique code, every answer is recorded.

Each user sends turns one after another in their own session, alternating Chinese and English, each
with a code like `FC00017` that no other turn has (a document number: the write policy keeps it as a
fact, and near-duplicate merging never joins turns with different numbers). A turn that gets a 503, 409,
429 or a broken connection is retried with the same `Idempotency-Key`, as a careful client would; it is
*acknowledged* once it gets a 200 (for a stream: the final chunk and `[DONE]`, with no error event).
`check_books` then compares the acknowledged codes with what the session buffers and long-term memory
hold: nothing lost, nothing twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

RETRIED_STATUSES = {409, 429, 503}
MAX_TURNS_PER_USER = 90  # two buffer entries per turn, under SESSION_BUFFER_SIZE=200


@dataclass
class Turn:
    user: str
    code: str
    text: str
    statuses: list[int] = field(default_factory=list)  # one per attempt; 0 = connection broke
    answered_at: list[float] = field(default_factory=list)  # when each attempt got its status
    acknowledged: bool = False
    unanswered_503: int = 0  # a 503 without Retry-After
    sent_at: float = field(default_factory=time.monotonic)


@dataclass
class Books:
    turns: list[Turn] = field(default_factory=list)

    def statuses(self) -> Counter[int]:
        return Counter(s for t in self.turns for s in t.statuses)

    def server_errors(self) -> Counter[int]:
        """5xx other than 503: what must never happen."""
        return Counter({s: n for s, n in self.statuses().items() if s >= 500 and s != 503})

    def acknowledged(self) -> list[Turn]:
        return [t for t in self.turns if t.acknowledged]

    def sent_between(self, start: float, end: float) -> list[Turn]:
        """Turns first sent in [start, end) (a turn retried through an outage was sent before it)."""
        return [t for t in self.turns if start <= t.sent_at < end]

    def answered_between(self, start: float, end: float) -> Counter[int]:
        """The statuses of the attempts answered in [start, end), whichever turn they were for."""
        return Counter(
            s
            for t in self.turns
            for s, at in zip(t.statuses, t.answered_at, strict=True)
            if start <= at < end
        )


def turn_text(i: int, code: str) -> str:
    if i % 2:
        return f"请记住：我的第{i}号储物柜密码是 {code}，别弄混了。"
    return f"Please remember: locker number {i} has the code {code}, keep it apart from the others."


class ChatLoad:
    def __init__(
        self,
        base_url: str,
        headers_of: Callable[[str], dict[str, str]],
        users: list[str],
        tag: str,
        *,
        stream: bool = False,
        pause: float = 0.1,
    ) -> None:
        self._base = base_url
        self._headers_of = headers_of
        self._users = users
        self._tag = tag
        self._stream = stream
        self._pause = pause
        self._stop = asyncio.Event()
        self.books = Books()

    def stop(self) -> None:
        self._stop.set()

    async def run(self, seconds: float) -> Books:
        async with httpx.AsyncClient(base_url=self._base, timeout=httpx.Timeout(30, connect=2)) as client:
            workers = [asyncio.create_task(self._user(client, n, u)) for n, u in enumerate(self._users)]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=seconds)
            self._stop.set()
            await asyncio.gather(*workers)
        return self.books

    async def _user(self, client: httpx.AsyncClient, n: int, user: str) -> None:
        for i in range(MAX_TURNS_PER_USER):
            if self._stop.is_set():
                return
            code = f"{self._tag}{n}{i:04d}"
            turn = Turn(user, code, turn_text(i, code))
            self.books.turns.append(turn)
            await self._send(client, turn, idempotency_key=f"{user}-{code}")
            await asyncio.sleep(self._pause)

    async def _send(self, client: httpx.AsyncClient, turn: Turn, idempotency_key: str) -> None:
        body = {
            "model": "mnemo",
            "session_id": f"s-{turn.user}",
            "stream": self._stream,
            "messages": [{"role": "user", "content": turn.text}],
        }
        headers = self._headers_of(turn.user) | {"Idempotency-Key": idempotency_key}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            status, retry_after = await self._attempt(client, body, headers, turn)
            turn.statuses.append(status)
            turn.answered_at.append(time.monotonic())
            if turn.acknowledged:
                return
            if status == 503 and retry_after is None:
                turn.unanswered_503 += 1
            if status not in RETRIED_STATUSES and status != 0:
                return  # a 4xx we did not expect, or a 5xx: recorded, not retried
            await asyncio.sleep(min(retry_after or 0.2, 0.5))
        raise AssertionError(f"turn {turn.code} never acknowledged: {turn.statuses}")

    async def _attempt(
        self, client: httpx.AsyncClient, body: dict[str, Any], headers: dict[str, str], turn: Turn
    ) -> tuple[int, float | None]:
        try:
            if not self._stream:
                r = await client.post("/v1/chat/completions", json=body, headers=headers)
                turn.acknowledged = r.status_code == 200
                return r.status_code, _retry_after(r)
            async with client.stream("POST", "/v1/chat/completions", json=body, headers=headers) as r:
                if r.status_code != 200:
                    await r.aread()
                    return r.status_code, _retry_after(r)
                finished = errored = done = False
                async for line in r.aiter_lines():
                    if not line.startswith("data:"):
                        continue
                    data = line.removeprefix("data:").strip()
                    if data == "[DONE]":
                        done = True
                        continue
                    event = json.loads(data)
                    errored |= "error" in event
                    finished |= any(c.get("finish_reason") for c in event.get("choices", ()))
                turn.acknowledged = done and finished and not errored
                return (200 if turn.acknowledged else 0), None
        except (httpx.TransportError, httpx.RemoteProtocolError):
            return 0, None


def _retry_after(r: httpx.Response) -> float | None:
    value = r.headers.get("Retry-After")
    return float(value) if value else None


@dataclass(frozen=True)
class Ledger:
    lost: list[str]
    duplicated_in_session: list[str]
    duplicated_in_memory: list[str]
    unacknowledged_twice: list[str]


def check_books(books: Books, exports: dict[str, dict[str, Any]]) -> Ledger:
    """Compare the acknowledged turns with the users' exports (session buffers + long-term memories)."""
    code_re = re.compile(r"\b[A-Z]{2}\d{5}\b")
    in_session: Counter[str] = Counter()
    in_memory: Counter[str] = Counter()
    for doc in exports.values():
        for session in doc["sessions"]:
            for m in session["buffer"]:
                if m["role"] == "user":
                    in_session.update(code_re.findall(m["content"]))
        for memory in doc["memories"]:
            in_memory.update(set(code_re.findall(memory["content"])))
    acked = {t.code for t in books.acknowledged()}
    others = {t.code for t in books.turns} - acked
    return Ledger(
        lost=sorted(c for c in acked if in_session[c] == 0 or in_memory[c] == 0),
        duplicated_in_session=sorted(c for c in acked | others if in_session[c] > 1),
        duplicated_in_memory=sorted(c for c in acked | others if in_memory[c] > 1),
        unacknowledged_twice=sorted(c for c in others if in_session[c] > 1 or in_memory[c] > 1),
    )


@dataclass
class Write:
    user: str
    code: str
    text: str
    statuses: list[int] = field(default_factory=list)
    acknowledged: bool = False


BATCH = 8  # messages per write


class MessagesLoad:
    """`POST /messages` writes one after another per user, each with a unique code (`MR00017`), retried
    with its Idempotency-Key on 503/409/429/a broken connection until it gets a 200 (acknowledged:
    by the API's contract, searchable once answered)."""

    def __init__(
        self, base_url: str, headers_of: Callable[[str], dict[str, str]], users: list[str], tag: str
    ) -> None:
        self._base = base_url
        self._headers_of = headers_of
        self._users = users
        self._tag = tag
        self._stop = asyncio.Event()
        self.writes: list[Write] = []

    async def run(self, seconds: float) -> list[Write]:
        async with httpx.AsyncClient(base_url=self._base, timeout=httpx.Timeout(30, connect=2)) as client:
            workers = [asyncio.create_task(self._user(client, n, u)) for n, u in enumerate(self._users)]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=seconds)
            self._stop.set()
            await asyncio.gather(*workers)
        return self.writes

    async def _user(self, client: httpx.AsyncClient, n: int, user: str) -> None:
        for i in range(MAX_TURNS_PER_USER):
            if self._stop.is_set():
                return
            code = f"{self._tag}{n}{i:04d}"
            write = Write(user, code, turn_text(i, code))
            self.writes.append(write)
            # a batch of several messages: the write holds its lock (and its version bump waits) for
            # the embedding of all of them, which widens the window a Redis kill can fall into
            filler = [
                {"role": "assistant", "content": f"好的，第{i}号柜子我记下了 / noted, locker {i} ({k})"}
                for k in range(BATCH - 1)
            ]
            body = {"session_id": f"w-{user}", "messages": [{"role": "user", "content": write.text}, *filler]}
            headers = self._headers_of(user) | {"Idempotency-Key": f"{user}-{code}"}
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not write.acknowledged:
                try:
                    r = await client.post(f"/v1/memory/{user}/messages", json=body, headers=headers)
                    status = r.status_code
                except (httpx.TransportError, httpx.RemoteProtocolError):
                    status = 0
                write.statuses.append(status)
                write.acknowledged = status == 200
                if status not in RETRIED_STATUSES | {0, 200}:
                    raise AssertionError(f"write {code} answered {status}: {r.text}")
                if not write.acknowledged:
                    await asyncio.sleep(0.2)
            assert write.acknowledged, f"write {code} never acknowledged: {write.statuses}"
            await asyncio.sleep(0.05)
