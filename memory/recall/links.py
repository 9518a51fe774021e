"""What recall asks of relation memory: the memories linked to a question, with the path of each.

Recall sits below relation memory (memory/relations imports the write rules, which import recall), so it
holds only this protocol; the service's composition root hands the retriever an implementation
(`memory.relations.links.RelationLinks`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Link:
    path: str  # how the memory hangs off the entity: "Q-2024-031 → approved"
    via: str = ""  # the seed memory it was reached from; "" when from an entity the question names
    # it names the question's entity in the question's own words ("苏州" and "苏州"): the keyword
    # channel counts that already, so the link adds no boost (it still leads on to a second hop)
    echo: bool = False


class LinkFinder(Protocol):
    async def linked(
        self, user_id: str, query: str, seeds: Sequence[str], *, as_of: float
    ) -> Mapping[str, Link]:
        """Memory id -> its link for every memory one hop from the entities the query names, two hops
        from them through what a memory relates, and one hop from the `seeds` (the best candidates'
        ids) through their document ids (memory.relations.graph.Graph.linked)."""
        ...

    async def warm(self, user_id: str) -> None:
        """Load what `linked` needs of the user now (a worker's first search of the user starts it
        beside reading the index, so the links do not wait for it afterwards)."""
        ...
