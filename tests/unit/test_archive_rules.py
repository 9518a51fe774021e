"""The archive's pure rules: tiers by age, which tier answers during a move, the daily schedule's
clock, and the Parquet layout of the cold store (on a temp dir)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pytest

from memory.archive.cold import ColdRows, ColdStore, month_of, user_hash
from memory.archive.schedule import next_run
from memory.archive.tiers import DAY, Move, TierPolicy, snapshot_of

NOW = 1_790_000_000.0


class TestTierPolicy:
    def test_ages(self) -> None:
        p = TierPolicy()
        assert p.tier_of(NOW, NOW) == "hot"
        assert p.tier_of(NOW - 30 * DAY + 1, NOW) == "hot"
        assert p.tier_of(NOW - 30 * DAY - 1, NOW) == "warm"
        assert p.tier_of(NOW - 365 * DAY + 1, NOW) == "warm"
        assert p.tier_of(NOW - 365 * DAY - 1, NOW) == "cold"

    def test_configurable_and_ordered(self) -> None:
        assert TierPolicy(7, 90).tier_of(NOW - 8 * DAY, NOW) == "warm"
        with pytest.raises(ValueError, match="warm_after_days"):
            TierPolicy(400, 365)


class TestWhoAnswersDuringAMove:
    def test_copying_hides_the_target_switched_hides_the_source(self) -> None:
        copying = Move("hot", "warm", "copying", frozenset({"m1", "m2"}))
        snap = snapshot_of({"v": "3", "move": copying.to_json()})
        assert snap.archived
        assert snap.hidden("warm") == {"m1", "m2"}
        assert snap.hidden("hot") == frozenset()
        switched = Move("warm", "cold", "switched", frozenset({"m3"}), files=("a.parquet",))
        snap = snapshot_of({"v": "4", "cold": "1", "move": switched.to_json()})
        assert snap.has_cold
        assert snap.hidden("warm") == {"m3"}
        assert snap.hidden("cold") == frozenset()
        assert Move.from_json(switched.to_json()) == switched

    def test_a_user_never_archived_skips_warm_and_cold(self) -> None:
        snap = snapshot_of({})
        assert not snap.archived
        assert not snap.has_cold


def test_next_run_is_the_coming_hour() -> None:
    at = dt.datetime(2026, 12, 1, 2, 30, tzinfo=dt.UTC)
    assert next_run(at, 3) == dt.datetime(2026, 12, 1, 3, tzinfo=dt.UTC)
    assert next_run(at, 2) == dt.datetime(2026, 12, 2, 2, tzinfo=dt.UTC)


def _rows(user_id: str, n: int, start: float) -> ColdRows:
    ids = [f"{user_id}-{i}" for i in range(n)]
    metas = [{"user_id": user_id, "created_at": start - i * 20 * DAY, "session_id": "s"} for i in range(n)]
    vectors = np.eye(n, 8, dtype=np.float32)
    return ColdRows(ids, [f"第{i}条 note {i} of {user_id}" for i in range(n)], metas, vectors)


class TestColdStore:
    def test_partitioned_by_user_hash_and_month_and_read_back(self, tmp_path: Path) -> None:
        store = ColdStore(str(tmp_path / "archive"))
        rows = _rows("alice", 4, NOW)
        files = store.plan_files("alice", [float(m["created_at"]) for m in rows.metadatas])
        store.write("alice", rows, files, archived_at=NOW)
        written = store.files_of("alice")
        assert sorted(written) == sorted(files.values())
        for path in written:
            assert f"/user_hash={user_hash('alice')}/month=" in path
        assert {month_of(float(m["created_at"])) for m in rows.metadatas} == set(files)
        memories, vectors = store.read_user("alice")
        assert sorted(m.id for m in memories) == sorted(rows.ids)
        assert all(m.archive_tier == "cold" for m in memories)
        by_id = {m.id: row for row, m in enumerate(memories)}
        assert np.allclose(vectors[by_id["alice-2"]], rows.embeddings[2])
        assert store.count_rows() == 4
        assert "alice" not in "".join(written)  # paths name no one

    def test_delete_ids_and_erase_rewrite_files(self, tmp_path: Path) -> None:
        store = ColdStore(str(tmp_path / "archive"))
        for user in ("alice", "bob"):
            rows = _rows(user, 3, NOW)
            store.write(
                user,
                rows,
                store.plan_files(user, [float(m["created_at"]) for m in rows.metadatas]),
                archived_at=NOW,
            )
        assert store.delete_ids("alice", {"alice-1", "bob-1"}) == 1
        assert sorted(m.id for m in store.read_user("alice")[0]) == ["alice-0", "alice-2"]
        assert store.delete_user("alice") == 2
        assert store.read_user("alice")[0] == []
        assert store.files_of("alice") == []
        assert sorted(m.id for m in store.read_user("bob")[0]) == ["bob-0", "bob-1", "bob-2"]

    def test_rows_of_another_user_are_refused(self, tmp_path: Path) -> None:
        store = ColdStore(str(tmp_path / "archive"))
        rows = _rows("bob", 1, NOW)
        with pytest.raises(ValueError, match="this user's"):
            store.write("alice", rows, store.plan_files("alice", [NOW]), archived_at=NOW)
