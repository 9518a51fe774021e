"""Relation memory's routes (issue 26): the user's profile (their own entity, with zh/en tags); list and
search a user's entities, read one with its aliases, relations (current and past) and the memories
behind them; merge two entities that are one, and split a merge again. Thin: parse, ask
memory/relations, map. Included before corrections' `/{user_id}/{memory_id}`, so `/entities` and
`/profile` are never read as memory ids."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.http.body import StrictJSONRoute
from app.http.deps import ActingUser, AuditDep, MemoryDep
from app.http.errors import Conflict, NotFound, ValidationFailed
from app.http.ids import Id, MergeId
from app.http.relation_schemas import (
    EntityDetail,
    EntityList,
    EntityOut,
    MergeList,
    MergeOut,
    MergeRequest,
    ProfileOut,
)
from memory.errors import EntityNotFound, MergeConflict, MergeRefused
from memory.relations.graph import search
from memory.relations.profile import Profile

router = APIRouter(prefix="/v1/memory", tags=["relations"], route_class=StrictJSONRoute)
EntityIdPath = Annotated[Id, Path(description="the entity's id, as the entity list gave it (kind:slug)")]
MergeIdPath = Annotated[MergeId, Path(description="a merge's id, as the merge answered it (mg-<16 hex>)")]
_OFF = "relation memory is off (RELATION_MEMORY=false; 关系记忆未开启)"


@router.get("/{user_id}/profile", response_model=ProfileOut)
async def read_profile(user_id: ActingUser, memory: MemoryDep, audit: AuditDep) -> ProfileOut:
    """The user's own entity: what their own messages say of them (occupation, employer, home, family,
    goals, preferences, devices, diet, pets), current and past, each with its tags in Chinese and
    English (`#职业_教师`, `#occupation_teacher`) that list and search filter on. Empty while relation
    memory is off."""
    if memory.relations is None:
        return ProfileOut.of(user_id, Profile((), ()))
    profile = (await memory.relations.graph(user_id)).profile()
    await audit.record_access("read", user_id, len(profile.current), {"what": "profile"})
    return ProfileOut.of(user_id, profile)


@router.get("/{user_id}/entities/merges", response_model=MergeList)
async def list_merges(user_id: ActingUser, memory: MemoryDep, audit: AuditDep) -> MergeList:
    """The merges in force, oldest first (what a split can undo)."""
    if memory.relations is None:
        return MergeList(items=[])
    merges = await memory.relations.merges(user_id)
    await audit.record_access("list", user_id, len(merges), {"what": "merges"})
    return MergeList(items=[MergeOut.of(m) for m in merges])


@router.post("/{user_id}/entities/merges", response_model=MergeOut, status_code=201)
async def merge_entities(
    user_id: ActingUser, body: MergeRequest, memory: MemoryDep, audit: AuditDep
) -> MergeOut:
    """Make `source` one with `target` (say "Mel" and "Melanie" are one person): the source's names,
    memories and relations are the target's, for what was written before and what is written after.
    Both must be entities exactly as the entity list names them (an alias is refused with the entity it
    stands for); they must be of one kind. 409 when a merge in force already made them one (this one
    would close a cycle) or merged one of them away: checked and written atomically, so of two merges
    racing one holds. Undone by `DELETE .../entities/merges/{merge_id}`."""
    if memory.relations is None:
        raise NotFound(_OFF)
    try:
        merge = await memory.relations.merge(
            user_id, body.source, body.target, actor=audit.actor.user_id, at=memory.now()
        )
    except EntityNotFound as exc:
        raise NotFound(str(exc)) from exc
    except MergeRefused as exc:
        raise ValidationFailed(str(exc)) from exc
    except MergeConflict as exc:
        raise Conflict(str(exc)) from exc
    # the merge's id only: entity ids carry names, and the audit stream outlives an erase
    await audit.record("merge", user_id, 1, {"merge_id": merge.id})
    return MergeOut.of(merge)


@router.delete("/{user_id}/entities/merges/{merge_id}", response_model=MergeOut)
async def split_entities(
    user_id: ActingUser, merge_id: MergeIdPath, memory: MemoryDep, audit: AuditDep
) -> MergeOut:
    """Split a wrong merge: undoes exactly the merge named (its source is an entity of its own again,
    with its names, memories and relations); 404 when this user has no merge with that id."""
    if memory.relations is None:
        raise NotFound(_OFF)
    try:
        merge = await memory.relations.split(user_id, merge_id)
    except EntityNotFound as exc:
        raise NotFound(str(exc)) from exc
    await audit.record("split", user_id, 1, {"merge_id": merge.id})
    return MergeOut.of(merge)


@router.get("/{user_id}/entities", response_model=EntityList)
async def list_entities(
    user_id: ActingUser,
    memory: MemoryDep,
    audit: AuditDep,
    prefix: Annotated[
        str, Query(max_length=64, description="name, alias or id prefix (杭, Hang, doc:q-)")
    ] = "",
    kind: Annotated[str | None, Query(min_length=1, max_length=32)] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> EntityList:
    """The user's entities (people, places, organisations, products, documents, events), most
    mentioned first; `prefix` searches names and aliases in any language."""
    if memory.relations is None:
        return EntityList(total=0, items=[])
    found = search(await memory.relations.graph(user_id), prefix, kind)
    await audit.record_access("list", user_id, min(limit, len(found)), {"what": "entities"})
    return EntityList(total=len(found), items=[EntityOut.of(n) for n in found[:limit]])


@router.get("/{user_id}/entities/{entity_id}", response_model=EntityDetail)
async def read_entity(
    user_id: ActingUser, entity_id: EntityIdPath, memory: MemoryDep, audit: AuditDep
) -> EntityDetail:
    """One entity: its aliases, its relations current and past (each with the memory it came from and
    when it was said) and those memories. An alias id (`kin:sister` once Anna is named) answers with
    the entity it stands for."""
    if memory.relations is None:
        raise NotFound("relation memory is off (RELATION_MEMORY=false)")
    graph = await memory.relations.graph(user_id)
    node = graph.nodes.get(graph.resolve(entity_id))
    if node is None:
        raise NotFound(f"no entity {entity_id} (实体不存在)")
    memories = await memory.get(user_id, sorted(node.memories))
    await audit.record_access("read", user_id, len(memories), {"what": "entity"})
    return EntityDetail.build(node, graph, memories)
