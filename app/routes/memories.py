"""Long-term memory API: ingest, search, list, delete, restore. Thin: parse, call MemoryService, map."""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Mapping
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Query, Response
from fastapi.responses import StreamingResponse

from app.http.account_schemas import ErasureOut
from app.http.body import StrictJSONRoute
from app.http.deps import (
    ActingUser,
    AuditDep,
    EraserDep,
    ExporterDep,
    IdempotencyDep,
    MemoryDep,
    OutboxDep,
    RestorerDep,
    SessionsDep,
    SettingsDep,
)
from app.http.errors import ConfirmationRequired, ImportLaneFull, NotFound, ValidationFailed
from app.http.export import export_document
from app.http.fields import Timestamp
from app.http.forget_schemas import (
    FORGET_PREVIEW_MAX,
    ForgetPreview,
    ForgetRequest,
    ForgetResponse,
    ForgetWhy,
)
from app.http.idempotency import REPLAYED_HEADER, IdempotencyHeader, idempotency_key
from app.http.ids import TAGS_MAX, Id, ImportId, Tag, path_segment, tag_keys
from app.http.schemas import (
    DeletedListResponse,
    DeletedMemoryOut,
    ImportAccepted,
    ImportStatus,
    IngestRequest,
    IngestResponse,
    ListResponse,
    MemoryOut,
    SearchHit,
    SearchRequest,
    SearchResponse,
    SkippedMessage,
    TiersOut,
    memory_fields,
)
from memory.errors import REDIS_UNAVAILABLE, ForgetNotConfirmed
from memory.models import RecallRequest
from memory.recall.degraded import watching
from memory.session.store import SessionState, SessionStore
from memory.text.zones import name_of
from monitoring import metrics

router = APIRouter(prefix="/v1/memory", tags=["memory"], route_class=StrictJSONRoute)
log = logging.getLogger(__name__)
IMPORT_RETRY_AFTER_SECONDS = 30  # a full import lane drains at the writers' pace: minutes, not seconds


@router.post("/{user_id}/messages", response_model=IngestResponse)
async def ingest_messages(
    user_id: ActingUser,
    body: IngestRequest,
    memory: MemoryDep,
    records: IdempotencyDep,
    response: Response,
    idempotency_key_header: IdempotencyHeader = None,
) -> IngestResponse:
    """Store messages as long-term memories; answers once they are searchable. Messages with an `id`
    are idempotent already (a retry overwrites the same memories). With an `Idempotency-Key`, a retry
    gets the recorded answer (`Idempotent-Replayed: true`), messages without an id get one derived from
    the key (so a retry whose answer was never recorded still overwrites instead of adding), and the
    same key with another body is 422. Blank messages (real transcripts hold some: an empty assistant
    turn, a lone U+200B) are skipped and named in `skipped`, so one of them never fails a batch; so are
    messages the write policy keeps no memory of (`small_talk`, `question`: docs/memory.md#write-policy)."""
    idem = idempotency_key(idempotency_key_header, "messages", user_id, body.model_dump(mode="json"))
    kept = [(i, m.to_domain()) for i, m in enumerate(body.messages) if not m.blank]
    skipped = [SkippedMessage(index=i, reason="blank") for i, m in enumerate(body.messages) if m.blank]
    # the write policy's gate (small talk, questions that only ask): sent on, so they still serve as
    # the context of the messages around them and as what a confirmation refers to, but named here
    skipped += [
        SkippedMessage(index=i, reason=r) for i, m in kept if (r := memory.skip_reason(m)) is not None
    ]
    skipped.sort(key=lambda s: s.index)
    if idem is not None:
        recorded = await records.get(user_id, idem)
        if recorded is not None:
            metrics.IDEMPOTENT_REPLAYS.labels("messages").inc()
            response.headers[REPLAYED_HEADER] = "true"
            return IngestResponse.model_validate(recorded)
    # an id derived from the key and the message's place in the request: the same for every retry
    messages = [
        m if m.id is not None or idem is None else dataclasses.replace(m, id=f"idem-{idem.digest}-{i}")
        for i, m in kept
    ]
    stored = await memory.ingest(user_id, body.session_id, messages, zone=body.time_zone) if messages else []
    out = IngestResponse(stored=len(stored), memories=[MemoryOut.of(m) for m in stored], skipped=skipped)
    if idem is not None:
        try:
            await records.put(user_id, idem, out.model_dump(mode="json"))
        except REDIS_UNAVAILABLE as exc:  # the write stands; a retry overwrites the same memories
            log.warning("idempotency record not written", extra={"reason": f"{type(exc).__name__}: {exc}"})
    return out


@router.post("/{user_id}/imports", response_model=ImportAccepted, status_code=202)
async def import_history(
    user_id: ActingUser,
    body: IngestRequest,
    outbox: OutboxDep,
    records: IdempotencyDep,
    settings: SettingsDep,
    response: Response,
    idempotency_key_header: IdempotencyHeader = None,
) -> ImportAccepted:
    """Queue a user's history for long-term memory off the request path (the import lane): answers 202
    once it is durable (and on the replicas `REDIS_MIN_REPLICAS_ACK` asks for), with the status URL in
    `Location`. The writers take the import lane only when no chat turn waits, so chat is never slowed
    by an import. Same body and rules as `/messages`: blank messages skipped, messages with an `id`
    idempotent (the others get one derived from the import, or from the `Idempotency-Key`, whose retry
    gets the recorded answer). 429 `import_lane_full` while the lane of the user's partition holds more
    than `IMPORT_MAX_PENDING_ENTRIES` entries."""
    idem = idempotency_key(idempotency_key_header, "imports", user_id, body.model_dump(mode="json"))
    if idem is not None and (recorded := await records.get(user_id, idem)) is not None:
        metrics.IDEMPOTENT_REPLAYS.labels("imports").inc()
        response.headers[REPLAYED_HEADER] = "true"
        accepted = ImportAccepted.model_validate(recorded)
        response.headers["Location"] = accepted.status_url
        return accepted
    if await outbox.import_backlog(user_id) > settings.import_max_pending_entries:
        raise ImportLaneFull(
            f"more than {settings.import_max_pending_entries} import entries wait to be written; retry "
            f"later (导入队列已满，请稍后重试)",
            headers={"Retry-After": str(IMPORT_RETRY_AFTER_SECONDS)},
        )
    # from the key when there is one: a retry whose answer was lost queues the same ids again
    import_id = f"imp_{idem.digest if idem is not None else uuid.uuid4().hex}"
    messages = [
        dataclasses.replace(m, id=f"{import_id}-{i}") if m.id is None else m
        for i, m in ((i, m.to_domain()) for i, m in enumerate(body.messages) if not m.blank)
    ]
    job = await outbox.append_import(
        user_id, body.session_id, messages, import_id=import_id, time_zone=name_of(body.time_zone)
    )
    status_url = f"/v1/memory/{path_segment(user_id)}/imports/{import_id}"
    out = ImportAccepted(
        import_id=import_id, messages=job.messages, entries=job.entries, status_url=status_url
    )
    response.headers["Location"] = status_url
    if idem is not None:
        try:
            await records.put(user_id, idem, out.model_dump(mode="json"))
        except REDIS_UNAVAILABLE as exc:  # the import stands; a retry queues the same ids again
            log.warning("idempotency record not written", extra={"reason": f"{type(exc).__name__}: {exc}"})
    return out


@router.get("/{user_id}/imports/{import_id}", response_model=ImportStatus)
async def import_status(
    user_id: ActingUser, import_id: Annotated[ImportId, Path()], outbox: OutboxDep
) -> ImportStatus:
    """How far an import is: its entries still to be written (`pending_entries`), `done` once none is.
    404 for an import this user never made, one older than 7 days, or one erased with the user."""
    job = await outbox.import_job(user_id, import_id)
    if job is None:
        raise NotFound("no such import (or older than 7 days) (没有这个导入，或已超过 7 天)")
    return ImportStatus(
        import_id=job.import_id,
        messages=job.messages,
        entries=job.entries,
        pending_entries=job.pending_entries,
        done=job.done,
    )


@router.post("/{user_id}/search", response_model=SearchResponse)
async def search_memories(
    user_id: ActingUser,
    body: SearchRequest,
    memory: MemoryDep,
    sessions: SessionsDep,
    audit: AuditDep,
    settings: SettingsDep,
) -> SearchResponse:
    """The user's memories best matching `query`, best first, each with its calibrated `relevance`;
    hits below `min_relevance` (default `SEARCH_MIN_RELEVANCE`) are left out, so a query about nothing
    the user said finds nothing (`tiers` in the answer: which archive tiers were searched and why);
    with `explain`, each hit's score broken down (dense, keyword, boosts, recency), the evidence of its
    relevance and the source messages it came from."""
    filters = body.filters()
    if body.tags:  # profile tags: only the memories stating every one (AND)
        filters = dataclasses.replace(filters, ids=await memory.tagged_ids(user_id, tag_keys(body.tags)))
    request = RecallRequest(
        body.query,
        top_k=body.top_k,
        filters=filters,
        as_of=body.as_of,
        zone=body.time_zone,
        tiers=body.chosen_tiers,
        min_relevance=body.min_relevance if body.min_relevance is not None else settings.search_min_relevance,
    )
    with watching() as degraded:  # an embedding model down: the keyword channel answered alone
        found = await memory.recall(user_id, request)
    hits = found.hits
    buffers = (
        await session_buffers(sessions, user_id, {h.memory.session_id for h in hits}) if body.explain else {}
    )
    t = found.tiers
    # the query's words are not recorded: they can themselves be personal data
    await audit.record_access("search", user_id, len(hits), {"top_k": str(body.top_k)})
    return SearchResponse(
        results=[SearchHit.of_scored(h, explain=body.explain, buffers=buffers) for h in hits],
        tiers=TiersOut(searched=list(t.searched), choice=t.choice, detail=t.detail),
        degraded=f"{degraded.reasons[0]}_unavailable" if degraded else None,
    )


async def session_buffers(
    sessions: SessionStore, user_id: str, session_ids: set[str]
) -> dict[str, SessionState]:
    """The sessions the hits came from, for their source messages still in the buffer."""
    return {sid: await sessions.load(user_id, sid) for sid in sorted(session_ids)}


@router.get("/{user_id}/list", response_model=ListResponse)
async def list_memories(
    user_id: ActingUser,
    memory: MemoryDep,
    audit: AuditDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
    sort: Annotated[Literal["recent", "importance"], Query()] = "recent",
    topic: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    session_id: Annotated[Id | None, Query()] = None,
    source: Annotated[Literal["user", "assistant"] | None, Query()] = None,
    tier: Annotated[Literal["fact", "episodic"] | None, Query()] = None,
    archive_tier: Annotated[Literal["hot", "warm", "cold"] | None, Query()] = None,
    since: Annotated[Timestamp | None, Query(description="epoch seconds or ISO 8601")] = None,
    until: Annotated[Timestamp | None, Query(description="epoch seconds or ISO 8601")] = None,
    current_only: Annotated[bool, Query()] = False,
    tags: Annotated[
        list[Tag] | None,
        Query(max_length=TAGS_MAX, description="profile tags (#职业_教师, #goal_ielts); every one must hold"),
    ] = None,
) -> ListResponse:
    """A page of the user's memories, newest first or most important first, optionally filtered;
    `current_only` hides memories a newer one superseded; `tags` keeps the memories stating every tag
    given (AND; `#职业_教师` and `#occupation_teacher` are one tag)."""
    if since is not None and until is not None and since > until:
        raise ValidationFailed("since must not be after until")
    tagged = await memory.tagged_ids(user_id, tag_keys(tags)) if tags else None
    page = await memory.list(
        user_id,
        limit=limit,
        offset=offset,
        sort=sort,
        topic=topic,
        session_id=session_id,
        source=source,
        tier=tier,
        since=since,
        until=until,
        current_only=current_only,
        archive_tier=archive_tier,
        only=tagged,
    )
    given: dict[str, object] = {"topic": topic, "session_id": session_id, "source": source, "tier": tier}
    given |= {"archive_tier": archive_tier}
    given |= {"since": since, "until": until, "tags": tags}
    filters = [name for name, v in given.items() if v is not None]
    filters += ["current_only"] if current_only else []
    await audit.record_access(
        "list", user_id, len(page.items), {"sort": sort, "offset": str(offset), "filters": ",".join(filters)}
    )
    return ListResponse(total=page.total, items=[MemoryOut.of(m) for m in page.items])


@router.post("/{user_id}/forget", response_model=ForgetResponse)
async def forget_memories(
    user_id: ActingUser, body: ForgetRequest, memory: MemoryDep, audit: AuditDep
) -> ForgetResponse:
    """Delete the memories matching every given criterion; `dry_run` (the default) only lists them,
    with why each matched. By `query`: calibrated relevance ≥ `min_relevance` and two channels agreeing.
    More than FORGET_CAP at once needs `expected_count` (the dry run's count); a count that differs
    from it deletes nothing (422 confirmation_required)."""
    try:
        result = await memory.forget(
            user_id,
            topic=body.topic,
            session_id=body.session_id,
            before=body.before,
            after=body.after,
            query=body.query,
            min_relevance=body.relevance_floor,
            dry_run=body.dry_run,
            expected_count=body.expected_count,
            actor=audit.actor,
        )
    except ForgetNotConfirmed as exc:
        raise ConfirmationRequired(str(exc)) from exc
    ids = result.ids
    # the criteria's names, never their values: a query or topic can itself be personal data
    criteria = [
        k for k in ("topic", "session_id", "before", "after", "query") if getattr(body, k) is not None
    ]
    await audit.record(
        "forget", user_id, len(ids), {"criteria": ",".join(criteria), "dry_run": str(body.dry_run).lower()}
    )
    preview = (
        [
            ForgetPreview(**memory_fields(m), why=ForgetWhy.of(result.matches[m.id]))
            for m in await memory.get(user_id, ids[:FORGET_PREVIEW_MAX])
        ]
        if body.dry_run
        else None
    )
    return ForgetResponse(count=len(ids), ids=ids, dry_run=body.dry_run, memories=preview)


@router.delete("/{user_id}", response_model=ErasureOut)
async def erase_user(
    user_id: ActingUser,
    eraser: EraserDep,
    audit: AuditDep,
    confirm: Annotated[
        str | None,
        Query(max_length=128, description="the user id again: an erase names its target twice"),
    ] = None,
) -> ErasureOut:
    """Erase everything mnemo holds about the user (GDPR); returns what was deleted where, and by when
    the stores' files on disk no longer hold it (`at_rest_purged_by`, per store in `at_rest`). Needs
    `?confirm=<user_id>`: a malformed delete of one memory (`DELETE /v1/memory/u/.`, which URL
    normalisers turn into `DELETE /v1/memory/u`) must never erase a user."""
    if confirm != user_id:
        raise ConfirmationRequired(
            f"erasing every memory and session of this user needs confirm={user_id} in the query "
            f"(清除该用户的全部数据需要在查询参数中写明 confirm={user_id})"
        )
    receipt = await eraser.erase(user_id)
    out = ErasureOut.of(receipt)
    details = {k: str(v) for k, v in receipt.deleted.items()}
    details["at_rest_purged_by"] = out.at_rest_purged_by or "operator"
    await audit.record("erase", user_id, receipt.deleted.get("chroma", 0), details)
    return out


@router.delete("/{user_id}/{memory_id}", status_code=204, response_class=Response)
async def delete_memory(
    user_id: ActingUser,
    memory_id: Annotated[Id, Path()],
    memory: MemoryDep,
    audit: AuditDep,
) -> Response:
    """Delete one memory; 404 when this user has no memory with that id."""
    await memory.delete(user_id, memory_id, actor=audit.actor)
    await audit.record("delete", user_id, 1, {"memory_id": memory_id})
    return Response(status_code=204)


@router.get("/{user_id}/deleted", response_model=DeletedListResponse)
async def list_deleted(
    user_id: ActingUser,
    restorer: RestorerDep,
    audit: AuditDep,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> DeletedListResponse:
    """The user's deleted and forgotten memories that can still be restored (for
    `RESTORE_GRACE_SECONDS` after their delete), most recently deleted first. None of them is in
    search, chat or export meanwhile."""
    page = await restorer.deleted(user_id, limit=limit, offset=offset)
    await audit.record_access("list_deleted", user_id, len(page.items), {"offset": str(offset)})
    return DeletedListResponse(
        total=page.total,
        grace_seconds=int(restorer.grace_seconds),
        items=[DeletedMemoryOut.of_deleted(d) for d in page.items],
    )


@router.post("/{user_id}/{memory_id}/restore", response_model=MemoryOut)
async def restore_memory(
    user_id: ActingUser,
    memory_id: Annotated[Id, Path()],
    restorer: RestorerDep,
    audit: AuditDep,
) -> MemoryOut:
    """Bring a deleted or forgotten memory back (same id, hot tier), searchable and recalled again;
    404 when this user has no restorable memory with that id (never deleted, restored already, or
    its grace period over)."""
    restored = await restorer.restore(user_id, memory_id, audit.actor)
    await audit.record("restore", user_id, 1, {"memory_id": memory_id})
    return MemoryOut.of(restored)


@router.get(
    "/{user_id}/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/json": {}}, "description": "the export document, streamed"}},
)
async def export_user(user_id: ActingUser, exporter: ExporterDep, audit: AuditDep) -> StreamingResponse:
    """Everything mnemo holds about the user: memories with provenance, session state and writes
    still pending, as one JSON document streamed page by page."""
    # writes still pending are read before the memories: one written in between is then in both
    # (shown twice) rather than in neither (lost from the document)
    pending = [entry async for entry in exporter.pending(user_id)]
    pages = exporter.memories(user_id)
    # an outage of either store shows here, as a 503, before any byte is sent: the first page of
    # memories (Chroma) and the list of sessions (Redis)
    first = await anext(pages, None)
    session_ids = await exporter.session_ids(user_id)

    async def done(counts: Mapping[str, int], complete: bool) -> None:
        details = {k: str(v) for k, v in counts.items() if k != "memories"}
        await audit.record(
            "export", user_id, counts["memories"], {**details, "complete": str(complete).lower()}
        )

    return StreamingResponse(
        export_document(exporter, user_id, first, pages, done, session_ids=session_ids, pending=pending),
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="mnemo-export-{user_id}.json"'},
    )
