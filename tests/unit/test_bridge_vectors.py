"""How a Chroma `get` answer becomes bridge vectors by id (memory/longterm/bridge.py)."""

from __future__ import annotations

import numpy as np

from memory.longterm.bridge import vectors_by_id


def test_ids_pair_with_their_rows() -> None:
    found = vectors_by_id({"ids": ["a", "b"], "embeddings": [[1.0, 0.0], [0.0, 1.0]]})
    assert sorted(found) == ["a", "b"]
    assert np.allclose(found["b"], [0.0, 1.0])


def test_ids_without_their_embeddings_pair_nothing() -> None:
    # seen in CI under 20 concurrent turns of one session: one id, an empty embeddings array (an
    # IndexError, so a 500, before)
    assert vectors_by_id({"ids": ["a"], "embeddings": np.zeros((0,), dtype=np.float32)}) == {}
    assert vectors_by_id({"ids": ["a", "b"], "embeddings": [[1.0, 0.0]]}) == {}
    assert vectors_by_id({"ids": ["a"], "embeddings": None}) == {}
    assert vectors_by_id({"ids": [], "embeddings": []}) == {}
