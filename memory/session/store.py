"""Short-term, per user + session state in Redis: summary, recent actions, message buffer, slots, lock.

Atomicity: one turn is recorded by a single Lua script (buffer add + trim, action push, slots, TTLs),
the summary is replaced only by compare-and-set on its version, and the session lock is released or
extended only by the holder of its token.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory import keys
from memory.errors import SessionBusy, SessionLockLost
from memory.locks import RedisLocks
from memory.redis_client import RedisClient, ReplicaAck
from memory.session.actions import coding_mode
from memory.text.slots import Slot

log = logging.getLogger(__name__)
Clock = Callable[[], float]
SLOT_NAMES = ("date", "month", "time", "place", "order_number", "contract_number", "quote_number")

# KEYS: buffer, actions, summary, slot keys...   ARGV: buffer_size, actions_kept, session_ttl, slot_ttl,
# action_json ('' for none), n_members, score1, member1, ..., then one value per slot key
_RECORD_TURN = """
local buffer_size = tonumber(ARGV[1])
local actions_kept = tonumber(ARGV[2])
local session_ttl = tonumber(ARGV[3])
local slot_ttl = tonumber(ARGV[4])
local n = tonumber(ARGV[6])
for i = 0, n - 1 do
  redis.call('ZADD', KEYS[1], ARGV[7 + 2 * i], ARGV[8 + 2 * i])
end
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(buffer_size + 1))
redis.call('EXPIRE', KEYS[1], session_ttl)
if ARGV[5] ~= '' then
  local seq = redis.call('HINCRBY', KEYS[2], 'seq', 1)
  redis.call('HSET', KEYS[2], tostring(seq), ARGV[5])
  local old = seq - actions_kept
  if old > 0 then redis.call('HDEL', KEYS[2], tostring(old)) end
end
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('EXPIRE', KEYS[2], session_ttl) end
if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('EXPIRE', KEYS[3], session_ttl) end
local first_slot_arg = 7 + 2 * n
for k = 4, #KEYS do
  redis.call('SET', KEYS[k], ARGV[first_slot_arg + k - 4], 'EX', slot_ttl)
end
return redis.call('ZCARD', KEYS[1])
"""

# KEYS: summary   ARGV: expected version, new JSON, ttl   -> new version, or -1 when the version moved
_SUMMARY_CAS = """
local current = redis.call('GET', KEYS[1])
local version = 0
if current then
  local ok, decoded = pcall(cjson.decode, current)
  if ok and type(decoded) == 'table' and tonumber(decoded['version']) then
    version = tonumber(decoded['version'])
  end
end
if version ~= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[2], 'EX', tonumber(ARGV[3]))
return version + 1
"""


@dataclass(frozen=True, slots=True)
class SessionLimits:
    buffer_size: int = 10
    actions_kept: int = 5
    session_ttl_seconds: int = 7200
    slot_ttl_seconds: int = 1800
    lock_ttl_seconds: int = 5
    lock_wait_seconds: float = 10.0
    summary_max_chars: int = 80
    summary_fresh_seconds: int = 3600


@dataclass(frozen=True, slots=True)
class Summary:
    text: str
    last_update: float
    version: int


@dataclass(frozen=True, slots=True)
class Action:
    action_type: str
    timestamp: float
    content_hash: str


@dataclass(frozen=True, slots=True)
class BufferedMessage:
    id: str
    role: str
    content: str
    timestamp: float
    name: str | None = None
    remember: bool = True  # False: kept for the session only, never written to long-term memory
    tool_calls: tuple[dict[str, Any], ...] = ()  # an assistant message's tool calls (OpenAI's shape)
    tool_call_id: str | None = None  # a tool message: the call it answers

    def to_member(self) -> str:
        data: dict[str, object] = {
            "id": self.id,
            "role": self.role,
            "content": self.content,
            "ts": self.timestamp,
            "name": self.name,
        }
        if not self.remember:
            data["remember"] = False
        if self.tool_calls:
            data["tool_calls"] = list(self.tool_calls)
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        return json.dumps(data, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_member(cls, raw: str) -> BufferedMessage:
        data = json.loads(raw)
        return cls(
            id=data["id"],
            role=data["role"],
            content=data["content"],
            timestamp=data["ts"],
            name=data.get("name"),
            remember=data.get("remember", True) is not False,
            tool_calls=tuple(data.get("tool_calls") or ()),
            tool_call_id=data.get("tool_call_id"),
        )


@dataclass(frozen=True, slots=True)
class SlotValue:
    raw: str
    value: str
    updated_at: float
    ttl_seconds: int | None = None


@dataclass(frozen=True, slots=True)
class SessionState:
    summary: Summary | None
    actions: list[Action] = field(default_factory=list)  # oldest first
    buffer: list[BufferedMessage] = field(default_factory=list)  # oldest first
    slots: dict[str, SlotValue] = field(default_factory=dict)

    @property
    def coding_mode(self) -> bool:
        return coding_mode([a.action_type for a in self.actions])

    @property
    def mode(self) -> str:
        return "coding" if self.coding_mode else "default"

    @property
    def is_empty(self) -> bool:
        return self.summary is None and not self.actions and not self.buffer and not self.slots


def _as_function(name: str, script: str) -> str:
    """A script body as a Lua function of its own KEYS and ARGV (the parameters shadow the globals)."""
    return f"local function {name}(KEYS, ARGV)\n{script}\nend\n"


# One atomic script for everything a finished turn writes: no MULTI/WATCH (redis-py's asyncio cluster
# pipeline cannot WATCH: it runs the watched commands on another event loop), and one command that a
# lost connection may re-send safely.
# KEYS: lock, outbox stream, record key, buffer, actions, summary, slot keys...
# ARGV: token ('' = no lock), the user message's buffer member, record value ('' = none), record ttl,
#   expected summary version, summary JSON, session ttl, n outbox field pairs, field, value, ...,
#   then _RECORD_TURN's ARGV.
# -> {summary version or -1 (CAS lost), lock released 1/0}; {-2, 0} the lock is no longer ours;
#    {-3, 0} this very turn is already in the buffer (a re-sent commit): applied once, nothing done.
_COMMIT_TURN = (
    _as_function("record_turn", _RECORD_TURN)
    + _as_function("summary_cas", _SUMMARY_CAS)
    + """
local token = ARGV[1]
if token ~= '' and redis.call('GET', KEYS[1]) ~= token then
  if redis.call('ZSCORE', KEYS[4], ARGV[2]) then return {-3, 0} end
  return {-2, 0}
end
local n_fields = tonumber(ARGV[8])
local fields = {}
for i = 1, 2 * n_fields do fields[i] = ARGV[8 + i] end
local rest = {}
for i = 9 + 2 * n_fields, #ARGV do rest[#rest + 1] = ARGV[i] end
local turn_keys = {}
for i = 4, #KEYS do turn_keys[#turn_keys + 1] = KEYS[i] end
record_turn(turn_keys, rest)
local version = summary_cas({KEYS[6]}, {ARGV[5], ARGV[6], ARGV[7]})
redis.call('XADD', KEYS[2], '*', unpack(fields))
if ARGV[3] ~= '' then redis.call('SET', KEYS[3], ARGV[3], 'EX', tonumber(ARGV[4]), 'NX') end
local released = 0
if token ~= '' then released = redis.call('DEL', KEYS[1]) end
return {version, released}
"""
)
LOCK_LOST = -2
APPLIED_BEFORE = -3  # a re-sent commit: the turn is in, its summary version unknown


class SessionStore:
    def __init__(
        self,
        redis: RedisClient,
        limits: SessionLimits | None = None,
        *,
        clock: Clock = time.time,
        replicas: ReplicaAck | None = None,
    ) -> None:
        self._redis = redis
        self._replicas = replicas or ReplicaAck(redis, replicas=0, timeout_ms=0)
        self.limits = limits or SessionLimits()
        self._clock = clock
        self._record = redis.register_script(_RECORD_TURN)
        self._cas = redis.register_script(_SUMMARY_CAS)
        self._locks = RedisLocks(redis)

    # -- reads -------------------------------------------------------------------------------------

    async def load(self, user_id: str, session_id: str, *, with_ttls: bool = False) -> SessionState:
        slot_keys = [keys.slot(user_id, session_id, n) for n in SLOT_NAMES]
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.get(keys.summary(user_id, session_id))
            pipe.hgetall(keys.actions(user_id, session_id))
            pipe.zrange(keys.buffer(user_id, session_id), 0, -1)
            for key in slot_keys:  # GETs, not MGET: a cluster pipeline refuses multi-key commands
                pipe.get(key)
            if with_ttls:
                for key in slot_keys:
                    pipe.ttl(key)
            results = await pipe.execute()
        raw_summary, raw_actions, raw_buffer = results[:3]
        n = len(slot_keys)
        raw_slots = results[3 : 3 + n]
        ttls = results[3 + n :] if with_ttls else [None] * n
        return SessionState(
            summary=_parse_summary(raw_summary),
            actions=_parse_actions(raw_actions),
            buffer=[BufferedMessage.from_member(m) for m in raw_buffer],
            slots={
                name: _parse_slot(raw, ttl)
                for name, raw, ttl in zip(SLOT_NAMES, raw_slots, ttls, strict=True)
                if raw is not None
            },
        )

    async def session_ids(self, user_id: str) -> list[str]:
        """Every session of the user that still has short-term state, sorted."""
        prefix = keys.sessions_pattern(user_id).removesuffix("*")
        found: set[str] = set()
        async for key in self._redis.scan_iter(match=keys.sessions_pattern(user_id), count=500):
            match = _SESSION_KEY_RE.match(str(key)[len(prefix) :])
            if match:
                found.add(match.group(1))
        return sorted(found)

    # -- writes ------------------------------------------------------------------------------------

    def _record_call(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BufferedMessage],
        action: Action | None,
        slots: Sequence[Slot],
    ) -> tuple[list[str], list[str | int | float]]:
        now = self._clock()
        latest = {s.name: s for s in slots if s.name in SLOT_NAMES}
        lim = self.limits
        action_json = (
            json.dumps(
                {
                    "action_type": action.action_type,
                    "timestamp": action.timestamp,
                    "content_hash": action.content_hash,
                }
            )
            if action
            else ""
        )
        script_keys = [
            keys.buffer(user_id, session_id),
            keys.actions(user_id, session_id),
            keys.summary(user_id, session_id),
        ] + [keys.slot(user_id, session_id, name) for name in latest]
        args: list[str | int | float] = [
            lim.buffer_size,
            lim.actions_kept,
            lim.session_ttl_seconds,
            lim.slot_ttl_seconds,
            action_json,
            len(messages),
        ]
        for m in messages:
            args += [m.timestamp, m.to_member()]
        args += [
            json.dumps({"raw": s.raw, "value": s.value, "updated_at": now}, ensure_ascii=False)
            for s in latest.values()
        ]
        return script_keys, args

    async def record_turn(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BufferedMessage],
        *,
        action: Action | None = None,
        slots: Sequence[Slot] = (),
    ) -> int:
        """Add messages to the buffer (trimmed to the newest N in the same step), push the action,
        store slots, refresh TTLs. Returns the buffer length."""
        script_keys, args = self._record_call(user_id, session_id, messages, action, slots)
        return int(await self._record(keys=script_keys, args=args))

    async def commit_turn(
        self,
        user_id: str,
        session_id: str,
        messages: Sequence[BufferedMessage],
        *,
        action: Action | None,
        slots: Sequence[Slot],
        summary: str,
        expected_summary_version: int,
        outbox_stream: str,
        outbox_fields: dict[str, str],
        record: tuple[str, str, int] | None = None,
        lock_token: str | None = None,
    ) -> int | None:
        """Everything a finished turn writes, in one script: buffer, action, slots, summary (CAS)
        and the long-term outbox entry; with `record` (key, value, ttl) the turn's idempotency record;
        with `lock_token` (from `lock()`) the release of the session lock, so that once the commit is
        applied no separate release is left that could fail. With a lock the script applies only while
        the lock is still ours (SessionLockLost otherwise: nothing written); one that a lost connection
        re-sends finds its own turn and changes nothing. Returns the new summary version (None if the
        CAS lost). A failure of the release step alone does not fail the commit (logged, counted)."""
        script_keys, args = self._record_call(user_id, session_id, messages, action, slots)
        payload = json.dumps(
            {"summary": summary, "last_update": self._clock(), "version": expected_summary_version + 1},
            ensure_ascii=False,
        )
        token = self._locks.hand_over(lock_token) if lock_token is not None else ""
        flat_fields = [x for pair in outbox_fields.items() for x in pair]
        record_key, record_value, record_ttl = record or (keys.lock(user_id, session_id), "", 0)
        commit_keys = [keys.lock(user_id, session_id), outbox_stream, record_key, *script_keys]
        # EVAL, not EVALSHA: no NOSCRIPT round trip (a master promoted in a failover has an empty
        # script cache), so the commit is exactly one command; Redis caches the compiled script anyway
        result: Any = await self._redis.eval(
            _COMMIT_TURN,
            len(commit_keys),
            *commit_keys,
            *[
                token,
                messages[0].to_member(),
                record_value,
                record_ttl,
                expected_summary_version,
                payload,
                self.limits.session_ttl_seconds,
                len(outbox_fields),
                *flat_fields,
                *args,
            ],
        )
        version, released = int(result[0]), bool(int(result[1]))
        if version == LOCK_LOST:  # not renewed within its TTL (memory/locks.py), or deleted
            raise SessionLockLost(session_id)
        if lock_token is not None:
            self._locks.settled(lock_token, released=released or version == APPLIED_BEFORE)
        # with replicas required, the turn is acknowledged only once they have it (WAIT)
        await self.ensure_replicated(user_id)
        return None if version < 0 else version

    async def ensure_replicated(self, user_id: str) -> None:
        """Wait until the replicas have every write of the user's slot so far (no-op without required
        replicas): for answers that acknowledge a turn without committing it (a replay)."""
        await self._replicas.wait(keys.outbox_stream_of(user_id), keys.replica_ack(user_id))

    async def replace_summary(
        self, user_id: str, session_id: str, text: str, *, expected_version: int
    ) -> int | None:
        """Compare-and-set: writes only if the stored version is still `expected_version`.
        Returns the new version, or None when another writer got there first."""
        new_version = expected_version + 1
        payload = json.dumps(
            {"summary": text, "last_update": self._clock(), "version": new_version}, ensure_ascii=False
        )
        result = int(
            await self._cas(
                keys=[keys.summary(user_id, session_id)],
                args=[expected_version, payload, self.limits.session_ttl_seconds],
            )
        )
        return None if result < 0 else result

    async def delete(self, user_id: str, session_id: str) -> int:
        session_keys = [
            keys.summary(user_id, session_id),
            keys.actions(user_id, session_id),
            keys.buffer(user_id, session_id),
            keys.lock(user_id, session_id),
        ] + [keys.slot(user_id, session_id, n) for n in SLOT_NAMES]
        return int(await self._redis.delete(*session_keys))

    # -- lock ----------------------------------------------------------------------------------------

    def lock(self, user_id: str, session_id: str) -> contextlib.AbstractAsyncContextManager[str]:
        """The session's turn lock (`SET NX EX lock_ttl`, owner-only release, kept alive while held).
        Waits at most `lock_wait_seconds`, then raises SessionBusy."""
        return self._locks.hold(
            keys.lock(user_id, session_id),
            ttl_seconds=self.limits.lock_ttl_seconds,
            wait_seconds=self.limits.lock_wait_seconds,
            on_timeout=lambda: SessionBusy(session_id, self.limits.lock_wait_seconds),
            kind="session",
        )


# what follows `...:u:{user}:s:` in a session key: `{session}:part`; session ids never contain braces
_SESSION_KEY_RE = re.compile(r"^\{([^{}]+)\}:(?:summary|actions|buffer|lock|slot:[^:]+)$")


def _parse_summary(raw: str | None) -> Summary | None:
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return Summary(
            text=str(data["summary"]), last_update=float(data["last_update"]), version=int(data["version"])
        )
    except (ValueError, KeyError, TypeError):
        log.warning("unreadable summary ignored")
        return None


def _parse_actions(raw: dict[str, str]) -> list[Action]:
    entries = []
    for field_name, value in raw.items():
        if field_name == "seq":
            continue
        try:
            data = json.loads(value)
            entries.append(
                (int(field_name), Action(data["action_type"], float(data["timestamp"]), data["content_hash"]))
            )
        except (ValueError, KeyError, TypeError):
            continue
    return [a for _, a in sorted(entries, key=lambda e: e[0])]


def _parse_slot(raw: str, ttl: int | None) -> SlotValue:
    data = json.loads(raw)
    return SlotValue(
        raw=data["raw"],
        value=data["value"],
        updated_at=float(data["updated_at"]),
        ttl_seconds=ttl if ttl and ttl > 0 else None,
    )
