from __future__ import annotations

import collections

import pytest

from memory.longterm.chroma import all_of, from_record, rows_of, shard_of, to_metadata, where_for
from memory.models import Memory, SearchFilters


class TestWhere:
    def test_single_condition_has_no_and(self) -> None:
        assert where_for("alice") == {"user_id": "alice"}

    def test_several_conditions_use_explicit_and(self) -> None:
        where = where_for(
            "alice",
            SearchFilters(session_id="s1", topic="travel", since=1.0, until=2.0, exclude_session_id="s0"),
        )
        assert set(where) == {"$and"}
        conditions = where["$and"]
        assert {"user_id": "alice"} in conditions
        assert {"session_id": "s1"} in conditions
        assert {"session_id": {"$ne": "s0"}} in conditions
        assert {"topic": "travel"} in conditions
        assert {"created_at": {"$gte": 1.0}} in conditions
        assert {"created_at": {"$lte": 2.0}} in conditions

    def test_empty_is_an_error(self) -> None:
        with pytest.raises(ValueError, match="condition"):
            all_of([])


class TestShards:
    def test_pinned_values(self) -> None:
        # Pinned on purpose: if these move, every existing user silently lands on another shard.
        assert [shard_of(u, 16) for u in ("alice", "bob", "用户")] == [9, 2, 14]
        assert shard_of("alice", 1_000_003) == 429965

    def test_spread_is_even(self) -> None:
        counts = collections.Counter(shard_of(f"user-{i}", 16) for i in range(16_000))
        assert len(counts) == 16
        assert max(counts.values()) < 1.15 * 1000
        assert min(counts.values()) > 0.85 * 1000


class TestMetadata:
    def test_round_trip(self) -> None:
        m = Memory(
            id="m1",
            user_id="alice",
            content="我住在杭州",
            created_at=1700000000.0,
            session_id="s1",
            source="assistant",
            content_hash="h",
            importance=0.7,
            topic="travel",
            name="Alice",
            source_message_ids=("a", "b"),
        )
        assert from_record("m1", "我住在杭州", to_metadata(m)) == m

    def test_unset_fields_are_absent(self) -> None:
        m = Memory(
            id="m1", user_id="u", content="x", created_at=1.0, session_id="s", source="user", content_hash="h"
        )
        meta = to_metadata(m)
        assert meta["importance"] == -1.0
        assert meta["source_message_ids"] == "[]"
        assert from_record("m1", "x", meta) == m

    def test_lists_are_json_strings(self) -> None:
        m = Memory(
            id="m1",
            user_id="u",
            content="x",
            created_at=1.0,
            session_id="s",
            source="user",
            content_hash="h",
            source_message_ids=("a", "b"),
            entities=("杭州",),
        )
        meta = to_metadata(m)
        assert all(not isinstance(v, list) for v in meta.values())
        assert from_record("m1", "x", meta).entities == ("杭州",)


def test_rows_of_skips_records_that_are_not_this_users() -> None:
    """A record a concurrent delete emptied (chromadb 1.5.9 under load) or another user's is skipped;
    the row numbers keep distances and vectors aligned with what is kept."""

    def meta(user: str, text: str) -> dict[str, object]:
        return to_metadata(
            Memory(
                id=text,
                user_id=user,
                content=text,
                created_at=1.0,
                session_id="s",
                source="user",
                content_hash=text,
            )
        )

    ids = ["a", "gone", "b", "other"]
    docs = ["我住在杭州", None, "I live in Porto", "not yours"]
    metas = [meta("ann", "a"), None, meta("ann", "b"), meta("bob", "other")]
    kept = rows_of("ann", ids, docs, metas)
    assert [(row, m.id, m.content) for row, m in kept] == [
        (0, "a", "我住在杭州"),
        (2, "b", "I live in Porto"),
    ]


def test_only_chroma_server_errors_are_retried() -> None:
    """An internal error of a Chroma that answered is retried (a read right after a write to a new
    collection failed once so); a bad request, a missing collection or an unreachable server is not."""
    from chromadb.errors import InternalError, InvalidArgumentError, NotFoundError

    from memory.longterm.records import _chroma_server_error

    assert _chroma_server_error(InternalError("Error creating hnsw segment reader: Nothing found on disk"))
    assert not _chroma_server_error(InvalidArgumentError("bad where"))
    assert not _chroma_server_error(NotFoundError("collection gone"))
    assert not _chroma_server_error(ConnectionRefusedError(111, "Connection refused"))
