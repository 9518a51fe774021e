"""Layout 1 -> layout 2 on a real redis-server, online: sessions, pending outbox entries, tombstones
and erase markers all survive, twice-run changes nothing, and a user who chatted after the deploy keeps
both halves of their buffer."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
import redis.asyncio as aredis

from app.cli.migrate_keys import KeyMigration
from harness.services import ServerProcess
from memory import keys
from memory.longterm.tombstones import Tombstones
from memory.models import Message
from memory.outbox.stream import Outbox, OutboxEntry
from memory.session.store import BufferedMessage, SessionStore
from memory.text.slots import extract_slots

pytestmark = [pytest.mark.integration, pytest.mark.standalone]  # layout 1 never ran on a cluster
_NEW_SESSION = re.compile(r"^mnemo:\{p\d{4}\}:u:\{(?P<user>[^{}]+)\}:s:\{(?P<sid>[^{}]+)\}:(?P<part>.+)$")
_NEW_USER = re.compile(r"^mnemo:\{p\d{4}\}:u:\{(?P<user>[^{}]+)\}:(?P<rest>.+)$")


def legacy_name(new_key: str) -> str:
    """The layout-1 name of a layout-2 user key (what the previous release wrote)."""
    session = _NEW_SESSION.match(new_key)
    if session:
        return f"mnemo:{{{session['user']}}}:s:{session['sid']}:{session['part']}"
    user = _NEW_USER.match(new_key)
    assert user, new_key
    return f"mnemo:{{{user['user']}}}:{user['rest']}"


@pytest.fixture
async def r(redis_server: ServerProcess) -> AsyncIterator[aredis.Redis]:
    client = aredis.Redis.from_url(f"{redis_server.url}/5", decode_responses=True)
    await client.flushdb()
    yield client
    await client.flushdb()
    await client.aclose()


async def write_layout_1(r: aredis.Redis) -> dict[str, Any]:
    """Sessions, tombstones, a version, an erase marker and a pending outbox, as layout 1 had them."""
    sessions = SessionStore(r)
    for user, session, texts in (
        ("alice", "s1", ["我住在杭州，下周三去上海出差", "Remind me to call mum on Friday"]),
        ("bob:x", "a:b", ["I moved to Porto in March"]),
    ):
        msgs = [BufferedMessage(f"{user}-{i}", "user", t, 1_790_000_000.0 + i) for i, t in enumerate(texts)]
        slots = [s for t in texts for s in extract_slots(t)]
        await sessions.record_turn(user, session, msgs, slots=slots)
        await sessions.replace_summary(user, session, f"{user} 的摘要 summary", expected_version=0)
    await Tombstones(r).bury("alice", ["mem-deleted-1"])
    await r.set(keys.ltm_version("alice"), "1790000000123456")
    before = {
        "alice": await sessions.load("alice", "s1", with_ttls=True),
        "bob:x": await sessions.load("bob:x", "a:b", with_ttls=True),
    }
    async for key in r.scan_iter(match="mnemo:{p*"):
        await r.rename(key, legacy_name(str(key)))
    # the erase marker and the outbox of layout 1: global keys
    await r.set(keys.Legacy.erased_marker("carol"), "1790000000.5", ex=3600)
    legacy_ids = []
    for user, text in (("alice", "我对花生过敏"), ("bob:x", "my locker is 4821"), ("alice", "I keep bees")):
        entry = OutboxEntry(user, "s1", (Message("user", text, id=f"{user}-{text[:3]}"),))
        legacy_ids.append(await r.xadd(keys.Legacy.OUTBOX_STREAM, entry.to_fields()))  # type: ignore[arg-type]
    await r.xgroup_create(keys.Legacy.OUTBOX_STREAM, keys.OUTBOX_GROUP, id="0")
    await r.xreadgroup(keys.OUTBOX_GROUP, "old-writer", {keys.Legacy.OUTBOX_STREAM: ">"}, count=1)
    return {"sessions": before, "outbox_ids": legacy_ids}


async def test_layout_1_is_migrated_online_without_loss(r: aredis.Redis) -> None:
    old = await write_layout_1(r)
    assert [k async for k in r.scan_iter(match="mnemo:{p*")] == []  # nothing in layout 2 yet

    # the new release is serving already: alice chats before the migration reaches her
    sessions = SessionStore(r)
    late = BufferedMessage("alice-late", "user", "新的一轮 a new turn", 1_790_000_100.0)
    await sessions.record_turn("alice", "s1", [late])

    report = await KeyMigration(r).run()
    assert report.outbox_entries_moved == 3
    assert report.keys_merged >= 1  # alice's buffer existed in both layouts
    assert report.skipped == []

    alice = await sessions.load("alice", "s1", with_ttls=True)
    before = old["sessions"]["alice"]
    assert [m.id for m in alice.buffer] == [*(m.id for m in before.buffer), "alice-late"]
    assert alice.summary is not None
    assert alice.summary.text == "alice 的摘要 summary"
    assert alice.slots
    assert set(alice.slots) == set(before.slots)
    assert all(s.ttl_seconds is not None and s.ttl_seconds > 0 for s in alice.slots.values())
    bob = await sessions.load("bob:x", "a:b")
    assert [m.content for m in bob.buffer] == ["I moved to Porto in March"]
    assert await sessions.session_ids("bob:x") == ["a:b"]
    assert await r.ttl(keys.buffer("alice", "s1")) > 0

    tombstones = Tombstones(r)
    assert await tombstones.buried("alice", ["mem-deleted-1", "other"]) == {"mem-deleted-1"}
    assert await tombstones.erased_at("carol") == 1790000000.5  # the layout-1 marker still counts
    assert await r.get(keys.ltm_version("alice")) == "1790000000123456"

    outbox = Outbox(r)
    moved = [e async for _, e in outbox.entries_of("alice")]
    assert [e.messages[0].content for e in moved] == ["我对花生过敏", "I keep bees"]
    ids = old["outbox_ids"]
    assert [e.enqueued_at for e in moved] == [
        int(ids[0].split("-")[0]) / 1000,
        int(ids[2].split("-")[0]) / 1000,
    ]
    assert [e.user_id async for _, e in outbox.entries_of("bob:x")] == ["bob:x"]
    assert not await r.exists(keys.Legacy.OUTBOX_STREAM)
    leftovers = [k async for k in r.scan_iter(match=keys.Legacy.USER_KEYS) if keys.Legacy.user_of(str(k))]
    assert leftovers == []

    again = await KeyMigration(r).run()  # idempotent: nothing left to move
    assert (again.keys_renamed, again.keys_merged, again.outbox_entries_moved) == (0, 0, 0)


async def test_dry_run_changes_nothing(r: aredis.Redis) -> None:
    await write_layout_1(r)
    before = sorted([str(k) async for k in r.scan_iter(match="*")])
    report = await KeyMigration(r, dry_run=True).run()
    assert report.keys_renamed > 0
    assert report.outbox_entries_moved == 3
    assert sorted([str(k) async for k in r.scan_iter(match="*")]) == before
