"""mnemo_client.integrations.agents (OpenAI Agents SDK) against the served mnemo: the memory tools as
the SDK invokes them (JSON arguments through `on_invoke_tool`), and an agent whose model is mnemo's chat
completions, whose turns mnemo recalls into and remembers."""

from __future__ import annotations

import json

import pytest
from agents import Agent, RunConfig, Runner
from agents.tool_context import ToolContext
from mnemo_client import AsyncMnemoClient
from mnemo_client.integrations.agents import memory_tools, mnemo_model

from tests.clients.conftest import Mnemo

pytestmark = [pytest.mark.integration]


async def invoke(tool: object, arguments: dict[str, object]) -> str:
    from agents import FunctionTool

    assert isinstance(tool, FunctionTool)
    args = json.dumps(arguments)
    context = ToolContext(context=None, tool_name=tool.name, tool_call_id="call-1", tool_arguments=args)
    return str(await tool.on_invoke_tool(context, args))


class TestMemoryTools:
    async def test_search_remember_forget_as_the_sdk_calls_them(self, mnemo: Mnemo, user: str) -> None:
        async with AsyncMnemoClient(mnemo.url, mnemo.token(user)) as client:
            tools = {t.name: t for t in memory_tools(client, user)}
            assert set(tools) == {"search_memory", "remember", "forget_memory"}
            assert tools["search_memory"].params_json_schema["required"] == ["query", "top_k"]
            assert "Stored 1" in await invoke(tools["remember"], {"content": "我的航班是 CA123，周五出发。"})
            found = await invoke(tools["search_memory"], {"query": "我的航班号是多少", "top_k": 1})
            assert "CA123" in found
            memory_id = found.split("[", 1)[1].split("]", 1)[0]
            assert (await invoke(tools["forget_memory"], {"memory_id": memory_id})).startswith("Forgot")
            await client.erase(user)


class TestMnemoModel:
    async def test_an_agent_chats_through_mnemo_and_is_remembered(self, mnemo: Mnemo, user: str) -> None:
        token = mnemo.token(user)
        agent = Agent(
            name="assistant", instructions="Be brief.", model=mnemo_model(mnemo.url, token, session_id="ag.1")
        )
        result = await Runner.run(
            agent, "Remember that my favourite colour is teal.", run_config=RunConfig(tracing_disabled=True)
        )
        assert isinstance(result.final_output, str)
        assert result.final_output  # the offline responder's reply (no upstream LLM in the tests)
        async with AsyncMnemoClient(mnemo.url, token) as client:
            state = await client.get_session(user, "ag.1")
            assert [m["content"] for m in state.buffer][0] == "Remember that my favourite colour is teal."
            await client.erase(user)
