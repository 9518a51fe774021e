"""Everything mnemo holds about one user, read piece by piece (GDPR right of access / portability).

`UserExport` yields the parts in order, each small: long-term memories a page at a time (each naming
the embedding models that hold a vector of it: MiniLM, and the bridge model when it has one), then each
session's short-term state, then the messages still waiting in the outbox. A caller can stream them
out without ever holding a large user in memory.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from memory.archive.view import ArchivedTiers
from memory.longterm.bridge import BridgeVectors
from memory.longterm.chroma import LongTermStore
from memory.longterm.history import HistoryEvent, MemoryHistory
from memory.models import Memory
from memory.outbox.stream import Outbox, OutboxEntry
from memory.relations.graph import Graph, Record
from memory.relations.store import RelationStore
from memory.session.store import SessionState, SessionStore


@dataclass(frozen=True, slots=True)
class SessionPart:
    session_id: str
    state: SessionState


class UserExport:
    def __init__(
        self,
        store: LongTermStore,
        sessions: SessionStore,
        outbox: Outbox,
        *,
        page_size: int = 500,
        archive: ArchivedTiers | None = None,
        main_model: str = "all-MiniLM-L6-v2",
        bridge: BridgeVectors | None = None,
        history: MemoryHistory | None = None,
        relations: RelationStore | None = None,
    ) -> None:
        """`archive`: warm and cold memories follow the hot ones. `main_model` and `bridge`: the
        embedding channels, named in each exported memory (the vectors themselves are derived from the
        text and left out)."""
        self._main_model = main_model
        self._bridge = bridge
        self._store = store
        self._archive = archive
        self._sessions = sessions
        self._outbox = outbox
        self._page_size = page_size
        self._history = history
        self._relations = relations

    async def memories(self, user_id: str) -> AsyncIterator[list[Memory]]:
        """Hot pages, then warm, then cold; an id a move is carrying is left out of hot while the
        archive answers for it (and fails the read if the archive changes meanwhile)."""
        snap = await self._archive.snapshot(user_id) if self._archive is not None else None
        hidden = snap.hidden("hot") if snap is not None else frozenset()
        async for page in self._store.pages(user_id, self._page_size):
            visible = [m for m in page if m.id not in hidden]
            if visible:
                yield visible
        if self._archive is not None:
            async for page in self._archive.pages(user_id, self._page_size, snap):
                yield page

    async def embedded_by(self, user_id: str, memories: list[Memory]) -> dict[str, list[str]]:
        """memory id -> the models that hold a vector of it (the main channel holds every record)."""
        held = (
            await self._bridge.held(user_id, [m.id for m in memories]) if self._bridge is not None else set()
        )
        bridge = [self._bridge.model] if self._bridge is not None else []
        return {m.id: [self._main_model, *(bridge if m.id in held else [])] for m in memories}

    async def session_ids(self, user_id: str) -> list[str]:
        return await self._sessions.session_ids(user_id)

    async def sessions(
        self, user_id: str, session_ids: list[str] | None = None
    ) -> AsyncIterator[SessionPart]:
        """Each session's state; `session_ids` when the caller listed them already (`session_ids()`)."""
        for session_id in session_ids if session_ids is not None else await self.session_ids(user_id):
            state = await self._sessions.load(user_id, session_id, with_ttls=True)
            if not state.is_empty:
                yield SessionPart(session_id, state)

    async def histories(self, user_id: str) -> dict[str, list[HistoryEvent]]:
        """The recorded history of each memory that has one (edits, restores, deletes)."""
        return await self._history.users_histories(user_id) if self._history is not None else {}

    async def relations(self, user_id: str) -> dict[str, Record]:
        """What each memory says of entities and relations (relation memory), by memory id."""
        return await self._relations.records(user_id) if self._relations is not None else {}

    async def entity_graph(self, user_id: str) -> Graph:
        """The user's entities, merges and profile as relation memory folds them (empty when it is off)."""
        return await self._relations.graph(user_id) if self._relations is not None else Graph({})

    async def pending(self, user_id: str) -> AsyncIterator[OutboxEntry]:
        async for _, entry in self._outbox.entries_of(user_id):
            yield entry
