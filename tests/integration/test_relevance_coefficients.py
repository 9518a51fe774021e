"""Relevance coefficients from a file (issue 44, RELEVANCE_COEFFICIENTS_PATH) through the real app, real
Redis, Chroma and models: the same zh and en searches, the same hits in the same order, and each hit's
`relevance` is what the file's coefficients make of it; a file fitted for other models refuses to start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.composition import build_core
from app.settings import Settings, StartError
from memory import Embedder
from memory.embedding.multilingual import bridge_model_name
from memory.recall.calibration import FittedModels, document
from memory.recall.relevance import DEFAULT_MODEL, GROUPS
from tests.conftest import AuthHeaders, app_client
from tests.integration.test_relevance import search, seed

pytestmark = pytest.mark.integration
BUNDLED = FittedModels("all-MiniLM-L6-v2", bridge_model_name())
# (query, the memory it asks about): Chinese, English, and across languages
ASKED = [
    ("我家的猫叫什么名字？", "cat"),
    ("我最喜欢吃什么菜", "dish"),
    ("What breed is my dog?", "dog"),
    ("When is my dentist appointment?", "dentist"),
    ("我什么时候看牙医？", "dentist"),
]


def coefficients_file(path: Path, models: FittedModels = BUNDLED, intercept: float | None = None) -> str:
    """The built-in coefficients as a file, every group's intercept replaced by `intercept` if given."""
    groups = {g: list(DEFAULT_MODEL.coefficients(g)) for g in GROUPS}
    if intercept is not None:
        groups = {g: [intercept, *c[1:]] for g, c in groups.items()}
    path.write_text(json.dumps(document(groups, models, "2026-12-05")), encoding="utf-8")
    return str(path)


async def hits_of(client: httpx.AsyncClient, auth: AuthHeaders) -> list[list[tuple[str, float]]]:
    """Every query's hits (min_relevance 0: none is dropped), as (memory, relevance), best first."""
    out = []
    for query, _ in ASKED:
        found: list[dict[str, Any]] = await search(client, auth, query, min_relevance=0, top_k=5)
        out.append([(h["source_message_ids"][0], h["relevance"]) for h in found])
    return out


async def test_the_files_coefficients_make_each_hits_relevance(
    settings: Settings, embedder: Embedder, auth: AuthHeaders, tmp_path: Path
) -> None:
    async with app_client(settings, embedder) as (client, _):
        await seed(client, auth)
        built_in = await hits_of(client, auth)
    for (query, memory), hits in zip(ASKED, built_in, strict=True):
        assert dict(hits).get(memory, 0.0) > 0.2, (query, hits)  # the built-in model finds it relevant

    # the built-in coefficients from a file: the same relevance, to the last digit
    same = settings.model_copy(
        update={"relevance_coefficients_path": coefficients_file(tmp_path / "same.json")}
    )
    async with app_client(same, embedder) as (client, _):
        assert await hits_of(client, auth) == built_in

    # very low intercepts: the same hits in the same order, every relevance near 0, and a search at the
    # default floor (SEARCH_MIN_RELEVANCE 0.005) finds nothing
    low = settings.model_copy(
        update={"relevance_coefficients_path": coefficients_file(tmp_path / "low.json", intercept=-40.0)}
    )
    async with app_client(low, embedder) as (client, _):
        lowered = await hits_of(client, auth)
        for query, _ in ASKED:
            assert await search(client, auth, query) == [], query
    assert [[m for m, _ in hits] for hits in lowered] == [[m for m, _ in hits] for hits in built_in]
    for hits in lowered:
        assert hits
        assert all(r < 1e-6 for _, r in hits), hits


async def test_a_file_fitted_for_other_models_refuses_to_start(
    settings: Settings, embedder: Embedder, tmp_path: Path
) -> None:
    """What the lifespan builds first (build_core) refuses it, for the API workers and the writer."""
    other = coefficients_file(tmp_path / "bge.json", FittedModels("BAAI/bge-m3", "BAAI/bge-m3"))
    refused = settings.model_copy(update={"relevance_coefficients_path": other})
    for role in ("api", "writer"):
        with pytest.raises(StartError, match=r"fitted for other models \(dense model 'BAAI/bge-m3'") as start:
            await build_core(refused, role, embedder=embedder)
        assert "不是为当前配置的模型拟合的" in str(start.value)
