"""Network faults in front of a real redis-server, at an exact point of the conversation.

`RedisCutter` is a TCP proxy (asyncio, in the test's event loop) between the app and a real Redis. It
forwards bytes unchanged and follows the RESP commands and replies on each connection (hiredis), so a
test can say "when Redis has answered the command that matches, drop every connection and refuse new
ones for a while": Redis going away right after a commit, or between applying a commit and its answer
reaching the app. Nothing of Redis is imitated; the server behind the proxy does all the work.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import hiredis

Command = list[bytes]
Matcher = Callable[[Command], bool]


def is_outbox_append(command: Command) -> bool:
    """The turn commit: the script (or an XADD) that appends to an outbox partition's stream."""
    verb = command[0].upper() if command else b""
    return verb in {b"XADD", b"EVAL", b"EVALSHA"} and any(arg.endswith(b":outbox") for arg in command[1:])


def touches_key_ending(suffix: bytes) -> Matcher:
    """Any command with an argument ending in `suffix` (e.g. a script call on that key)."""
    return lambda command: any(arg.endswith(suffix) for arg in command[1:])


@dataclass
class _Cut:
    match: Matcher
    forward_reply: bool
    down_for: float
    before: bool = False  # the matching command never reaches Redis
    done: asyncio.Event = field(default_factory=asyncio.Event)


@dataclass(eq=False)
class _Link:
    """One proxied connection: the commands sent and not answered yet, in order, each marked when it
    is the one the armed cut waits for (inside MULTI, the EXEC of a transaction with a match)."""

    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    pending: deque[bool] = field(default_factory=deque)
    in_multi: bool = False
    multi_matched: bool = False


class RedisCutter:
    def __init__(self, redis_port: int) -> None:
        self._redis_port = redis_port
        self._server: asyncio.Server | None = None
        self._links: set[_Link] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self._cut: _Cut | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port or 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def aclose(self) -> None:
        await self._go_down()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def cut_after(
        self, match: Matcher, *, forward_reply: bool = True, down_for: float = 1.0
    ) -> asyncio.Event:
        """Arm one cut: once Redis answered the first command that `match`es (or, inside MULTI, the
        EXEC of its transaction), close every connection (after forwarding that answer, or instead
        of it) and refuse connections for `down_for` seconds. The returned event is set when the
        proxy listens again."""
        self._cut = _Cut(match, forward_reply, down_for)
        return self._cut.done

    def cut_before(self, match: Matcher, *, down_for: float = 1.0) -> asyncio.Event:
        """Arm one cut: the first command that `match`es never reaches Redis (nor does the rest of the
        read that carried it); every connection closes and new ones are refused for `down_for`
        seconds, as when Redis dies just before a command. The event is set when the proxy listens
        again."""
        self._cut = _Cut(match, forward_reply=False, down_for=down_for, before=True)
        return self._cut.done

    def reset_all(self) -> int:
        """Reset every proxied connection (RST, as a middlebox or a vanished host does) while Redis
        stays up; returns how many. The app's idle pooled connections look fine until they are used:
        the first write on one fails with "Connection lost"."""
        links = list(self._links)
        for link in links:
            sock = link.client.get_extra_info("socket")
            if sock is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            link.client.transport.abort()
            link.server.close()
            self._links.discard(link)
        return len(links)

    async def _accept(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", self._redis_port)
        except OSError:
            client_writer.close()
            return
        link = _Link(client_writer, server_writer)
        self._links.add(link)
        for coro in (self._upstream(link, client_reader), self._downstream(link, server_reader)):
            task = asyncio.create_task(coro)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _upstream(self, link: _Link, reader: asyncio.StreamReader) -> None:
        parser = hiredis.Reader()
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                parser.feed(data)
                while (command := parser.gets()) is not False:
                    marked = self._marks(link, command)
                    cut = self._cut
                    if marked and cut is not None and cut.before:
                        self._cut = None
                        await self._outage(cut)
                        return
                    link.pending.append(marked)
                link.server.write(data)
                await link.server.drain()
        self._drop(link)

    def _marks(self, link: _Link, command: Command) -> bool:
        name = command[0].upper() if command else b""
        matched = self._cut is not None and self._cut.match(command)
        if name == b"MULTI":
            link.in_multi, link.multi_matched = True, False
            return False
        if link.in_multi and name in {b"EXEC", b"DISCARD"}:
            link.in_multi = False
            return link.multi_matched and name == b"EXEC"
        if link.in_multi:
            link.multi_matched = link.multi_matched or matched
            return False
        return matched

    async def _downstream(self, link: _Link, reader: asyncio.StreamReader) -> None:
        parser = hiredis.Reader()
        with contextlib.suppress(OSError, asyncio.CancelledError):
            while data := await reader.read(65536):
                parser.feed(data)
                hit = False
                while parser.gets() is not False:
                    hit = (link.pending.popleft() if link.pending else False) or hit
                cut = self._cut
                if hit and cut is not None:
                    self._cut = None
                    if cut.forward_reply:
                        link.client.write(data)
                        await link.client.drain()
                    await self._outage(cut)
                    return
                link.client.write(data)
                await link.client.drain()
        self._drop(link)

    async def _outage(self, cut: _Cut) -> None:
        await self._go_down()
        await asyncio.sleep(cut.down_for)
        await self.start()
        cut.done.set()

    def _drop(self, link: _Link) -> None:
        for writer in (link.client, link.server):
            with contextlib.suppress(Exception):
                writer.close()
        self._links.discard(link)

    async def _go_down(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for link in list(self._links):
            for writer in (link.client, link.server):
                with contextlib.suppress(Exception):
                    writer.close()  # what was written is still delivered, then the end of the stream
            self._links.discard(link)
