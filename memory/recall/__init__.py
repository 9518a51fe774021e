"""Recall: the CJK-aware BM25 keyword index kept in process (`keyword_index`), the query plan
(language, negation by intent, named months, answer types, the past, attributes asked about; `query`),
the read-time ranking math (`ranking`), facts that change in recall (`validity`), the hybrid
retriever that fuses dense and keyword candidates (`retrieval`), the optional reranking stage over its
top hits (`rerank`) and the keyword-only search of a request whose embedding model is down (`degraded`).

May import the shared leaves, `text`, `embedding` and `longterm`; never `write` or above.
"""
