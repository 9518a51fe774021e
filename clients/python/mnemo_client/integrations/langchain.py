"""LangChain (langchain-core) on mnemo: `MnemoChatMessageHistory`, `MnemoRetriever`, `memory_tools`.

The history keeps a conversation as the long-term memories of one mnemo session: `add_messages` stores
human and AI messages (each with an id that sorts in writing order, so a retry overwrites instead of
adding), `messages` reads them back oldest first, `clear` forgets them and drops the session's
short-term state. What comes back is what mnemo keeps after its write policy: PII redacted, whitespace
cleaned, a long message split at sentence ends, an exact repeat kept once; system and tool messages
are not stored (mnemo remembers what users and assistants say).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.chat_history import BaseChatMessageHistory
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, StructuredTool

from mnemo_client.aio import AsyncMnemoClient
from mnemo_client.calls import Message
from mnemo_client.client import MnemoClient
from mnemo_client.ids import check_id
from mnemo_client.integrations._shared import hits_as_text, ordered_ids
from mnemo_client.models import Memory, SearchResult

PAGE = 100


def _to_messages(messages: Sequence[BaseMessage]) -> list[Message]:
    kept = [m for m in messages if isinstance(m, HumanMessage | AIMessage) and m.text.strip()]
    ids = ordered_ids("lc", len(kept))
    now = time.time()
    return [
        {
            "role": "user" if isinstance(m, HumanMessage) else "assistant",
            "content": m.text,
            "id": i,
            "timestamp": now,
        }
        for m, i in zip(kept, ids, strict=True)
    ]


def _from_memories(memories: list[Memory]) -> list[BaseMessage]:
    ordered = sorted(memories, key=lambda m: (m.created_at, min(m.source_message_ids, default=m.id)))
    return [HumanMessage(m.content) if m.source == "user" else AIMessage(m.content) for m in ordered]


class MnemoChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat history stored as the memories of one mnemo session (see the module's note on
    what mnemo keeps). Pass `async_client` too for the `a*` methods to use it instead of a thread."""

    def __init__(
        self,
        client: MnemoClient,
        user_id: str,
        session_id: str,
        *,
        async_client: AsyncMnemoClient | None = None,
    ) -> None:
        self.client = client
        self.async_client = async_client
        self.user_id = check_id(user_id, "user_id")
        self.session_id = check_id(session_id, "session_id")

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]  # langchain documents a property here
        memories: list[Memory] = []
        while True:
            page = self.client.list_memories(
                self.user_id, limit=PAGE, offset=len(memories), session_id=self.session_id
            )
            memories += page.items
            if not page.items or len(memories) >= page.total:
                return _from_memories(memories)

    async def aget_messages(self) -> list[BaseMessage]:
        if self.async_client is None:
            return await super().aget_messages()
        memories: list[Memory] = []
        while True:
            page = await self.async_client.list_memories(
                self.user_id, limit=PAGE, offset=len(memories), session_id=self.session_id
            )
            memories += page.items
            if not page.items or len(memories) >= page.total:
                return _from_memories(memories)

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        if stored := _to_messages(messages):
            self.client.ingest(self.user_id, self.session_id, stored)

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        if self.async_client is None:
            await super().aadd_messages(messages)
        elif stored := _to_messages(messages):
            await self.async_client.ingest(self.user_id, self.session_id, stored)

    def clear(self) -> None:
        self.client.forget(self.user_id, session_id=self.session_id)
        self.client.delete_session(self.user_id, self.session_id)

    async def aclear(self) -> None:
        if self.async_client is None:
            await super().aclear()
            return
        await self.async_client.forget(self.user_id, session_id=self.session_id)
        await self.async_client.delete_session(self.user_id, self.session_id)


def _documents(result: SearchResult) -> list[Document]:
    return [
        Document(
            id=h.memory.id,
            page_content=h.memory.content,
            metadata={
                "id": h.memory.id,
                "relevance": h.relevance,
                "score": h.score,
                "similarity": h.similarity,
                "created_at": h.memory.created_at,
                "session_id": h.memory.session_id,
                "source": h.memory.source,
                "topic": h.memory.topic,
                "tier": h.memory.tier,
            },
        )
        for h in result.hits
    ]


class MnemoRetriever(BaseRetriever):
    """A user's long-term memories best matching the query (mnemo's hybrid search), as Documents with
    the memory id, score and provenance in `metadata`."""

    client: MnemoClient
    user_id: str
    top_k: int = 5
    session_id: str | None = None
    async_client: AsyncMnemoClient | None = None

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun
    ) -> list[Document]:
        return _documents(
            self.client.search(self.user_id, query, top_k=self.top_k, session_id=self.session_id)
        )

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun
    ) -> list[Document]:
        if self.async_client is None:
            return await super()._aget_relevant_documents(query, run_manager=run_manager)
        found = await self.async_client.search(
            self.user_id, query, top_k=self.top_k, session_id=self.session_id
        )
        return _documents(found)


def memory_tools(client: MnemoClient, user_id: str, *, session_id: str = "agent") -> list[BaseTool]:
    """Tools an agent can call on the user's long-term memory: `search_memory`, `remember`,
    `forget_memory`. Writes are stored under `session_id`."""
    check_id(user_id, "user_id")
    check_id(session_id, "session_id")

    def search_memory(query: str, top_k: int = 5) -> str:
        return hits_as_text(client.search(user_id, query, top_k=top_k))

    def remember(content: str) -> str:
        stored = client.ingest(user_id, session_id, [{"role": "user", "content": content}])
        return f"Stored {stored.stored} memory(ies). 已记住。"

    def forget_memory(memory_id: str) -> str:
        client.delete_memory(user_id, memory_id)
        return f"Forgot {memory_id}. 已删除。"

    return [
        StructuredTool.from_function(
            search_memory,
            description="Search what the user told you before (their long-term memory); returns the best matches with ids.",
        ),
        StructuredTool.from_function(
            remember, description="Store a fact or preference the user wants remembered."
        ),
        StructuredTool.from_function(
            forget_memory, description="Delete one memory by the id search_memory showed."
        ),
    ]
