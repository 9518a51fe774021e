"""Thin bridges from mnemo_client to agent frameworks, each in its own module and importing its framework
only there (install the extra: `pip install "mnemo-client[langchain]"` or `"mnemo-client[agents]"`):

- `mnemo_client.integrations.langchain`: a chat message history backed by a mnemo session, a retriever
  over a user's long-term memory, and memory tools for agents (langchain-core).
- `mnemo_client.integrations.agents`: memory tools for the OpenAI Agents SDK and a model that chats
  through mnemo's `/v1/chat/completions` (recall and remembering included).

They hold no state of their own: every call goes to mnemo through the client given to them.
"""
