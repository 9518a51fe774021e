"""Relation memory's routes (issue 26): list and search a user's entities, read one with its aliases,
relations (current and past) and the memories behind them. Thin: parse, ask memory/relations, map.
Included before corrections' `/{user_id}/{memory_id}`, so `/entities` is never read as a memory id."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.http.body import StrictJSONRoute
from app.http.deps import ActingUser, AuditDep, MemoryDep
from app.http.errors import NotFound
from app.http.ids import Id
from app.http.relation_schemas import EntityDetail, EntityList, EntityOut
from memory.relations.graph import search

router = APIRouter(prefix="/v1/memory", tags=["relations"], route_class=StrictJSONRoute)
EntityIdPath = Annotated[Id, Path(description="the entity's id, as the entity list gave it (kind:slug)")]


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
