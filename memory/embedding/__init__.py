"""Embeddings: the `Embedder` protocol (`base`) and its implementations: sentence-transformers (torch)
and the default int8 ONNX MiniLM (`onnx`), and the multilingual bridge model (USE v3, `multilingual`),
each loaded from a PyPI wheel and run in a worker thread.

May import `monitoring` (inference metrics) and nothing else of mnemo: every store and ranker above it
depends only on `base.Embedder` and `base.Vectors`.
"""
