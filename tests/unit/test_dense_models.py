"""The naming of each dense model's collections and stores, and which loaded model a tag means
(memory/longterm/dense_models.py): pure functions and a deterministic stand-in embedder."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from memory.embedding.base import Vectors
from memory.errors import StoreUnavailable
from memory.longterm.dense_models import (
    DenseModel,
    DenseModels,
    namespace,
    physical_name,
    same_model,
    tag_hash,
    virtual_name,
)
from memory.longterm.placement import rendezvous

SERVED = "http:bge-m3@1024:1024"
ONNX, TORCH = "OnnxEmbedder::384", "SentenceTransformerEmbedder::384"


class Fixed:
    def __init__(self, dimension: int) -> None:
        self.dimension = dimension

    async def embed(self, texts: Sequence[str]) -> Vectors:
        return np.ones((len(texts), self.dimension), dtype=np.float32)


def test_every_name_of_the_bundled_model_is_one_model_and_a_served_one_is_another() -> None:
    assert same_model(ONNX, TORCH)
    assert same_model(ONNX, "bundled")
    assert not same_model(ONNX, SERVED)
    assert tag_hash(ONNX) == tag_hash(TORCH) == tag_hash("bundled") != tag_hash(SERVED)


def test_the_first_model_keeps_the_plain_names_any_other_gets_its_own() -> None:
    assert namespace("mnemo", ONNX, first="bundled") == "mnemo"
    assert namespace("mnemo", SERVED, first=ONNX) == f"mnemo-d{tag_hash(SERVED)}"
    assert namespace("mnemo", ONNX, first=SERVED) == f"mnemo-d{tag_hash('bundled')}"
    assert virtual_name("chroma-a", SERVED, first=ONNX) == f"chroma-a~d{tag_hash(SERVED)}"
    assert physical_name(virtual_name("chroma-a", SERVED, first=ONNX)) == "chroma-a"
    assert physical_name("chroma-a") == "chroma-a"


def test_a_switch_never_moves_a_user_to_another_server() -> None:
    servers = ["a", "b", "c"]
    moved = [virtual_name(s, SERVED, first=ONNX) for s in servers]
    for user in ("alice", "张伟", "bob", "李娜", *(f"u{i}" for i in range(200))):
        assert physical_name(rendezvous(user, moved, physical_name)) == rendezvous(user, servers)


def test_a_tag_means_the_loaded_model_and_an_unknown_one_is_unavailable() -> None:
    current, previous = DenseModel(SERVED, Fixed(1024)), DenseModel(ONNX, Fixed(384))
    models = DenseModels(current, previous)
    assert models.get(SERVED) is current
    assert models.get("bundled") is previous  # the layout's name of the bundled model
    with pytest.raises(StoreUnavailable, match="PREVIOUS_EMBEDDINGS"):
        models.get("http:e5-large@1024:1024")
    with pytest.raises(ValueError, match="previous"):
        DenseModels(current, DenseModel(SERVED, Fixed(1024)))


def test_without_a_switch_every_user_is_on_the_current_model_without_a_lookup() -> None:
    models = DenseModels(DenseModel(ONNX, Fixed(384)))
    assert not models.switching
    assert asyncio.run(models.for_user("alice")) is models.current

    async def locate(user_id: str, fresh: bool) -> str:
        return ONNX if user_id == "老用户" else SERVED

    switching = DenseModels(DenseModel(SERVED, Fixed(1024)), DenseModel(ONNX, Fixed(384)), locate=locate)
    assert asyncio.run(switching.for_user("老用户")).tag == ONNX
    assert asyncio.run(switching.for_user("new user", fresh=True)).tag == SERVED
