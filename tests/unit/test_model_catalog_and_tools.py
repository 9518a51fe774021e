"""The /v1/models catalog's cache (a fake clock, no timing) and the pure helpers of tool turns."""

from __future__ import annotations

import httpx

from app.clients.model_catalog import FAILED_RETRY_SECONDS, ModelCatalog
from app.clients.upstream import OpenAICompatibleLLM
from memory.chat.llm import PromptMessage, ToolCallDelta, coherent_tool_history, merge_tool_deltas
from tests.fake_llm import FakeUpstream


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def catalog(upstream: FakeUpstream, clock: Clock, ttl: float = 300.0) -> ModelCatalog:
    client = httpx.AsyncClient(base_url="http://upstream.test/v1/", transport=upstream.transport)
    return ModelCatalog(
        OpenAICompatibleLLM(client, model="cfg"), "cfg", ttl_seconds=ttl, clock=clock, started=5
    )


class TestCatalog:
    async def test_the_list_is_read_again_only_after_its_ttl(self) -> None:
        upstream, clock = FakeUpstream(), Clock()
        upstream.models = ["a", "通义-7b"]
        models = catalog(upstream, clock)
        assert [m.id for m in await models.models()] == ["a", "通义-7b"]
        upstream.models = ["b"]
        clock.now += 299
        assert [m.id for m in await models.models()] == ["a", "通义-7b"]
        assert upstream.model_list_reads == 1
        clock.now += 2
        assert [m.id for m in await models.models()] == ["b"]
        assert upstream.model_list_reads == 2

    async def test_an_unreadable_list_gives_the_configured_model_and_is_retried_soon(self) -> None:
        upstream, clock = FakeUpstream(mode="down"), Clock()
        models = catalog(upstream, clock)
        assert [(m.id, m.created, m.owned_by) for m in await models.models()] == [("cfg", 5, "mnemo")]
        upstream.mode, upstream.models = "ok", ["x"]
        clock.now += FAILED_RETRY_SECONDS - 1
        assert [m.id for m in await models.models()] == ["cfg"]
        clock.now += 2
        assert [m.id for m in await models.models()] == ["x"]
        assert await models.find("cfg") is None

    async def test_no_upstream_is_the_configured_model(self) -> None:
        models = ModelCatalog(None, "mnemo-offline", ttl_seconds=300)
        assert [m.id for m in await models.models()] == ["mnemo-offline"]


CALL = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}


class TestToolHelpers:
    def test_streamed_pieces_make_the_call(self) -> None:
        pieces = [
            ToolCallDelta(
                ({"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}},)
            ),
            ToolCallDelta(({"index": 0, "function": {"arguments": '{"a": '}},)),
            ToolCallDelta(({"index": 0, "function": {"arguments": "1}"}},)),
        ]
        assert merge_tool_deltas(pieces) == (CALL,)

    def test_orphans_are_left_out_and_answered_calls_kept(self) -> None:
        user = PromptMessage("user", "天气？ weather?")
        calls = PromptMessage("assistant", "", tool_calls=(CALL,))
        result = PromptMessage("tool", "晴 sunny", tool_call_id="c1")
        assert coherent_tool_history([user, calls, result]) == [user, calls, result]
        assert coherent_tool_history([result, user]) == [user]  # its call was trimmed away
        assert coherent_tool_history([user, calls, PromptMessage("user", "算了 never mind")]) == [
            user,
            PromptMessage("user", "算了 never mind"),
        ]  # a call never answered
        said = PromptMessage("assistant", "我查一下 let me check", tool_calls=(CALL,))
        assert coherent_tool_history([user, said]) == [
            user,
            PromptMessage("assistant", "我查一下 let me check"),
        ]
