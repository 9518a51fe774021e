"""Clients of outside services that the domain sees only through its own protocols: the upstream
OpenAI-compatible LLM over httpx (`upstream`, implementing `memory.chat.llm.ChatModel`).

May import `memory` and `monitoring`; built and closed only by `app.lifespan`.
"""
