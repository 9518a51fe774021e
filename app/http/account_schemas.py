"""Bodies for a user's account as a whole: erasure (preview and receipt), user lookup, sessions and the
audit trail."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
)

from app.http.fields import (
    iso_utc,
)
from memory.governance.audit import AuditRecord
from memory.governance.compaction import AtRest
from memory.governance.erasure import ErasurePreview, ErasureReceipt
from memory.session.store import SessionState


class AtRestOut(BaseModel):
    state: Literal["none", "scheduled", "operator"] = Field(
        description="none: the store keeps no files; scheduled: rewritten automatically by `purged_by`; "
        "operator: gone once the operator runs `command` on the store's host"
    )
    purged_by: str | None = None
    command: str | None = None

    @classmethod
    def of(cls, at_rest: AtRest) -> AtRestOut:
        return cls(
            state=at_rest.state,
            purged_by=iso_utc(at_rest.purged_by) if at_rest.purged_by is not None else None,
            command=at_rest.command,
        )


class ErasureOut(BaseModel):
    deleted: dict[str, int]
    at: str
    at_rest_purged_by: str | None = Field(
        description="when no store's files (Redis AOF/RDB, Chroma's database and log) hold the erased "
        "data any more; null while an operator command is needed (see at_rest)"
    )
    at_rest: dict[str, AtRestOut]

    @classmethod
    def of(cls, receipt: ErasureReceipt) -> ErasureOut:
        by = receipt.at_rest_purged_by
        return cls(
            deleted=receipt.deleted,
            at=iso_utc(receipt.at),
            at_rest_purged_by=iso_utc(by) if by is not None else None,
            at_rest={store: AtRestOut.of(a) for store, a in receipt.at_rest.items()},
        )


class FoundUsersOut(BaseModel):
    prefix: str
    users: list[str] = Field(description="user ids starting with the prefix, in id order")
    more: bool = Field(description="more users have this prefix than `limit`: type more of the id")


class ErasePreviewOut(BaseModel):
    """What `DELETE /v1/memory/{user_id}?confirm=` would delete now; nothing is deleted to know it."""

    user_id: str
    held: bool = Field(description="false: no store holds anything for this id (a typo?)")
    memories: dict[str, int] = Field(description="long-term memories by archive tier: hot, warm, cold")
    memories_total: int
    kinds: dict[str, int] = Field(description="the same memories by kind: fact, episodic, unclassified")
    sessions: int = Field(description="sessions with short-term state")
    buffer_messages: int = Field(description="recent messages held in those sessions")
    histories: int = Field(description="memories with a recorded history (edits, restores, deletes)")
    redis_keys: int = Field(description="every Redis key under the user's prefix")
    outbox: int = Field(description="chat turns not yet written to long-term memory")
    dead_letters: int = Field(description="turns the writer could not read")

    @classmethod
    def of(cls, user_id: str, p: ErasurePreview) -> ErasePreviewOut:
        return cls(
            user_id=user_id,
            held=p.held,
            memories=p.memories,
            memories_total=sum(p.memories.values()),
            kinds=p.kinds,
            sessions=p.sessions,
            buffer_messages=p.buffer_messages,
            histories=p.histories,
            redis_keys=p.redis_keys,
            outbox=p.outbox,
            dead_letters=p.dead_letters,
        )


def session_view(user_id: str, session_id: str, state: SessionState) -> dict[str, Any]:
    """Summary, mode, recent actions, message buffer and slots of one session, as JSON."""
    summary = state.summary
    return {
        "user_id": user_id,
        "session_id": session_id,
        "summary": None
        if summary is None
        else {
            "summary": summary.text,
            "last_update": iso_utc(summary.last_update),
            "version": summary.version,
        },
        "mode": state.mode,
        "actions": [
            {"action_type": a.action_type, "timestamp": iso_utc(a.timestamp), "content_hash": a.content_hash}
            for a in state.actions
        ],
        "buffer": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "timestamp": iso_utc(m.timestamp),
                "name": m.name,
            }
            for m in state.buffer
        ],
        "slots": {
            name: {
                "raw": s.raw,
                "value": s.value,
                "updated_at": iso_utc(s.updated_at),
                "ttl_seconds": s.ttl_seconds,
            }
            for name, s in state.slots.items()
        },
    }


class SessionEntry(BaseModel):
    session_id: str
    short_term: bool = Field(description="the session holds short-term state (buffer, slots, summary)")
    memories: int = Field(description="long-term memories that came from it")


class SessionListResponse(BaseModel):
    session_ids: list[str] = Field(description="the sessions that hold short-term state")
    sessions: list[SessionEntry] = Field(
        description="every session: those holding short-term state and those long-term memories came "
        "from (written through /messages, or a chat whose short-term state expired)"
    )


class AuditEntryOut(BaseModel):
    id: str
    at: str
    action: str
    actor: str
    actor_role: str
    user_id: str
    count: int
    request_id: str
    details: dict[str, str]

    @classmethod
    def of(cls, r: AuditRecord) -> AuditEntryOut:
        e = r.event
        return cls(
            id=r.id,
            at=iso_utc(r.at),
            action=e.action,
            actor=e.actor,
            actor_role=e.actor_role,
            user_id=e.subject,
            count=e.count,
            request_id=e.request_id,
            details=dict(e.details),
        )


class AuditResponse(BaseModel):
    items: list[AuditEntryOut]
    next_before: str | None
