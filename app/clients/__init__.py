"""Clients of outside services that the domain sees only through its own protocols: the upstream
OpenAI-compatible LLM over httpx (`upstream`, implementing `memory.chat.llm.ChatModel`), embedding
models served over `/v1/embeddings` (`embeddings`, implementing `memory.embedding.base.Embedder`), a
rerank server (`rerank`, implementing `memory.recall.rerank.Reranker`) and the circuit breaker both use
(`breaker`).

May import `memory` and `monitoring`; built only by the composition root (`app.composition`), closed by whoever built them.
"""
