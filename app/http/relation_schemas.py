"""Request and response shapes of relation memory's routes (app/routes/relations.py)."""

from __future__ import annotations

from pydantic import BaseModel

from app.http.fields import StrictBody, iso_utc
from app.http.ids import Id
from app.http.schemas import MemoryOut
from memory.models import Memory
from memory.relations.graph import Fact, Graph, Merge, Node
from memory.relations.profile import Profile, ProfileEntry
from memory.relations.tags import CATEGORIES


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


class ProfileAttributeOut(BaseModel):
    category: str  # occupation, employer, home, family, goal, preference, device, diet, pet
    category_zh: str  # 职业, 工作单位, 居住地, 家人, 目标, 喜好, 设备, 饮食, 宠物
    key: str  # the value's key in both languages (teacher for 老师, 教师 and teacher)
    value: str  # as the user said it most recently
    tags: list[str]  # [zh, en]: ["#职业_教师", "#occupation_teacher"]
    said_at: str  # first said
    valid_to: str | None  # when a newer value replaced it (occupation, employer, home, diet)
    memory_ids: list[str]  # the memories that said it (that still exist)

    @classmethod
    def of(cls, e: ProfileEntry) -> ProfileAttributeOut:
        return cls(
            category=e.category,
            category_zh=CATEGORIES[e.category],
            key=e.key,
            value=e.value,
            tags=list(e.tags),
            said_at=iso_utc(e.said_at),
            valid_to=iso_utc(e.valid_to) if e.valid_to is not None else None,
            memory_ids=list(e.memory_ids),
        )


class ProfileOut(BaseModel):
    user_id: str
    current: list[ProfileAttributeOut]  # by category, then first said
    past: list[ProfileAttributeOut]  # values a newer one replaced
    tags: list[str]  # the current attributes' tags, zh and en
    summary: dict[str, str]  # {"zh": "职业：教师；目标：备考雅思", "en": "occupation: teacher; goal: ielts"}

    @classmethod
    def of(cls, user_id: str, profile: Profile) -> ProfileOut:
        return cls(
            user_id=user_id,
            current=[ProfileAttributeOut.of(e) for e in profile.current],
            past=[ProfileAttributeOut.of(e) for e in profile.past],
            tags=profile.tags,
            summary={"zh": profile.compact(zh=True), "en": profile.compact(zh=False)},
        )


class MergeRequest(StrictBody):
    source: Id  # the entity that stops being one of its own (exactly as the entity list names it)
    target: Id  # the entity it is one with


class MergeOut(BaseModel):
    id: str  # mg-<16 hex>: what a split names
    source: str
    target: str
    at: str
    actor: str

    @classmethod
    def of(cls, m: Merge) -> MergeOut:
        return cls(id=m.id, source=m.source, target=m.target, at=iso_utc(m.at), actor=m.actor)


class MergeList(BaseModel):
    items: list[MergeOut]  # oldest first
