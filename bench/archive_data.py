"""Synthetic long-term memories spread over many months, for the archive tests and benchmark.

Deterministic: the same arguments give the same memories. Every user gets zh+en filler at a steady
rate over `days`, plus two facts with unique tokens: one about 6 months old (warm after archival) and
one about 18 months old (cold). Vectors come from `harness.fakes.HashEmbedder` (the issue asks for a
deterministic embedder for the bulk load), loaded straight through the store, not through HTTP.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

from memory.longterm.ids import content_hash
from memory.models import Memory

DAY = 86_400.0
NOW = 1_790_000_000.0  # 2026-09-21: the simulated clock's "today"

EN = [
    "Note {j}: walked to the {place} with {name} and talked about {thing}.",
    "Note {j}: bought a new {thing} at the market near the {place}.",
    "Note {j}: {name} recommended a book about {thing}.",
]
ZH = [
    "第{j}条记录：今天和{name_zh}去了{place_zh}，聊了{thing_zh}。",
    "第{j}条记录：在{place_zh}附近买了新的{thing_zh}。",
]
WORDS = {
    "place": ["park", "library", "harbour", "station", "museum", "bakery"],
    "name": ["Anna", "Li Wei", "Tom", "Mei", "Carlos", "Yuki"],
    "thing": ["gardening", "chess", "a kettle", "running shoes", "jazz", "tea"],
    "place_zh": ["公园", "图书馆", "码头", "车站", "博物馆", "面包店"],
    "name_zh": ["小王", "李雷", "韩梅梅", "老张", "阿明", "小林"],
    "thing_zh": ["园艺", "象棋", "水壶", "跑鞋", "爵士乐", "茶叶"],
}


@dataclass(frozen=True, slots=True)
class Facts:
    """The two findable facts of one user and a query for each."""

    warm_id: str
    warm_token: str
    cold_id: str
    cold_token: str

    @property
    def warm_query(self) -> str:
        return f"what is my gym locker code {self.warm_token}?"

    @property
    def cold_query(self) -> str:
        return f"我的护照放在哪个箱子里？编号 {self.cold_token}"


def user_ids(users: int) -> list[str]:
    return [f"user{i:04d}" for i in range(users)]


def memories_over(
    users: Sequence[str], per_user: int, days: float, *, now: float = NOW, seed: int = 7
) -> tuple[list[Memory], dict[str, Facts]]:
    """`per_user` filler memories per user spread evenly over the last `days`, plus two facts each
    (about 180 and 540 days old)."""
    rng = random.Random(seed)
    out: list[Memory] = []
    facts: dict[str, Facts] = {}
    for u in users:
        for j in range(per_user):
            age = (j + rng.random()) / per_user * days
            template = rng.choice(EN if j % 2 else ZH)
            text = template.format(j=j, **{k: rng.choice(v) for k, v in WORDS.items()})
            out.append(_memory(f"{u}-m{j:05d}", u, text, now - age * DAY))
        tag = f"{u.removeprefix('user')}{rng.randrange(10**6):06d}"
        f = Facts(f"{u}-warm", f"locker{tag}", f"{u}-cold", f"box{tag}")
        out.append(
            _memory(f.warm_id, u, f"My gym locker code is {f.warm_token}, remember it.", now - 180 * DAY)
        )
        out.append(
            _memory(f.cold_id, u, f"我的护照放在蓝色的箱子里，箱子编号 {f.cold_token}。", now - 540 * DAY)
        )
        facts[u] = f
    return out, facts


def _memory(memory_id: str, user_id: str, text: str, created_at: float) -> Memory:
    return Memory(
        id=memory_id,
        user_id=user_id,
        content=text,
        created_at=created_at,
        session_id="s-archive",
        source="user",
        content_hash=content_hash(text),
        importance=0.5,
        tier="fact",
    )
