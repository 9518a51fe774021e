"""Recall: the CJK-aware BM25 keyword index kept in process (`keyword_index`), the query plan
(language, negation by intent, named months, answer types, the past, attributes asked about; `query`),
the read-time ranking math (`ranking`), facts that change in recall (`validity`) and the hybrid
retriever that fuses dense and keyword candidates (`retrieval`).

May import the shared leaves, `text`, `embedding` and `longterm`; never `write` or above.
"""
