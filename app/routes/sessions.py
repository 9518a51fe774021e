"""Short-term session state: read it, or clear it."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from app.http.account_schemas import SessionEntry, SessionListResponse, session_view
from app.http.body import StrictJSONRoute
from app.http.deps import ActingUser, AuditDep, MemoryDep, SessionsDep
from app.http.ids import Id

router = APIRouter(prefix="/v1/sessions", tags=["sessions"], route_class=StrictJSONRoute)
SessionIdPath = Annotated[Id, Path()]


@router.get("/{user_id}", response_model=SessionListResponse)
async def list_sessions(
    user_id: ActingUser, sessions: SessionsDep, memory: MemoryDep, audit: AuditDep
) -> SessionListResponse:
    """The ids of the user's sessions that hold short-term state (`session_ids`), and every session with
    what it holds (`sessions`): short-term state, and how many long-term memories came from it."""
    short = set(await sessions.session_ids(user_id))
    counts = await memory.session_counts(user_id)
    await audit.record_access("read", user_id, len(short | set(counts)), {"what": "sessions"})
    return SessionListResponse(
        session_ids=sorted(short),
        sessions=[
            SessionEntry(session_id=sid, short_term=sid in short, memories=counts.get(sid, 0))
            for sid in sorted(short | set(counts))
        ],
    )


@router.get("/{user_id}/{session_id}")
async def get_session(
    user_id: ActingUser, session_id: SessionIdPath, sessions: SessionsDep, audit: AuditDep
) -> dict[str, Any]:
    """Summary, mode, recent actions, message buffer and slots of one session."""
    state = await sessions.load(user_id, session_id, with_ttls=True)
    await audit.record_access("read", user_id, len(state.buffer), {"session_id": session_id})
    return session_view(user_id, session_id, state)


@router.delete("/{user_id}/{session_id}", status_code=204, response_class=Response)
async def delete_session(user_id: ActingUser, session_id: SessionIdPath, sessions: SessionsDep) -> Response:
    """Clear every short-term key of the session (long-term memories stay)."""
    await sessions.delete(user_id, session_id)
    return Response(status_code=204)
