"""The OpenAI Agents SDK (`openai-agents`) on mnemo: `memory_tools` and `mnemo_model`.

- `memory_tools(client, user_id)`: function tools over the user's long-term memory (`search_memory`,
  `remember`, `forget_memory`) for an agent whose model calls tools.
- `mnemo_model(base_url, token, session_id=...)`: a Chat Completions model that talks to mnemo's
  `/v1/chat/completions`, so every turn of the agent is recalled into and remembered by mnemo. mnemo
  answers with text (through its upstream LLM or its offline responder), never with tool calls: give
  such an agent instructions, not tools.

Pass `RunConfig(tracing_disabled=True)` (or set up your own trace processor) where the SDK cannot reach
OpenAI's trace endpoint.
"""

from __future__ import annotations

from agents import FunctionTool, OpenAIChatCompletionsModel, function_tool
from openai import AsyncOpenAI

from mnemo_client.aio import AsyncMnemoClient
from mnemo_client.ids import check_id
from mnemo_client.integrations._shared import hits_as_text


def memory_tools(client: AsyncMnemoClient, user_id: str, *, session_id: str = "agent") -> list[FunctionTool]:
    """Tools on the user's long-term memory; writes are stored under `session_id`."""
    check_id(user_id, "user_id")
    check_id(session_id, "session_id")

    async def search_memory(query: str, top_k: int = 5) -> str:
        """Search what the user told you before (their long-term memory); returns the best matches with ids.

        Args:
            query: what to look for, in the user's words.
            top_k: how many memories to return.
        """
        return hits_as_text(await client.search(user_id, query, top_k=top_k))

    async def remember(content: str) -> str:
        """Store a fact or preference the user wants remembered.

        Args:
            content: the fact, as one sentence.
        """
        stored = await client.ingest(user_id, session_id, [{"role": "user", "content": content}])
        return f"Stored {stored.stored} memory(ies). 已记住。"

    async def forget_memory(memory_id: str) -> str:
        """Delete one memory by the id search_memory showed.

        Args:
            memory_id: the id in square brackets.
        """
        await client.delete_memory(user_id, memory_id)
        return f"Forgot {memory_id}. 已删除。"

    return [function_tool(search_memory), function_tool(remember), function_tool(forget_memory)]


def mnemo_model(
    base_url: str,
    token: str,
    *,
    session_id: str | None = None,
    model: str = "mnemo",
) -> OpenAIChatCompletionsModel:
    """A model whose turns go through mnemo's chat completions for the token's user (`X-Session-ID`
    picks the session; mnemo's default session otherwise)."""
    headers = {"X-Session-ID": check_id(session_id, "session_id")} if session_id is not None else {}
    openai_client = AsyncOpenAI(
        base_url=f"{base_url.rstrip('/')}/v1", api_key=token, default_headers=headers, max_retries=2
    )
    return OpenAIChatCompletionsModel(model=model, openai_client=openai_client)
