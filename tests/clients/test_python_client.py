"""mnemo_client (clients/python) against a served mnemo: every call of the memory API, sessions and chat
(plain and streamed), sync and async, in Chinese and English; typed errors with mnemo's code; ids checked
before anything is sent. The client reads answers strictly, so a renamed or missing field in any of
these answers fails here (ContractError)."""

from __future__ import annotations

from typing import ClassVar

import httpx
import pytest
from asgi_lifespan import LifespanManager
from mnemo_client import (
    AsyncMnemoClient,
    BadRequest,
    ChatMessage,
    ContractError,
    Forbidden,
    IngestResult,
    InvalidId,
    Memory,
    Message,
    MnemoClient,
    NotFound,
    RateLimited,
    TurnDebug,
    Unauthorized,
    Unavailable,
    VersionMismatch,
)

from app.http.auth import TokenCodec
from app.main import create_app
from app.settings import Settings
from memory import Embedder
from tests.clients.conftest import Mnemo, eventually
from tests.conftest import TEST_SECRET

pytestmark = [pytest.mark.integration]


def contents(client: MnemoClient, user: str) -> list[str]:
    return [m.content for m in client.list_memories(user, limit=100).items]


class TestMemoryApi:
    def test_ingest_search_list_forget_delete_export_erase(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            stored = client.ingest(
                user,
                "s1",
                [
                    {"role": "user", "content": "I moved to Lisbon last spring.", "id": "m1"},
                    {"role": "user", "content": "我最喜欢的茶是乌龙茶。", "id": "m2"},
                    {"role": "user", "content": "My cat is called Miso.", "id": "m3"},
                ],
            )
            assert stored.stored == 3
            assert {m.session_id for m in stored.memories} == {"s1"}
            assert stored.skipped == ()

            hits = client.search(user, "where do I live", top_k=3, time_zone="Asia/Shanghai").hits
            assert "Lisbon" in hits[0].memory.content
            assert hits[0].score > 0
            zh = client.search(user, "我喜欢喝什么茶", top_k=1).hits
            assert "乌龙茶" in zh[0].memory.content

            page = client.list_memories(user, limit=10, session_id="s1")
            assert page.total == 3
            assert len(page.items) == 3

            preview = client.forget(user, query="cat Miso", min_relevance=0.5, dry_run=True)
            assert preview.dry_run
            assert preview.count >= 1
            assert preview.memories is not None
            assert any("Miso" in m.content for m in preview.memories)

            lisbon = next(m for m in page.items if "Lisbon" in m.content)
            read = client.get_memory(user, lisbon.id)
            assert read.content == lisbon.content
            assert read.version
            client.delete_memory(user, lisbon.id)
            with pytest.raises(NotFound) as gone:
                client.delete_memory(user, lisbon.id)
            assert gone.value.code == "memory_not_found"
            assert gone.value.request_id

            document = client.export(user)
            assert any("乌龙茶" in str(m) for m in document["memories"])

            receipt = client.erase(user)
            assert receipt.deleted["chroma"] == 2
            assert receipt.at
            assert contents(client, user) == []

    def test_ids_with_every_allowed_character_reach_the_right_user(self, mnemo: Mnemo) -> None:
        user = "a.b@c|d+e:f_g-h.."  # dots, @ | + : encoded; never read as a dot segment
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            client.ingest(
                user, "s.1", [{"role": "user", "content": "Dots in my name 名字里有点", "id": "x.y"}]
            )
            assert contents(client, user) == ["Dots in my name 名字里有点"]
            assert client.list_sessions(user) == []  # ingest writes long-term memory only
            client.erase(user)

    @pytest.mark.parametrize("bad", ["", ".", "..", "...", "a/b", "a b", "a\n", "é", "x" * 129, "{a}"])
    def test_bad_ids_raise_before_anything_is_sent(self, bad: str) -> None:
        sent: list[httpx.Request] = []
        hooks = httpx.Client(event_hooks={"request": [sent.append]})
        with MnemoClient("http://127.0.0.1:9", "token") as client:
            client._http = hooks  # every request would pass the hook (and fail to connect)
            for call in (
                lambda: client.list_memories(bad),
                lambda: client.delete_memory("alice", bad),
                lambda: client.get_session("alice", bad),
                lambda: client.ingest("alice", bad, [{"role": "user", "content": "hi"}]),
                lambda: client.erase(bad),
            ):
                with pytest.raises(InvalidId):
                    call()
        assert sent == []

    def test_a_memory_is_corrected_with_its_version_and_its_history_read(
        self, mnemo: Mnemo, user: str
    ) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            stored = client.ingest(user, "s1", [{"role": "user", "content": "我住在杭州", "id": "home"}])
            memory_id = stored.memories[0].id
            read = client.get_memory(user, memory_id)
            assert read.version
            edited = client.edit_memory(
                user, memory_id, read.version, content="我搬到苏州了 / I moved to Suzhou", pinned=True
            )
            assert edited.content == "我搬到苏州了 / I moved to Suzhou"
            assert edited.pinned is True
            assert edited.version != read.version
            with pytest.raises(VersionMismatch) as stale:
                client.edit_memory(user, memory_id, read.version, importance=0.9)
            assert stale.value.code == "version_mismatch"
            topical = client.edit_memory(user, memory_id, edited.version or "", topic="home")
            assert topical.topic == "home"
            cleared = client.edit_memory(user, memory_id, topical.version or "", topic=None)
            assert cleared.topic is None
            events = client.memory_history(user, memory_id)
            assert [e.event for e in events] == ["created", "edited", "edited", "edited"]
            assert events[1].detail["content"]["before"] == "我住在杭州"
            with pytest.raises(ValueError, match="give content"):
                client.edit_memory(user, memory_id, cleared.version or "")

    def test_erase_sends_the_confirmation(self, mnemo: Mnemo, user: str) -> None:
        seen: list[httpx.Request] = []
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            client._http.event_hooks["request"].append(seen.append)
            client.erase(user)
        assert seen[-1].method == "DELETE"
        assert seen[-1].url.params["confirm"] == user


class TestErrors:
    def test_bad_token_is_unauthorized_with_code_and_request_id(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, "not-a-jwt") as client, pytest.raises(Unauthorized) as err:
            client.list_memories(user)
        assert err.value.status == 401
        assert err.value.code == "invalid_token"
        assert err.value.request_id

    def test_a_time_zone_that_is_no_iana_name_is_a_bad_request(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client, pytest.raises(BadRequest) as err:
            client.search(user, "昨天 yesterday", time_zone="Beijing")
        assert err.value.code == "validation_error"

    def test_another_users_memory_is_forbidden(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client, pytest.raises(Forbidden) as err:
            client.search("someone-else", "anything 任何")
        assert err.value.code == "forbidden"

    def test_chat_errors_in_openais_envelope_keep_their_code(self, mnemo: Mnemo, user: str) -> None:
        """/v1/chat/* answers OpenAI's envelope (issue 41): the client still raises by mnemo's code."""
        with MnemoClient(mnemo.url, mnemo.token(user)) as client, pytest.raises(BadRequest) as err:
            client.chat([{"role": "assistant", "content": "只有助手 only the assistant"}], session_id="s1")
        assert err.value.code == "validation_error"
        assert "user message" in err.value.detail
        assert err.value.request_id

    async def test_rate_limited_carries_retry_after(self, settings: Settings, embedder: Embedder) -> None:
        limited = settings.model_copy(update={"rate_limit_per_minute": 2})
        bearer = TokenCodec(TEST_SECRET).mint("rl-user", ttl_seconds=600)
        async with LifespanManager(create_app(limited, embedder=embedder), startup_timeout=120) as manager:
            transport = httpx.ASGITransport(app=manager.app)
            async with AsyncMnemoClient(
                "http://mnemo.test", bearer, transport=transport, max_retry_wait=0
            ) as c:
                await c.list_sessions("rl-user")
                await c.list_sessions("rl-user")
                with pytest.raises(RateLimited) as err:
                    await c.list_sessions("rl-user")
        assert err.value.code == "rate_limited"
        assert err.value.retry_after is not None
        assert err.value.retry_after > 0


class TestChat:
    def test_plain_and_streamed_turns_remember_across_sessions(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            first = client.chat(
                [{"role": "user", "content": "Remember: my favourite tea is oolong. 我最喜欢乌龙茶。"}],
                session_id="s1",
            )
            assert first.content
            assert first.debug is not None
            assert first.debug.session_id == "s1"
            assert not first.replayed
            assert "s1" in client.list_sessions(user)
            state = client.get_session(user, "s1")
            assert [m["role"] for m in state.buffer] == ["user", "assistant"]
            eventually(lambda: any("oolong" in c for c in contents(client, user)), "the turn is remembered")

            chunks = list(
                client.chat_stream([{"role": "user", "content": "Which tea do I like?"}], session_id="s2")
            )
            text = "".join(c.delta for c in chunks)
            assert len([c for c in chunks if c.delta]) > 1  # it streamed, piece by piece
            final = chunks[-1]
            assert final.finish_reason == "stop"
            assert final.response == text
            assert final.debug is not None
            assert final.debug.memory_ids  # recalled from session s1
            recalled = {m.id: m.content for m in client.list_memories(user, limit=100).items}
            assert any("oolong" in recalled.get(i, "") for i in final.debug.memory_ids)

            client.delete_session(user, "s2")
            assert "s2" not in client.list_sessions(user)
            client.erase(user)

    def test_a_retried_turn_with_the_same_key_is_replayed(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            msg: list[ChatMessage] = [{"role": "user", "content": "hello 你好"}]
            one = client.chat(msg, session_id="s1", idempotency_key="turn-1")
            two = client.chat(msg, session_id="s1", idempotency_key="turn-1")
            assert two.replayed
            assert two.id == one.id
            client.erase(user)


class TestUndo:
    def test_a_deleted_memory_is_listed_and_restored_in_both_languages(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            client.ingest(
                user,
                "s1",
                [
                    {"role": "user", "content": "我的护照放在蓝色箱子里。", "id": "u1"},
                    {"role": "user", "content": "My bike is a red Bianchi.", "id": "u2"},
                ],
            )
            page = client.list_memories(user)
            for m in page.items:
                client.delete_memory(user, m.id)
            assert contents(client, user) == []
            deleted = client.list_deleted(user, limit=1)
            assert deleted.total == 2
            assert len(deleted.items) == 1
            assert deleted.items[0].how == "deleted"
            assert deleted.items[0].restorable_until > deleted.items[0].deleted_at
            everything = client.list_deleted(user).items
            assert {d.memory.id for d in everything} == {m.id for m in page.items}
            for d in everything:
                assert client.restore_memory(user, d.memory.id).id == d.memory.id
            assert "护照" in client.search(user, "我的护照在哪里？", top_k=1).hits[0].memory.content
            assert "Bianchi" in client.search(user, "what bike do I ride", top_k=1).hits[0].memory.content
            with pytest.raises(NotFound) as gone:
                client.restore_memory(user, everything[0].memory.id)
            assert gone.value.code == "memory_not_found"
            with pytest.raises(InvalidId):
                client.restore_memory(user, "a/b")


def test_forget_sends_min_relevance_not_the_deprecated_min_similarity() -> None:
    from mnemo_client import calls

    call = calls.forget(
        "u", topic=None, session_id=None, before=None, after=None, query="猫", min_relevance=0.6, dry_run=True
    )
    assert call.body == {"dry_run": True, "query": "猫", "min_relevance": 0.6}
    with pytest.warns(DeprecationWarning, match="min_relevance"):
        old = calls.forget(
            "u",
            topic=None,
            session_id=None,
            before=None,
            after=None,
            query="cat",
            min_relevance=None,
            dry_run=True,
            min_similarity=0.3,
        )
    assert old.body == {"dry_run": True, "query": "cat", "min_relevance": 0.7}  # what the server reads it as


class TestAsyncClient:
    async def test_the_same_calls_as_coroutines(self, mnemo: Mnemo, user: str) -> None:
        async with AsyncMnemoClient(mnemo.url, mnemo.token(user)) as client:
            stored = await client.ingest(
                user, "s1", [{"role": "user", "content": "I work at a bakery in Porto."}]
            )
            assert stored.stored == 1
            assert "bakery" in (await client.search(user, "job")).hits[0].memory.content
            assert (await client.list_memories(user)).total == 1
            chunks = [c async for c in client.chat_stream([{"role": "user", "content": "我在哪里工作？"}])]
            assert chunks[-1].debug is not None
            assert chunks[-1].debug.memory_ids
            assert "default" in await client.list_sessions(user)
            assert (await client.get_session(user, "default")).buffer
            await client.delete_session(user, "default")
            assert (await client.forget(user, query="bakery", min_relevance=0.5)).count == 1
            # forgotten, not gone: restorable for the grace period
            deleted = await client.list_deleted(user)
            assert [(d.how, "bakery" in d.memory.content) for d in deleted.items] == [("forgotten", True)]
            assert deleted.grace_seconds > 0
            restored = await client.restore_memory(user, deleted.items[0].memory.id)
            assert "bakery" in restored.content
            assert "bakery" in (await client.search(user, "where do I work")).hits[0].memory.content
            with pytest.raises(NotFound):
                await client.restore_memory(user, restored.id)
            assert "chroma" in (await client.erase(user)).deleted


PROFILE: list[Message] = [
    {"role": "user", "content": "我是一名小学老师，住在杭州", "id": "p-1"},
    {"role": "user", "content": "I'm preparing for IELTS this summer", "id": "p-2"},
    {"role": "user", "content": "我是老师，正在备考雅思，目标7分", "id": "p-3"},
    {"role": "user", "content": "I love hiking with my dog on weekends", "id": "p-4"},
]


class TestRelevanceAndTags:
    """Every hit carries its calibrated `relevance`; search takes `min_relevance` and `tags`, list takes
    `tags` (zh and en forms are one tag), `tier` and `archive_tier`."""

    def test_sync(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            ids = {m.source_message_ids[0]: m.id for m in client.ingest(user, "s1", PROFILE).memories}
            for query in ("我在备考什么考试？", "which exam am I preparing for?"):
                everything = client.search(user, query, top_k=10, min_relevance=0).hits
                assert len(everything) == 4  # 0: every candidate, however unrelated
                assert all(0 <= h.relevance <= 1 for h in everything)
                assert max(h.relevance for h in everything) > min(h.relevance for h in everything)
                floor = everything[0].relevance  # the best hit's: at least it passes
                relevant = client.search(user, query, top_k=10, min_relevance=floor / 2).hits
                assert relevant
                assert all(h.relevance >= floor / 2 for h in relevant)
                assert client.search(user, query, top_k=10, min_relevance=0.99).hits == ()
                tagged = client.search(user, query, min_relevance=0, tags=["#职业_教师", "#goal_ielts"])
                assert [h.memory.id for h in tagged.hits] == [ids["p-3"]]
            assert {m.id for m in client.list_memories(user, tags=["#occupation_teacher"]).items} == {
                ids["p-1"],
                ids["p-3"],
            }
            both = client.list_memories(user, tags=["#职业_教师", "#goal_ielts"])
            assert [m.id for m in both.items] == [ids["p-3"]]
            assert client.list_memories(user, archive_tier="cold").total == 0
            assert client.list_memories(user, archive_tier="hot").total == 4
            with pytest.raises(TypeError):
                client.search(user, "x", tags="#职业_教师")  # a str is a Sequence[str]: refused at run time

    async def test_async(self, mnemo: Mnemo, user: str) -> None:
        async with AsyncMnemoClient(mnemo.url, mnemo.token(user)) as client:
            stored = await client.ingest(user, "s1", PROFILE)
            ids = {m.source_message_ids[0]: m.id for m in stored.memories}
            hits = (await client.search(user, "雅思 IELTS", top_k=10, min_relevance=0)).hits
            assert all(0 <= h.relevance <= 1 for h in hits)
            tagged = await client.search(user, "teacher 老师", min_relevance=0, tags=["#goal_ielts"])
            assert {h.memory.id for h in tagged.hits} == {ids["p-2"], ids["p-3"]}
            listed = await client.list_memories(user, tags=["#目标_备考雅思"], archive_tier="hot")
            assert {m.id for m in listed.items} == {ids["p-2"], ids["p-3"]}


class RefuseFirst(httpx.BaseTransport):
    """The first attempt is answered as mnemo answers a Redis outage (503, Retry-After); every later one
    goes to the real server. Records each attempt's Idempotency-Key."""

    def __init__(self) -> None:
        self.real = httpx.HTTPTransport()
        self.keys: list[str | None] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.keys.append(request.headers.get("idempotency-key"))
        if len(self.keys) == 1:
            body = {"error": "redis_unavailable", "detail": "redis is unavailable", "request_id": "r1"}
            return httpx.Response(503, json=body, headers={"Retry-After": "0"})
        return self.real.handle_request(request)


class TestRetries:
    def test_a_503_is_retried_after_retry_after_with_the_same_idempotency_key(
        self, mnemo: Mnemo, user: str
    ) -> None:
        transport = RefuseFirst()
        with MnemoClient(mnemo.url, mnemo.token(user), transport=transport) as client:
            stored = client.ingest(user, "s1", [{"role": "user", "content": "retried 重试"}])
            assert stored.stored == 1
            assert len(transport.keys) == 2
            assert transport.keys[0]
            assert transport.keys[0] == transport.keys[1]
            client.erase(user)

    def test_a_retry_after_longer_than_allowed_is_raised_at_once(self, mnemo: Mnemo, user: str) -> None:
        class Down(httpx.BaseTransport):
            def handle_request(self, request: httpx.Request) -> httpx.Response:
                body = {"error": "chroma_unavailable", "detail": "down", "request_id": "r2"}
                return httpx.Response(503, json=body, headers={"Retry-After": "5"})

        client = MnemoClient(mnemo.url, "t", transport=Down(), max_retry_wait=1)
        with client, pytest.raises(Unavailable) as err:
            client.list_sessions(user)
        assert err.value.code == "chroma_unavailable"
        assert err.value.retry_after == 5


class TestContract:
    """The client reads strictly: a renamed or missing field is a ContractError, not a silent None."""

    MEMORY: ClassVar[dict[str, object]] = {
        "id": "m1",
        "content": "c",
        "created_at": "2026-01-01T00:00:00Z",
        "session_id": "s1",
        "source": "user",
        "importance": None,
        "topic": None,
        "source_message_ids": [],
        "valid_from": "2026-01-01T00:00:00Z",
        "valid_to": None,
        "superseded_by": None,
    }

    def test_a_renamed_field_fails(self) -> None:
        assert Memory.from_json(self.MEMORY).archive_tier == "hot"  # documented as newer: defaults
        renamed = {("text" if k == "content" else k): v for k, v in self.MEMORY.items()}
        with pytest.raises(ContractError, match="content"):
            Memory.from_json(renamed)
        with pytest.raises(ContractError, match="memory_ids"):
            TurnDebug.from_json({"recalled_ids": []})
        with pytest.raises(ContractError, match="stored"):
            IngestResult.from_json({"count": 1, "memories": []})
