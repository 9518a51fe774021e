"""Short-term session state: read it, or clear it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from app.deps import ActingUser, SessionsDep
from app.schemas import ID_PATTERN, iso_utc

router = APIRouter(prefix="/v1/sessions", tags=["sessions"])
SessionIdPath = Annotated[str, Path(pattern=ID_PATTERN)]


@router.get("/{user_id}/{session_id}")
async def get_session(
    user_id: ActingUser, session_id: SessionIdPath, sessions: SessionsDep
) -> dict[str, Any]:
    """Summary, mode, recent actions, message buffer and slots of one session."""
    state = await sessions.load(user_id, session_id, with_ttls=True)
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


@router.delete("/{user_id}/{session_id}", status_code=204, response_class=Response)
async def delete_session(user_id: ActingUser, session_id: SessionIdPath, sessions: SessionsDep) -> Response:
    """Clear every short-term key of the session (long-term memories stay)."""
    await sessions.delete(user_id, session_id)
    return Response(status_code=204)
