"""A backlog of chat turns is written in fewer, larger writes without changing what is written."""

from __future__ import annotations

from dataclasses import replace

from memory.models import Message
from memory.outbox.stream import OutboxEntry
from memory.outbox.worker import coalesce


def turn(user: str, session: str, n: int, at: float) -> tuple[str, OutboxEntry]:
    msgs = (
        Message("user", f"第{n}句 message {n}", id=f"{n}:u"),
        Message("assistant", f"reply {n}", id=f"{n}:a"),
    )
    previous = (Message("user", f"第{n - 1}句", id=f"{n - 1}:u"),) if n else ()
    return f"{int(at * 1000)}-0", OutboxEntry(user, session, msgs, previous, enqueued_at=at)


def test_consecutive_turns_of_one_session_merge_in_order() -> None:
    items = [
        turn("ann", "s1", 0, 10.0),
        turn("ann", "s1", 1, 11.0),
        turn("ann", "s2", 2, 12.0),
        turn("ann", "s2", 3, 13.0),
    ]
    merged = coalesce(items, limit=8)
    assert [ids for ids, _ in merged] == [["10000-0", "11000-0"], ["12000-0", "13000-0"]]
    first = merged[0][1]
    assert [m.id for m in first.messages] == ["0:u", "0:a", "1:u", "1:a"]
    assert first.previous == items[0][1].previous
    assert first.enqueued_at == 10.0  # the earliest: an erase after any of them drops the write
    assert merged[1][1].previous == items[2][1].previous


def test_limit_and_other_users_split_runs() -> None:
    items = [turn("ann", "s", i, float(i)) for i in range(5)] + [
        turn("bob", "s", 5, 5.0),
        turn("ann", "s", 6, 6.0),
    ]
    merged = coalesce(items, limit=2)
    assert [len(ids) for ids, _ in merged] == [2, 2, 1, 1, 1]
    assert [e.user_id for _, e in merged] == ["ann", "ann", "ann", "bob", "ann"]
    assert sum(len(e.messages) for _, e in merged) == 2 * len(items)


def test_turns_in_different_time_zones_are_written_apart() -> None:
    """Issue 39: a later turn's "yesterday" was read in the earlier turn's zone once merged."""
    (a_id, a), (b_id, b), (c_id, c) = (turn("ann", "s", i, float(i)) for i in range(3))
    items = [
        (a_id, replace(a, time_zone="Asia/Shanghai")),
        (b_id, replace(b, time_zone="America/New_York")),
        (c_id, replace(c, time_zone="America/New_York")),
    ]
    merged = coalesce(items, limit=8)
    assert [ids for ids, _ in merged] == [[a_id], [b_id, c_id]]
    assert [entry.time_zone for _, entry in merged] == ["Asia/Shanghai", "America/New_York"]
    same = coalesce([(a_id, a), (b_id, b)], limit=8)
    assert len(same) == 1  # no zone named on either: one write, as before
