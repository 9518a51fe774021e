"""mnemo_client.integrations.langchain against the served mnemo: the chat history round-trips a
conversation through a mnemo session (sync and async), the retriever finds a user's memories, and the
tools search, remember and forget. A contract change under the client (a renamed field) fails here
through the client's strict reading."""

from __future__ import annotations

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from mnemo_client import AsyncMnemoClient, MnemoClient
from mnemo_client.integrations.langchain import MnemoChatMessageHistory, MnemoRetriever, memory_tools

from tests.clients.conftest import Mnemo

pytestmark = [pytest.mark.integration]


class TestChatMessageHistory:
    def test_a_conversation_round_trips_in_order(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            history = MnemoChatMessageHistory(client, user, "lc.1")
            assert history.messages == []
            history.add_messages(
                [
                    SystemMessage("not stored"),
                    HumanMessage("I am planning a trip to Kyoto in April."),
                    AIMessage("Kyoto in April is cherry blossom season."),
                ]
            )
            history.add_user_message("我想住在离车站近的酒店。")
            history.add_ai_message("好的，我会推荐京都站附近的酒店。")
            got = history.messages
            assert [type(m).__name__ for m in got] == [
                "HumanMessage",
                "AIMessage",
                "HumanMessage",
                "AIMessage",
            ]
            assert got[0].text == "I am planning a trip to Kyoto in April."
            assert got[3].text == "好的，我会推荐京都站附近的酒店。"
            assert MnemoChatMessageHistory(client, user, "lc.2").messages == []  # sessions are apart

            history.clear()
            assert history.messages == []
            client.erase(user)

    async def test_the_async_methods_use_the_async_client(self, mnemo: Mnemo, user: str) -> None:
        token = mnemo.token(user)
        with MnemoClient(mnemo.url, token) as client:
            async with AsyncMnemoClient(mnemo.url, token) as aclient:
                history = MnemoChatMessageHistory(client, user, "lc-async", async_client=aclient)
                await history.aadd_messages(
                    [HumanMessage("My sister is called Ana."), AIMessage("Noted, Ana.")]
                )
                assert [m.text for m in await history.aget_messages()] == [
                    "My sister is called Ana.",
                    "Noted, Ana.",
                ]
                await history.aclear()
                assert await history.aget_messages() == []
                await aclient.erase(user)


class TestRetriever:
    async def test_documents_carry_the_memory_and_its_score(self, mnemo: Mnemo, user: str) -> None:
        token = mnemo.token(user)
        with MnemoClient(mnemo.url, token) as client:
            client.ingest(
                user,
                "s1",
                [
                    {"role": "user", "content": "I am allergic to peanuts."},
                    {"role": "user", "content": "我每天早上跑步五公里。"},
                ],
            )
            retriever = MnemoRetriever(client=client, user_id=user, top_k=1)
            docs = retriever.invoke("food allergy")
            assert len(docs) == 1
            assert "peanuts" in docs[0].page_content
            assert docs[0].metadata["score"] > 0
            assert docs[0].metadata["session_id"] == "s1"
            assert docs[0].id == docs[0].metadata["id"]
            async with AsyncMnemoClient(mnemo.url, token) as aclient:
                aretriever = MnemoRetriever(client=client, async_client=aclient, user_id=user, top_k=1)
                zh = await aretriever.ainvoke("我早上做什么运动")
            assert "跑步" in zh[0].page_content
            client.erase(user)


class TestTools:
    def test_search_remember_forget(self, mnemo: Mnemo, user: str) -> None:
        with MnemoClient(mnemo.url, mnemo.token(user)) as client:
            tools = {t.name: t for t in memory_tools(client, user)}
            assert set(tools) == {"search_memory", "remember", "forget_memory"}
            assert "query" in json.dumps(tools["search_memory"].args)
            assert "Stored 1" in tools["remember"].invoke({"content": "My passport expires in May 2027."})
            found = tools["search_memory"].invoke({"query": "when does my passport expire", "top_k": 1})
            assert "passport" in found
            memory_id = found.split("[", 1)[1].split("]", 1)[0]
            assert tools["forget_memory"].invoke({"memory_id": memory_id}).startswith("Forgot")
            assert "没有找到" in tools["search_memory"].invoke({"query": "passport"})
            client.erase(user)
