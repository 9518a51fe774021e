"""Rendezvous hashing, server names and the rebalance plan's rules: pure functions, no servers."""

from __future__ import annotations

import asyncio
import collections

import pytest
from pydantic import ValidationError

from app.settings import Settings, parse_chroma_servers
from memory.longterm.placement import Placement, rendezvous, weight
from memory.longterm.rebalance import UserState, adoptable
from memory.longterm.versions import observe, observed

USERS = [f"user-{i}" for i in range(12_000)] + [f"用户{i}" for i in range(3_000)]
GOOD = "k" * 48


class TestRendezvous:
    def test_stable_across_processes_and_releases(self) -> None:
        # pinned values (blake2b, not Python's salted hash): a change here would move users on upgrade
        assert weight("a", "alice") == 0xF465C3F078D89EE5
        assert {u: rendezvous(u, ["a", "b", "c"]) for u in ("alice", "bob", "张伟", "user-7", "carol")} == {
            "alice": "a",
            "bob": "b",
            "张伟": "b",
            "user-7": "b",
            "carol": "a",
        }

    def test_order_of_the_server_list_does_not_matter(self) -> None:
        for u in USERS[:2000]:
            assert rendezvous(u, ["a", "b", "c"]) == rendezvous(u, ["c", "a", "b"])

    def test_users_spread_evenly(self) -> None:
        counts = collections.Counter(rendezvous(u, ["a", "b", "c"]) for u in USERS)
        assert set(counts) == {"a", "b", "c"}
        for n in counts.values():
            assert abs(n / len(USERS) - 1 / 3) < 0.02

    @pytest.mark.parametrize("before", [["a"], ["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d", "e"]])
    def test_adding_a_server_moves_only_the_users_it_takes(self, before: list[str]) -> None:
        after = [*before, "new"]
        moved = [u for u in USERS if rendezvous(u, before) != rendezvous(u, after)]
        assert all(rendezvous(u, after) == "new" for u in moved)  # nobody moves between old servers
        assert abs(len(moved) / len(USERS) - 1 / len(after)) < 0.02  # about 1/n of them

    @pytest.mark.parametrize("gone", ["a", "c"])
    def test_removing_a_server_moves_only_its_users(self, gone: str) -> None:
        before = ["a", "b", "c", "d"]
        after = [s for s in before if s != gone]
        for u in USERS:
            if rendezvous(u, before) != gone:
                assert rendezvous(u, after) == rendezvous(u, before)
        left = collections.Counter(rendezvous(u, after) for u in USERS if rendezvous(u, before) == gone)
        assert set(left) == set(after)  # its users spread over the others, not all onto one

    def test_no_server_is_an_error(self) -> None:
        with pytest.raises(ValueError, match="at least one server"):
            rendezvous("alice", [])


class TestServerSettings:
    def test_named_and_bare_entries(self) -> None:
        servers = parse_chroma_servers(" a=http://chroma-a:8000 , http://Chroma-B:8000/ ,c=https://c")
        assert [(s.name, s.url) for s in servers] == [
            ("a", "http://chroma-a:8000"),
            ("http://chroma-b:8000", "http://chroma-b:8000"),
            ("c", "https://c:443"),
        ]

    def test_a_url_named_server_can_change_address(self) -> None:
        [server] = parse_chroma_servers("http://old-host:8000=http://new-host:8000")
        assert server == ("http://old-host:8000", "http://new-host:8000")

    @pytest.mark.parametrize(
        ("spec", "error"),
        [
            ("", "no Chroma server"),
            ("ftp://x:1", "http"),
            ("a b=http://x:1", "name"),
            ("a=http://x:1,a=http://y:1", "names must be unique"),
            ("a=http://x:1,b=http://X:1", "URLs must be unique"),
            ("a=http://x:1/chroma", "no path"),
        ],
    )
    def test_bad_lists_are_refused(self, spec: str, error: str) -> None:
        with pytest.raises(ValueError, match=error):
            parse_chroma_servers(spec)

    def test_chroma_url_alone_is_one_server_named_by_its_url(self) -> None:
        s = Settings(_env_file=None, auth_jwt_secret=GOOD, chroma_url="http://127.0.0.1:8001")
        assert [(x.name, x.url) for x in s.chroma_servers] == [
            ("http://127.0.0.1:8001", "http://127.0.0.1:8001")
        ]

    def test_chroma_urls_win_over_chroma_url(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("CHROMA_URLS", "a=http://a:8000,b=http://b:8000")
        monkeypatch.setenv("CHROMA_DRAINING", "b")
        s = Settings(_env_file=None, auth_jwt_secret=GOOD)
        assert [x.name for x in s.chroma_servers] == ["a", "b"]
        assert s.chroma_draining_names == ["b"]

    @pytest.mark.parametrize(("draining", "error"), [("c", "unknown"), ("a,b", "every server")])
    def test_bad_draining_lists_are_refused(self, draining: str, error: str) -> None:
        with pytest.raises(ValidationError, match=error):
            Settings(
                _env_file=None,
                auth_jwt_secret=GOOD,
                chroma_urls="a=http://a:8000,b=http://b:8000",
                chroma_draining=draining,
            )


class TestPlanRules:
    def test_a_user_where_they_belong_has_nothing_to_do(self) -> None:
        assert UserState("u", Placement(at="a"), "a", {"a": 3}).work == []

    def test_work_items(self) -> None:
        assert UserState("u", Placement(at="a"), "b", {"a": 3}).work == ["move"]
        assert UserState("u", Placement(), "a", {"a": 3}).work == ["adopt"]  # data from before placements
        assert UserState("u", Placement(), "b", {"a": 3}).work == ["adopt", "move"]
        assert UserState("u", Placement(at="a", to="b"), "b", {"a": 3, "b": 1}).work == ["resume", "move"]
        assert UserState("u", Placement(at="b", from_="a"), "b", {"a": 3, "b": 3}).work == ["cleanup"]
        assert UserState("u", Placement(at="b"), "b", {"a": 2, "b": 3}).work == ["merge"]

    def test_adoption_prefers_the_target_then_the_largest_copy(self) -> None:
        assert adoptable({"a": 3, "b": 1}, "b") == "b"
        assert adoptable({"a": 3, "c": 5}, "b") == "c"
        assert adoptable({}, "b") == "b"


class TestObservedVersions:
    def test_a_version_vouches_only_for_its_user_its_task_and_a_short_while(self) -> None:
        async def scenario() -> None:
            observe("alice", 7)
            assert observed("alice", 1.0) == 7
            assert observed("bob", 1.0) is None
            assert observed("alice", -1.0) is None  # older than the window

            async def other_task() -> int | None:
                return observed("alice", 1.0)

            # a task started later copies the context: it sees what was read before it started...
            assert await asyncio.create_task(other_task()) == 7

            async def reads_bob() -> None:
                observe("bob", 3)

            # ...but what a child task reads never leaks back into its parent
            await asyncio.create_task(reads_bob())
            assert observed("bob", 1.0) is None

        asyncio.run(scenario())

        async def fresh() -> int | None:
            return observed("alice", 1.0)

        assert asyncio.run(fresh()) is None  # another request (another context) trusts nothing
