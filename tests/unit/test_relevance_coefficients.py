"""Relevance coefficients as a file (issue 44, memory/recall/calibration.py): a good file gives its
coefficients to zh and en hits alike; a malformed file, a missing group, a wrong number of
coefficients, a non-finite one, or a file fitted for other models than the configured ones refuses to
start with the file and the problem named (in English and Chinese); no file with a served model warns
once that relevance is calibrated on the bundled models."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from app.composition import configured_models, relevance_model
from app.settings import Settings, StartError
from bench.relevance import write_coefficients
from memory.embedding.multilingual import bridge_model_name
from memory.models import Evidence
from memory.recall.calibration import (
    FEATURES,
    CoefficientsError,
    FittedModels,
    document,
    read_coefficients,
)
from memory.recall.relevance import DEFAULT_MODEL, GROUPS, features, relevance_of

SECRET = "unit-" + "k" * 48
BUNDLED = FittedModels("all-MiniLM-L6-v2", bridge_model_name())
SERVED = FittedModels("BAAI/bge-m3", "BAAI/bge-m3")
ZH = Evidence(
    "zh", "zh", cosine=0.1, coverage=0.6, bridge=0.7, known=1.0, fused=0.8
)  # 我住在哪里 / 我住在杭州
EN = Evidence("en", "en", cosine=0.6, coverage=0.5, bridge=None, known=1.0, fused=0.8)  # where do I live


def coefficients(**override: Any) -> dict[str, Any]:
    base = {g: [0.5 * (i + 1) for i in range(len(FEATURES[g]))] for g in GROUPS}
    return {**base, **override}


def write(path: Path, raw: Any) -> Path:
    path.write_text(raw if isinstance(raw, str) else json.dumps(raw), encoding="utf-8")
    return path


def good(fitted_for: FittedModels = BUNDLED, **changes: Any) -> dict[str, Any]:
    return {**document(coefficients(), fitted_for, "2026-12-05", data="relevance_pairs.json"), **changes}


def settings(**values: Any) -> Settings:
    return Settings(_env_file=None, auth_jwt_secret=SECRET, **values)


def served() -> dict[str, Any]:
    return {
        "embeddings_url": "http://gpu:8000/v1",
        "embeddings_model": SERVED.dense,
        "embeddings_dimensions": 1024,
        "bridge_embeddings_url": "http://gpu:8000/v1",
        "bridge_embeddings_model": SERVED.bridge,
        "bridge_embeddings_dimensions": 1024,
    }


class TestGoodFile:
    def test_its_coefficients_score_zh_and_en_hits(self, tmp_path: Path) -> None:
        calibration = read_coefficients(write(tmp_path / "c.json", good()))
        assert calibration.models == BUNDLED
        assert calibration.fitted == "2026-12-05"
        for e in (ZH, EN):
            group, x = features(e)
            z = sum(b * v for b, v in zip(coefficients()[group], x, strict=True))
            assert relevance_of(e, calibration.model) == pytest.approx(1 / (1 + 2.718281828459045 ** (-z)))
            assert relevance_of(e, calibration.model) != pytest.approx(relevance_of(e, DEFAULT_MODEL))

    def test_the_built_in_coefficients_round_trip(self, tmp_path: Path) -> None:
        built_in = {g: list(DEFAULT_MODEL.coefficients(g)) for g in GROUPS}
        path = write(tmp_path / "c.json", document(built_in, BUNDLED, "2026-12-05"))
        assert read_coefficients(path).model == DEFAULT_MODEL
        # every group's feature names count what `features` builds
        assert {g: len(FEATURES[g]) for g in GROUPS} == {
            g: len(DEFAULT_MODEL.coefficients(g)) for g in GROUPS
        }

    def test_the_setting_loads_it_for_the_configured_models(self, tmp_path: Path) -> None:
        path = write(tmp_path / "c.json", good())
        assert (
            relevance_model(settings(relevance_coefficients_path=str(path))) == read_coefficients(path).model
        )
        path = write(tmp_path / "served.json", good(SERVED))
        loaded = relevance_model(settings(relevance_coefficients_path=str(path), **served()))
        assert relevance_of(ZH, loaded) == relevance_of(ZH, read_coefficients(path).model)


class TestBadFile:
    @pytest.mark.parametrize(
        ("raw", "problem"),
        [
            ('{"format": 1, "coefficients": {"en": [1, 2,', "not valid JSON"),
            ("[1, 2, 3]", "a JSON object is expected"),
            (good(format=2), "format 2, this mnemo reads format 1"),
            (good(models={"dense": "all-MiniLM-L6-v2"}), '"models" must name'),
            (
                good(coefficients={g: c for g, c in coefficients().items() if g != "zh"}),
                "group 'zh' is missing",
            ),
            (good(coefficients=coefficients(en=[1.0, 2.0, 3.0])), "group 'en' has 3 coefficients, wants 6"),
            (good(coefficients=coefficients(cross="1, 2, 3")), "group 'cross' has str, wants 3"),
            (good(coefficients={**coefficients(), "ja": [1.0]}), "unknown groups ['ja']"),
            (
                good(coefficients=coefficients(zh=[1.0, 2.0, "x", 4.0, 5.0])),
                "'attribute' is 'x', not a finite",
            ),
            (
                good(coefficients=coefficients(zh=[1.0, 2.0, True, 4.0, 5.0])),
                "'attribute' is True, not a finite",
            ),
        ],
    )
    def test_refused_with_the_file_and_the_problem(self, tmp_path: Path, raw: Any, problem: str) -> None:
        path = write(tmp_path / "c.json", raw)
        with pytest.raises(CoefficientsError, match="c.json") as refused:
            read_coefficients(path)
        assert problem in str(refused.value)
        with pytest.raises(StartError) as start:
            relevance_model(settings(relevance_coefficients_path=str(path)))
        message = str(start.value)
        for said in (
            "RELEVANCE_COEFFICIENTS_PATH",
            str(path),
            problem,
            "配置有误，无法启动",
            "相关度系数文件无效",
        ):
            assert said in message

    @pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
    def test_a_non_finite_coefficient_is_refused(self, tmp_path: Path, number: str) -> None:
        text = json.dumps(good()).replace('"en": [0.5,', f'"en": [{number},', 1)
        assert number in text
        with pytest.raises(CoefficientsError, match="group 'en', coefficient '1' is .* not a finite number"):
            read_coefficients(write(tmp_path / "c.json", text))

    def test_a_missing_file_is_refused(self, tmp_path: Path) -> None:
        with pytest.raises(StartError, match="absent.json: cannot be read"):
            relevance_model(settings(relevance_coefficients_path=str(tmp_path / "absent.json")))


class TestModelMismatch:
    def test_a_file_for_the_bundled_models_is_refused_with_served_ones(self, tmp_path: Path) -> None:
        path = write(tmp_path / "c.json", good(BUNDLED))
        with pytest.raises(StartError) as refused:
            relevance_model(settings(relevance_coefficients_path=str(path), **served()))
        message = str(refused.value)
        assert "fitted for other models" in message
        assert "不是为当前配置的模型拟合的" in message
        assert "dense model 'all-MiniLM-L6-v2', configured 'BAAI/bge-m3'" in message
        assert f"bridge model {BUNDLED.bridge!r}, configured 'BAAI/bge-m3'" in message

    def test_only_the_model_that_differs_is_named(self, tmp_path: Path) -> None:
        path = write(tmp_path / "c.json", good(FittedModels(BUNDLED.dense, "BAAI/bge-m3")))
        with pytest.raises(StartError) as refused:  # the bundled bridge configured, the file's is bge-m3
            relevance_model(settings(relevance_coefficients_path=str(path)))
        assert "bridge model 'BAAI/bge-m3'" in str(refused.value)
        assert "dense model" not in str(refused.value)

    def test_without_the_bridge_channel_its_model_is_not_compared(self, tmp_path: Path) -> None:
        path = write(tmp_path / "c.json", good(FittedModels(BUNDLED.dense, "BAAI/bge-m3")))
        off = settings(relevance_coefficients_path=str(path), bridge_embedding=False)
        assert configured_models(off) == FittedModels(BUNDLED.dense, None)
        assert relevance_model(off) == read_coefficients(path).model

    def test_the_configured_models(self) -> None:
        assert configured_models(settings()) == BUNDLED
        assert configured_models(settings(**served())) == SERVED
        assert configured_models(settings(embedding_model="/models/bge-small-zh.onnx")).dense == (
            "/models/bge-small-zh.onnx"
        )


class TestNoFile:
    def test_a_served_model_warns_once_that_relevance_is_the_bundled_models(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        with caplog.at_level(logging.WARNING, logger="app.composition.services"):
            assert relevance_model(settings(**served())) == DEFAULT_MODEL
        warnings = [r for r in caplog.records if "calibrated on the bundled models" in r.getMessage()]
        assert len(warnings) == 1
        assert getattr(warnings[0], "docs", "").endswith("#recalibrating-relevance-for-another-model")

    @pytest.mark.parametrize("values", [{}, {"bridge_embedding": False}])
    def test_the_bundled_models_or_a_writer_do_not(
        self, caplog: pytest.LogCaptureFixture, values: dict[str, Any]
    ) -> None:
        with caplog.at_level(logging.WARNING, logger="app.composition.services"):
            assert relevance_model(settings(**values)) == DEFAULT_MODEL
            assert relevance_model(settings(**served()), warn=False) == DEFAULT_MODEL  # the writer
        assert not [r for r in caplog.records if "calibrated on the bundled models" in r.getMessage()]


class TestTheFitsFile:
    def test_written_for_the_bundled_models_and_loaded_back(self, tmp_path: Path) -> None:
        report = {
            "pairs": 4288,
            "ece_all": 0.007,
            "fitted_on_even_queries": {},
            "fitted_on_all": coefficients(),
        }
        path = tmp_path / "fit.json"
        write_coefficients(path, report, "relevance_pairs.json")
        calibration = read_coefficients(path)
        assert calibration.models == BUNDLED  # the bench's app: the environment's models, the bridge on
        assert calibration.model.en == tuple(coefficients()["en"])
        assert relevance_model(settings(relevance_coefficients_path=str(path))) == calibration.model

    def test_not_written_when_a_group_could_not_be_fitted(self, tmp_path: Path) -> None:
        fitted = {g: c for g, c in coefficients().items() if g != "cross"}  # e.g. no 跨语言 pair relevant
        report = {"pairs": 10, "ece_all": 0.1, "fitted_on_even_queries": {}, "fitted_on_all": fitted}
        with pytest.raises(SystemExit, match=r"not written: no fit for the groups \['cross'\]"):
            write_coefficients(tmp_path / "fit.json", report, "relevance_pairs.json")
        assert not (tmp_path / "fit.json").exists()
