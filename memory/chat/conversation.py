"""One chat turn, end to end: lock, load, recall, assemble, answer, commit, hand off to long-term memory.

The route only parses and maps; everything a turn does to memory happens here.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from memory.chat.compression import LLMCompressor
from memory.chat.context import AssembledPrompt, assemble_prompt, observe_injection
from memory.chat.llm import (
    ChatModel,
    Completion,
    GenerationParams,
    PromptMessage,
    StreamEnd,
    StreamItem,
    ToolCallDelta,
    TurnFacts,
    estimate_tokens,
    merge_tool_deltas,
)
from memory.chat.recall_gate import RecallGate
from memory.chat.replay import ReplayedStream, TurnDebug, TurnResult, replayed_result, turn_record
from memory.chat.summary import ExtractiveSummarizer, Summarizer
from memory.chat.tool_turns import buffered_tool_turn, prompt_buffer, tool_results, with_tool_turn
from memory.errors import StoreUnavailable
from memory.longterm.ids import content_hash
from memory.models import Message, RecallRequest, ScoredMemory
from memory.outbox.stream import Outbox, OutboxEntry
from memory.service import MemoryService
from memory.session.actions import classify_action, coding_mode
from memory.session.idempotency import IdempotencyKey, IdempotencyRecords
from memory.session.store import Action, BufferedMessage, SessionState, SessionStore
from memory.text.language import detect_language
from memory.text.privacy import redact
from memory.text.slots import extract_slots
from memory.text.window import message_window
from memory.text.zones import name_of
from monitoring import metrics

log = logging.getLogger(__name__)
Clock = Callable[[], float]
CODE_RE = re.compile(
    r"```|\bdef |\bclass |\bfunction\b|\bimport |\bSELECT\b|\breturn\b|=>|代码|函数|脚本|\bpython\b|\bsql\b|\bjava\b",
    re.IGNORECASE,
)
CODE_BOOST = 0.1


@dataclass(frozen=True, slots=True)
class ChatInput:
    user_id: str
    session_id: str
    message: str  # the newest user message
    name: str | None = None
    client_system: Sequence[str] = ()
    client_history: Sequence[PromptMessage] = ()  # used only while the session buffer is empty
    params: GenerationParams = field(default_factory=GenerationParams)
    idempotency: IdempotencyKey | None = None  # a retry with the same key gets the recorded answer
    # the user's time zone when the request named one: the turn's "昨天" and the question's "yesterday"
    # are read in it (its recall, the session's slots, the write); None: the deployment's
    zone: tzinfo | None = None
    # what follows the newest user message in the request: the assistant's tool calls and their results
    # (memory/chat/tool_turns.py); kept in the session, never long-term memory by themselves
    tool_turn: Sequence[PromptMessage] = ()


@dataclass(frozen=True, slots=True)
class PreparedTurn:
    turn_id: str
    now: float
    language: str
    state: SessionState
    action: str
    coding: bool
    recalled: list[ScoredMemory]
    recall_degraded: str | None
    summary_used: bool
    prompt: AssembledPrompt
    # a tool turn whose user message the session holds already: what of its calls and results it holds
    tool_held: frozenset[str] | None = None

    @property
    def facts(self) -> TurnFacts:
        return TurnFacts(self.language, self.recalled, self.now, self.recall_degraded)

    def debug(self) -> TurnDebug:
        return TurnDebug(
            turn_id=self.turn_id,
            redis_summary_used=self.summary_used,
            chroma_retrieved_count=len(self.recalled),
            context_length=self.prompt.context_chars,
            estimated_prompt_tokens=self.prompt.estimated_tokens,
            memory_ids=[h.memory.id for h in self.recalled[: self.prompt.memories_used]],  # in the prompt
            mode="coding" if self.coding else "default",
            recall_degraded=self.recall_degraded,
            memory_tokens=self.prompt.memory_tokens,
        )


def _counted(completion: Completion, prepared: PreparedTurn) -> Completion:
    return dataclasses.replace(
        completion,
        prompt_tokens=completion.prompt_tokens
        if completion.prompt_tokens is not None
        else prepared.prompt.estimated_tokens,
        completion_tokens=completion.completion_tokens
        if completion.completion_tokens is not None
        else estimate_tokens(completion.text),
    )


class ConversationService:
    def __init__(
        self,
        sessions: SessionStore,
        memory: MemoryService,
        outbox: Outbox,
        *,
        summarizer: Summarizer | None = None,
        compressor: LLMCompressor | None = None,
        recall_k: int = 20,
        memory_tokens: int = 1000,
        recall_min_similarity: float = 0.2,
        recall_min_relevance: float = 0.0,
        recall_general_min_relevance: float = 0.0,
        max_backlog: int = 0,
        max_backlog_wait: float = 5.0,
        records: IdempotencyRecords | None = None,
        clock: Clock = time.time,
        zone: tzinfo = UTC,
    ) -> None:
        """`max_backlog`: more turns than this waiting for the long-term writer slow new turns down
        (for at most `max_backlog_wait` seconds each) until it catches up; 0 never waits. `records`:
        where turns with an Idempotency-Key are recorded (without it, keys are ignored). `zone`: the
        time zone a turn's "明天" or "Friday" is resolved in for the session's slots (`TIME_ZONE`).
        `recall_k`: the memories recall offers the prompt, best first; `memory_tokens`: the prompt's
        budget for them (and the profile line), estimated tokens (memory/chat/llm.py estimate_tokens)."""
        self._zone = zone
        self._sessions = sessions
        self._memory = memory
        self._outbox = outbox
        self._extractive = ExtractiveSummarizer()
        self._refiner = summarizer  # an LLM summarizer refines the extractive one off the request path
        self._compressor = compressor
        self._recall_k = recall_k
        self._memory_tokens = memory_tokens
        self._recall_min_similarity = recall_min_similarity
        self._recall_gate = RecallGate(recall_min_relevance, recall_general_min_relevance)
        self._max_backlog = max_backlog
        self._max_backlog_wait = max_backlog_wait
        self._records = records
        self._clock = clock
        self._background: set[asyncio.Task[None]] = set()

    # -- public ------------------------------------------------------------------------------------

    async def turn(self, chat: ChatInput, model: ChatModel) -> TurnResult:
        """The turn's outcome is its commit: once committed (with the session lock released in the same
        transaction) it is answered, and a retry with the same Idempotency-Key gets the recorded answer."""
        started = time.perf_counter()
        if (recorded := await self._recorded(chat)) is not None:
            return recorded
        await self._backpressure(chat.user_id)
        async with self._sessions.lock(chat.user_id, chat.session_id) as lock_token:
            if (recorded := await self._recorded(chat)) is not None:
                return recorded  # a retry that waited for the original turn to commit
            prepared = await self._prepare(chat)
            llm_started = time.perf_counter()
            completion = await model.complete(prepared.prompt.messages, chat.params, prepared.facts)
            llm_seconds = time.perf_counter() - llm_started
            completion = _counted(completion, prepared)
            await self._commit(
                chat, prepared, completion, remember_reply=model.remember_replies, lock_token=lock_token
            )
        metrics.CHAT_TURN_OVERHEAD.observe(time.perf_counter() - started - llm_seconds)
        return TurnResult(
            completion=completion, debug=prepared.debug(), created=prepared.now, prepared=prepared
        )

    async def open_stream(self, chat: ChatInput, model: ChatModel) -> TurnStream | ReplayedStream:
        """Takes the lock, prepares, and waits for the first delta, so that failures before any output
        surface as exceptions (a proper error response), not as a broken stream. A retry of a recorded
        turn (same Idempotency-Key) streams the recorded answer instead."""
        started = time.perf_counter()
        if (recorded := await self._recorded(chat)) is not None:
            return ReplayedStream(recorded)
        await self._backpressure(chat.user_id)
        stack = contextlib.AsyncExitStack()
        lock_token = await stack.enter_async_context(self._sessions.lock(chat.user_id, chat.session_id))
        try:
            if (recorded := await self._recorded(chat)) is not None:
                await stack.aclose()
                return ReplayedStream(recorded)
            prepared = await self._prepare(chat)
            prepare_seconds = time.perf_counter() - started
            upstream = model.stream(prepared.prompt.messages, chat.params, prepared.facts).__aiter__()
            try:
                first: StreamItem | None = await upstream.__anext__()
            except StopAsyncIteration:
                first = None
        except BaseException:
            await stack.aclose()
            raise
        return TurnStream(
            self,
            chat,
            prepared,
            first,
            upstream,
            stack,
            model.name,
            prepare_seconds,
            model.remember_replies,
            lock_token,
        )

    async def aclose(self) -> None:
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    # -- steps -------------------------------------------------------------------------------------

    async def _recorded(self, chat: ChatInput) -> TurnResult | None:
        """The recorded answer of an earlier request with this Idempotency-Key, if any (raises
        IdempotencyConflict when the key was used for a different request)."""
        if chat.idempotency is None or self._records is None:
            return None
        payload = await self._records.get(chat.user_id, chat.idempotency)
        if payload is None:
            return None
        try:
            result = replayed_result(payload)
        except (KeyError, TypeError, ValueError):
            log.warning("unreadable turn record ignored")
            return None
        # the record may be a commit whose replica acknowledgement timed out: a replay acknowledges the
        # turn, so it waits for the replicas as the commit does (503 while they do not have it)
        await self._sessions.ensure_replicated(chat.user_id)
        metrics.IDEMPOTENT_REPLAYS.labels("chat").inc()
        return result

    async def _backpressure(self, user_id: str) -> None:
        """A bounded outbox: under sustained overload turns slow down instead of the backlog (Redis
        memory, and how late memories become searchable) growing without end."""
        waited = await self._outbox.wait_for_room(user_id, self._max_backlog, self._max_backlog_wait)
        if waited > 0:
            metrics.OUTBOX_BACKPRESSURE.observe(waited)

    async def _prepare(self, chat: ChatInput) -> PreparedTurn:
        now = self._clock()
        state = await self._sessions.load(chat.user_id, chat.session_id)
        language = detect_language(chat.message)
        action = classify_action(chat.message)
        coding = coding_mode([*(a.action_type for a in state.actions), action])
        fresh = self._sessions.limits.summary_fresh_seconds
        summary_used = state.summary is not None and now - state.summary.last_update <= fresh
        recalled: list[ScoredMemory] = []
        degraded: str | None = None
        try:
            recalled = await self._recall(chat, now, coding, in_buffer={m.id for m in state.buffer})
        except StoreUnavailable as exc:
            degraded = f"{exc.store}_unavailable"
            log.warning("recall degraded", extra={"reason": exc.reason})
        buffer, tool_held = prompt_buffer(state.buffer, chat.message, chat.tool_turn)
        buffer = buffer or list(chat.client_history)
        profile = await self._memory.profile_summary(chat.user_id, language) if degraded is None else ""
        compressed = (
            await self._compressor.compress([h.memory.content for h in recalled], language)
            if self._compressor is not None and recalled
            else None
        )
        prompt = assemble_prompt(
            language=language,
            new_message=PromptMessage("user", chat.message, chat.name),
            now=now,
            summary=state.summary.text if summary_used and state.summary else None,
            recalled=recalled,
            buffer=buffer,
            client_system=chat.client_system,
            coding_mode=coding,
            recall_degraded=degraded is not None,
            compressed=compressed,
            profile=profile,
            memory_token_budget=self._memory_tokens,
        )
        prompt = with_tool_turn(prompt, chat.tool_turn)
        if degraded is None:
            observe_injection(prompt)
        return PreparedTurn(
            turn_id=uuid.uuid4().hex,
            now=now,
            language=language,
            state=state,
            action=action,
            coding=coding,
            recalled=recalled,
            recall_degraded=degraded,
            summary_used=summary_used,
            prompt=prompt,
            tool_held=tool_held,
        )

    async def _recall(
        self, chat: ChatInput, now: float, coding: bool, *, in_buffer: set[str]
    ) -> list[ScoredMemory]:
        """The turn's memories: the search's best among those the recall gate admits (relevance reaches
        the floor, and a higher one for a message about the world: memory/chat/recall_gate.py), minus
        those under the similarity floor, best first: the prompt's memory budget takes as many as fit.
        This session's earlier turns are memories like any other once they have left its buffer; a
        memory made only of messages the buffer still holds is left out (the prompt has them already).
        A long message asks with its window (its opening and its end, at most the search API's 4,000
        characters: memory/text/window.py), not with all of it."""
        k = self._recall_k
        query = message_window(chat.message)
        request = RecallRequest(
            query,
            top_k=(k * 3 if coding else k) + len(in_buffer),
            as_of=now,
            zone=chat.zone,
            min_relevance=self._recall_gate.min_relevance,
        )
        hits = (await self._memory.recall(chat.user_id, request)).hits
        hits = [h for h in hits if not _told_by(h.memory.source_message_ids, in_buffer)]
        hits = _distinct(hits)
        hits = self._recall_gate.admitted(query, hits)
        # the similarity floor measures one language's embedding: a memory in the other language than the
        # message's (its similarity is MiniLM's, or the bridge's where the bridge found it; search may read
        # the question with its names in the memories' script) is judged by the gate's relevance alone
        # ("When did Caroline…" over 卡罗琳's turns: found by her name)
        asked_in = detect_language(query)
        kept = [
            h
            for h in hits
            if h.similarity >= self._recall_min_similarity or detect_language(h.memory.content) != asked_in
        ]
        if len(kept) < len(hits):
            metrics.RECALL_BELOW_FLOOR.inc(len(hits) - len(kept))
        hits = kept
        if coding:  # code-related memories rank higher in coding collaboration mode
            hits = sorted(
                hits,
                key=lambda h: h.score + (CODE_BOOST if CODE_RE.search(h.memory.content) else 0.0),
                reverse=True,
            )
        return hits[:k]

    async def _commit(
        self,
        chat: ChatInput,
        prepared: PreparedTurn,
        completion: Completion,
        *,
        remember_reply: bool = True,
        lock_token: str | None = None,
    ) -> None:
        """Session state and the outbox entry, in one transaction, with the turn's idempotency record
        (when the request has a key) and the release of the session lock (`lock_token`). A reply that
        is not to be remembered (the offline responder's) stays in the session buffer but never
        reaches long-term memory, neither as a message nor as the context or confirmation target of a
        later one."""
        reply = completion.text
        user_ts = prepared.now
        reply_ts = max(self._clock(), user_ts + 0.001)
        # No PII is stored: Redis (buffer, summary, slots, outbox) only ever gets redacted text. Layout
        # (newlines, code blocks) is kept here; long-term memory cleans it further when it writes.
        said, answered = redact(chat.message), redact(reply)
        user_msg = BufferedMessage(f"{prepared.turn_id}:u", "user", said, user_ts, chat.name)
        # a reply that only calls tools is the session's, never a memory by itself
        remember_reply = remember_reply and bool(answered.strip())
        reply_msg = BufferedMessage(
            f"{prepared.turn_id}:a",
            "assistant",
            answered,
            reply_ts,
            remember=remember_reply,
            tool_calls=completion.tool_calls,
        )
        turn_messages = buffered_tool_turn(user_msg, chat.tool_turn, reply_msg, held=prepared.tool_held)
        previous = prepared.state.summary
        limits = self._sessions.limits
        summary = await self._extractive.summarize(
            previous.text if previous else None,
            [said],
            prepared.language,
            max_chars=limits.summary_max_chars,
            tool_results=tool_results(chat.tool_turn),
        )
        before = tuple(
            Message("assistant" if m.role == "assistant" else "user", m.content, m.name, m.id, m.timestamp)
            for m in prepared.state.buffer[-2:]
            if m.remember
        )
        said_msg = Message("user", said, chat.name, user_msg.id, user_ts)
        reply_out = Message("assistant", answered, None, reply_msg.id, reply_ts)
        entry = OutboxEntry(
            chat.user_id,
            chat.session_id,
            # a resent tool turn's user message went to long-term memory with its first turn (the
            # writer de-duplicates it if it is all there is); tool calls and results never go
            (reply_out,)
            if prepared.tool_held is not None and remember_reply
            else (said_msg, reply_out)
            if remember_reply
            else (said_msg,),
            before,
            time_zone=name_of(chat.zone),
        )
        record: tuple[str, str, int] | None = None
        if chat.idempotency is not None and self._records is not None:
            # the answer as the session keeps it (redacted): Redis never holds the unredacted reply
            payload = turn_record(dataclasses.replace(completion, text=answered), prepared.debug(), user_ts)
            record = (
                self._records.redis_key(chat.user_id, chat.idempotency),
                self._records.encode(chat.idempotency, payload),
                self._records.ttl_seconds,
            )
        version = await self._sessions.commit_turn(
            chat.user_id,
            chat.session_id,
            turn_messages,
            action=Action(prepared.action, user_ts, content_hash(said)),
            slots=extract_slots(said, now=datetime.fromtimestamp(user_ts, chat.zone or self._zone)),
            summary=summary,
            expected_summary_version=previous.version if previous else 0,
            outbox_stream=self._outbox.stream_of(chat.user_id),
            outbox_fields=entry.to_fields(),
            record=record,
            lock_token=lock_token,
        )
        if version is not None and self._refiner is not None:
            refine = self._refine_summary(chat, said, prepared, previous.text if previous else None, version)
            task = asyncio.create_task(refine)
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def _refine_summary(
        self, chat: ChatInput, said: str, prepared: PreparedTurn, previous: str | None, version: int
    ) -> None:
        assert self._refiner is not None
        try:
            text = await self._refiner.summarize(
                previous,
                [said],
                prepared.language,
                max_chars=self._sessions.limits.summary_max_chars,
                tool_results=tool_results(chat.tool_turn),
            )
            # CAS: dropped if another turn has written a newer summary meanwhile
            await self._sessions.replace_summary(
                chat.user_id, chat.session_id, text, expected_version=version
            )
        except Exception:
            log.warning("summary refinement failed", exc_info=True)


class TurnStream:
    """A streaming turn that holds the session lock until the stream ends. The session is committed
    only when the upstream stream completed; a client that disconnects leaves it unchanged."""

    replayed = False

    def __init__(
        self,
        service: ConversationService,
        chat: ChatInput,
        prepared: PreparedTurn,
        first: StreamItem | None,
        upstream: AsyncIterator[StreamItem],
        stack: contextlib.AsyncExitStack,
        model_name: str,
        prepare_seconds: float = 0.0,
        remember_reply: bool = True,
        lock_token: str | None = None,
    ) -> None:
        self._service = service
        self._chat = chat
        self.prepared = prepared
        self._first = first
        self._upstream = upstream
        self._stack = stack
        self.model_name = model_name
        self._prepare_seconds = prepare_seconds
        self._remember_reply = remember_reply
        self._lock_token = lock_token
        self.text = ""
        self.tool_calls: tuple[dict[str, Any], ...] = ()
        self.end = StreamEnd()
        self.completed = False

    @property
    def turn_id(self) -> str:
        return self.prepared.turn_id

    @property
    def created(self) -> float:
        return self.prepared.now

    @property
    def prompt_tokens(self) -> int:
        counted = self.end.prompt_tokens
        return counted if counted is not None else self.prepared.prompt.estimated_tokens

    @property
    def completion_tokens(self) -> int:
        counted = self.end.completion_tokens
        return counted if counted is not None else estimate_tokens(self.text)

    @property
    def finish_reason(self) -> str:
        return self.end.finish_reason or ("tool_calls" if self.tool_calls else "stop")

    def debug(self) -> TurnDebug:
        return self.prepared.debug()

    async def _items(self) -> AsyncIterator[StreamItem]:
        if self._first is None:
            return
        yield self._first
        async for item in self._upstream:
            yield item

    async def deltas(self) -> AsyncIterator[str | ToolCallDelta]:
        """Text deltas and tool-call pieces as the upstream sent them; its StreamEnd is kept (`end`)."""
        parts: list[str] = []
        pieces: list[ToolCallDelta] = []
        try:
            async for item in self._items():
                if isinstance(item, StreamEnd):
                    self.end = item
                    continue
                if isinstance(item, str):
                    parts.append(item)
                else:
                    pieces.append(item)
                yield item
            self.text = "".join(parts)
            self.tool_calls = merge_tool_deltas(pieces)
            commit_started = time.perf_counter()
            completion = Completion(
                self.text,
                self.model_name,
                prompt_tokens=self.prompt_tokens,
                completion_tokens=self.completion_tokens,
                tool_calls=self.tool_calls,
            )
            commit = self._service._commit(
                self._chat,
                self.prepared,
                completion,
                remember_reply=self._remember_reply,
                lock_token=self._lock_token,
            )
            await asyncio.shield(commit)
            self.completed = True
            metrics.CHAT_TURN_OVERHEAD.observe(self._prepare_seconds + time.perf_counter() - commit_started)
        finally:
            with contextlib.suppress(Exception):
                aclose = getattr(self._upstream, "aclose", None)
                if aclose is not None:
                    await aclose()
            await self._stack.aclose()


def _told_by(sources: Sequence[str], in_buffer: set[str]) -> bool:
    """A memory whose every source message the session buffer still holds (word for word)."""
    return bool(sources) and all(source in in_buffer for source in sources)


def _distinct(hits: Sequence[ScoredMemory]) -> list[ScoredMemory]:
    """The first hit of each text (whitespace and case aside): the same fact said in two sessions is one
    line of the prompt, not two."""
    seen: set[str] = set()
    out: list[ScoredMemory] = []
    for hit in hits:
        key = " ".join(hit.memory.content.split()).casefold()
        if key not in seen:
            seen.add(key)
            out.append(hit)
    return out
