"""Edit one long-term memory, under the user's write lock, with a version check.

An edit of the content replaces the memory's text in place (same id): the old text is kept in the
memory's history (`edited`, before and after), never recalled as current. The new text goes through the
same cleaning and PII redaction as a write, is embedded again (both channels: the store's upsert writes
the bridge vector too) and its claims and entities are read again. An archived memory (warm or cold) that
is edited comes back to hot (`restored`): the edit is a sign it matters now.

Versions are a digest of the stored record (text and every metadata field), so any change, an edit, a
merge, a supersession, moves it: an edit names the version it read (`If-Match`) and a stale one is a
`VersionMismatch` instead of a silent overwrite.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from memory.archive.view import ArchivedTiers
from memory.embedding.base import Embedder
from memory.errors import MemoryNotFound, VersionMismatch
from memory.longterm.chroma import LongTermStore, to_metadata
from memory.longterm.dense_models import DenseModel, DenseModels
from memory.longterm.history import Actor, HistoryEvent, MemoryHistory
from memory.longterm.ids import content_hash
from memory.longterm.versions import LtmVersions
from memory.models import Memory
from memory.service import MemoryService
from memory.text.privacy import sanitize
from memory.write.scoring import entities
from memory.write.supersession import claims_of

Lock = Callable[[str], contextlib.AbstractAsyncContextManager[Any]]
EDITABLE = ("content", "importance", "pinned", "topic", "valid_to")


VERSION_RE = re.compile(r"[0-9a-f]{16}")  # what version_of gives: 8 bytes of blake2b, in hex


def version_of(m: Memory) -> str:
    """The record's version: a digest of its text and metadata (the archive tier left out: a move is
    not a change of the memory)."""
    raw = json.dumps([m.id, m.content, to_metadata(m)], sort_keys=True, ensure_ascii=False)
    return hashlib.blake2b(raw.encode(), digest_size=8).hexdigest()


@dataclass(frozen=True, slots=True)
class Changes:
    """The fields an edit sets (only those given). `topic` and `valid_to` may be set to None (cleared)."""

    fields: Mapping[str, Any]

    def __post_init__(self) -> None:
        unknown = set(self.fields) - set(EDITABLE)
        if unknown or not self.fields:
            raise ValueError(f"an edit sets one or more of {', '.join(EDITABLE)}")


@dataclass(frozen=True, slots=True)
class Edited:
    memory: Memory
    changed: tuple[str, ...]  # the fields whose value changed (empty: the edit changed nothing)


class MemoryEditor:
    def __init__(
        self,
        memory: MemoryService,
        store: LongTermStore,
        embedder: Embedder,
        versions: LtmVersions,
        history: MemoryHistory,
        *,
        lock: Lock,
        archive: ArchivedTiers | None = None,
        dense: DenseModels | None = None,
    ) -> None:
        """`dense`: the dense models during a switch (None: `embedder` embeds every user)."""
        self._memory = memory
        self._store = store
        self._dense = dense or DenseModels(DenseModel("", embedder))
        self._versions = versions
        self._history = history
        self._lock = lock
        self._archive = archive

    async def read(self, user_id: str, memory_id: str) -> Memory:
        found = await self._memory.get(user_id, [memory_id])
        if not found:
            raise MemoryNotFound(memory_id)
        return found[0]

    async def history(self, user_id: str, memory_id: str) -> list[HistoryEvent]:
        """Every event of a memory that exists (a deleted one's history is only its `deleted` event)."""
        found = await self._memory.get(user_id, [memory_id])
        if found:
            return await self._history.of(found[0])
        recorded = await self._history.recorded(user_id, memory_id)
        if not recorded:
            raise MemoryNotFound(memory_id)
        return recorded

    async def edit(
        self, user_id: str, memory_id: str, changes: Changes, *, expected_version: str, actor: Actor
    ) -> Edited:
        async with self._lock(user_id):
            current = await self.read(user_id, memory_id)
            version = version_of(current)
            if version != expected_version:
                raise VersionMismatch(memory_id, version)
            updated = _applied(current, changes)
            changed = tuple(f for f in EDITABLE if getattr(updated, f) != getattr(current, f))
            if not changed and current.archive_tier == "hot":
                return Edited(current, ())
            updated = replace(updated, archive_tier="hot")
            model = await self._dense.for_user(user_id, fresh=True)  # under the lock: the store's
            vectors = await model.embedder.embed([updated.embed_text])
            await self._store.upsert([updated], vectors, models={user_id: model.tag} if model.tag else None)
            if current.archive_tier != "hot" and self._archive is not None:
                await self._archive.delete(user_id, [memory_id])
                await self._history.record(
                    user_id, memory_id, "restored", actor, {"from": current.archive_tier}
                )
            await self._versions.bump(user_id, upserted=[memory_id], records=[(updated, vectors[0])])
            if "content" in changed:  # what it names now (relation memory)
                await self._memory.index_relations(user_id, [updated])
            if changed:
                detail = {
                    f: {"before": _shown(getattr(current, f)), "after": _shown(getattr(updated, f))}
                    for f in changed
                }
                await self._history.record(user_id, memory_id, "edited", actor, detail)
        self._memory.forget_user_caches(user_id)
        return Edited(updated, changed)


def _applied(m: Memory, changes: Changes) -> Memory:
    fields = dict(changes.fields)
    if "content" in fields:
        text = sanitize(str(fields["content"]))
        if not text.strip():
            raise ValueError("the content says nothing once cleaned")
        fields["content"] = text
        fields["content_hash"] = content_hash(text)
        fields["entities"] = tuple(entities(text)[:20])
        # what it states about the user is read again; a claim the old text made goes with it
        fields["facts"] = tuple(claims_of(text)) if m.source == "user" else ()
    return replace(m, **fields)


def _shown(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value
