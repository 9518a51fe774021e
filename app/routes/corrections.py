"""Correct what mnemo remembers: read one memory with its version, edit it, read its history. Thin:
parse, call MemoryEditor (memory/corrections), map. Included after the memory routes, so `/list` and
`/export` keep their paths."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Path, Response

from app.http.body import StrictJSONRoute
from app.http.deps import ActingUser, AuditDep, EditorDep
from app.http.errors import InvalidHeader, PreconditionRequired, ValidationFailed
from app.http.fields import iso_utc
from app.http.ids import Id
from app.http.schemas import HistoryEventOut, HistoryOut, MemoryDetail, MemoryPatch, memory_fields
from memory.corrections import VERSION_RE, Changes, version_of
from memory.models import Memory

router = APIRouter(prefix="/v1/memory", tags=["memory"], route_class=StrictJSONRoute)
MemoryIdPath = Annotated[Id, Path(description="the memory's id, as search or list gave it")]


def detail(m: Memory, response: Response) -> MemoryDetail:
    version = version_of(m)
    response.headers["ETag"] = f'"{version}"'
    return MemoryDetail(**memory_fields(m), version=version)


def if_match_version(if_match: str | None) -> str:
    """The version an If-Match names: `"v"`, `W/"v"` or a bare `v`, where v is a version this server
    gives (VERSION_RE); anything else is malformed (400 naming the header), not a changed memory (412)."""
    if if_match is None or not if_match.strip():
        raise PreconditionRequired(
            "an edit needs If-Match with the version you read (GET the memory: its ETag) "
            "(编辑前请先读取该记忆，并在 If-Match 中带上它的版本)"
        )
    value = if_match.strip().removeprefix("W/")
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
    if not VERSION_RE.fullmatch(value):
        raise InvalidHeader(
            'If-Match must be one version as the memory\'s ETag gave it, such as "3f9a0c2b1d4e5f60" '
            "(If-Match 格式不对：请原样使用读取记忆时 ETag 给出的版本)"
        )
    return value


@router.get("/{user_id}/{memory_id}", response_model=MemoryDetail)
async def read_memory(
    user_id: ActingUser, memory_id: MemoryIdPath, editor: EditorDep, response: Response
) -> MemoryDetail:
    """One memory, in any archive tier, with its `version` (also the `ETag`): what an edit names."""
    return detail(await editor.read(user_id, memory_id), response)


@router.patch("/{user_id}/{memory_id}", response_model=MemoryDetail)
async def edit_memory(
    user_id: ActingUser,
    memory_id: MemoryIdPath,
    body: MemoryPatch,
    editor: EditorDep,
    audit: AuditDep,
    response: Response,
    if_match: Annotated[str | None, Header(description="the version read: the memory's ETag")] = None,
) -> MemoryDetail:
    """Change the content (embedded again; the old text stays in the history, never recalled as
    current), importance, pinned, topic or validity (`valid_to`: no longer true since). Needs `If-Match`
    with the version read: 428 without it, 412 (`version_mismatch`, the current ETag in the answer) when
    the memory changed since."""
    expected = if_match_version(if_match)
    try:
        changes = Changes(body.changes())
        edited = await editor.edit(user_id, memory_id, changes, expected_version=expected, actor=audit.actor)
    except ValueError as exc:
        raise ValidationFailed(str(exc)) from exc
    if edited.changed:
        await audit.record("edit", user_id, 1, {"memory_id": memory_id, "fields": ",".join(edited.changed)})
    return detail(edited.memory, response)


@router.get("/{user_id}/{memory_id}/history", response_model=HistoryOut)
async def memory_history(user_id: ActingUser, memory_id: MemoryIdPath, editor: EditorDep) -> HistoryOut:
    """Every event of the memory, oldest first: created (from which messages), merged, superseded (by
    which memory), edited (before and after), restored (from which tier), deleted."""
    events = await editor.history(user_id, memory_id)
    return HistoryOut(
        memory_id=memory_id,
        events=[
            HistoryEventOut(
                event=e.kind,
                at=iso_utc(e.at),
                actor=e.actor,
                role=e.role,
                request_id=e.request_id,
                detail=dict(e.detail),
            )
            for e in events
        ],
    )
