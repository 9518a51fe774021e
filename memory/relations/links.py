"""The link finder recall is given (memory.recall.links.LinkFinder): entities named in the question
(aliases resolved across languages) lead to their memories and on through what those relate, the best
candidates' document ids to the memories naming them (`Graph.linked`); each comes with its path for the
score breakdown, and says whether it only echoes the question's own words (`Graph.says_as`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memory.recall.links import Link
from memory.relations.store import RelationStore


class RelationLinks:
    def __init__(self, store: RelationStore, *, hub: int = 25, limit: int = 30) -> None:
        self._store = store
        self._hub = hub
        self._limit = limit

    async def warm(self, user_id: str) -> None:
        await self._store.graph(user_id)

    async def linked(
        self, user_id: str, query: str, seeds: Sequence[str], *, as_of: float
    ) -> Mapping[str, Link]:
        graph = await self._store.graph(user_id)
        if not len(graph):
            return {}
        named = graph.entities_in(query, said_at=as_of)
        found = graph.linked(seeds, named, hub=self._hub, limit=self._limit)
        return {
            mid: Link(path, via, echo=not via and graph.says_as(mid, query, named))
            for mid, (path, via) in found.items()
        }
