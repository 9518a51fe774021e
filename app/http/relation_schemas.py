"""Request and response shapes of relation memory's routes (app/routes/relations.py)."""

from __future__ import annotations

from pydantic import BaseModel

from app.http.schemas import MemoryOut, iso_utc
from memory.models import Memory
from memory.relations.graph import Fact, Graph, Node


class EntityOut(BaseModel):
    id: str  # kind:slug, an id by app/http/ids.py's rule
    kind: str  # person, place, org, product, document kinds (quote, contract, order...), date, event
    name: str  # the name said most recently
    aliases: list[str]  # every other name (and merged id) it was known by: 杭州 / Hangzhou, my sister
    memories: int  # how many memories name it

    @classmethod
    def of(cls, node: Node) -> EntityOut:
        return cls(
            id=node.id,
            kind=node.kind,
            name=node.name,
            aliases=sorted(node.aliases),
            memories=len(node.memories),
        )


class EntityList(BaseModel):
    total: int
    items: list[EntityOut]


class RelationOut(BaseModel):
    subject: str  # an entity id, or "me" (the user)
    subject_name: str
    relation: str  # submitted, approved, lives_in, works_at, friend_of, recommended... (docs/memory.md)
    object: str  # an entity id, "me", or "" for a state of the subject (approved)
    object_name: str
    when: str | None  # the date or month the memory gives ("2026-03")
    said_at: str  # when the memory was written
    valid_to: str | None  # set once a newer relation of its family was said (approved ends pending)
    current: bool
    memory_id: str  # the memory it came from

    @classmethod
    def of(cls, f: Fact, graph: Graph) -> RelationOut:
        return cls(
            subject=f.subject,
            subject_name=graph.label(f.subject),
            relation=f.relation,
            object=f.object,
            object_name=graph.label(f.object) if f.object else "",
            when=f.when or None,
            said_at=iso_utc(f.said_at),
            valid_to=iso_utc(f.valid_to) if f.valid_to is not None else None,
            current=f.valid_to is None,
            memory_id=f.memory_id,
        )


class EntityDetail(EntityOut):
    relations: list[RelationOut]  # current and past, oldest first
    memory_items: list[MemoryOut]  # the memories behind it (the ones that still exist), newest first

    @classmethod
    def build(cls, node: Node, graph: Graph, memories: list[Memory]) -> EntityDetail:
        base = EntityOut.of(node)
        return cls(
            **base.model_dump(),
            relations=[RelationOut.of(f, graph) for f in graph.relations_of(node.id)],
            memory_items=[MemoryOut.of(m) for m in sorted(memories, key=lambda m: -m.created_at)],
        )
