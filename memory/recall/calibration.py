"""Relevance coefficients as a file (issue 44): `RelevanceModel`'s coefficients fitted for a pair of
models, written by `bench/relevance.py --fit --out PATH` and read at start (RELEVANCE_COEFFICIENTS_PATH,
docs/operations.md#recalibrating-relevance-for-another-model).

A hit's `relevance` is a logistic model over absolute channel measures (memory/recall/relevance.py):
cosines on the scale of the models that made them. The built-in coefficients were fitted on the bundled
models (all-MiniLM-L6-v2, USE v3); another model's cosines have another scale, so a deployment that
serves other models fits its own and points the setting at the file. The file names the models it was
fitted with, and a file fitted for other models than the configured ones is refused: its probabilities
would be calibrated for vectors this deployment never computes.

    {"format": 1, "fitted": "2026-12-05",
     "models": {"dense": "all-MiniLM-L6-v2", "bridge": "use-multilingual-v3@1.0.0"},
     "coefficients": {"en": [...6], "zh_bridge": [...6], "zh": [...5], "cross_bridge": [...4], "cross": [...3]}}

Other keys (the fit's data set, pairs, its held-out coefficients) are reported, not read.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory.recall.relevance import GROUPS, RelevanceModel

FORMAT = 1
# every group's features, in the order `relevance.features` builds them (the intercept's 1 first)
FEATURES: dict[str, tuple[str, ...]] = {
    "en": ("1", "cosine", "coverage", "attribute", "known", "standing"),
    "zh_bridge": ("1", "bridge", "coverage", "attribute", "known", "standing"),
    "zh": ("1", "coverage", "attribute", "known", "standing"),
    "cross_bridge": ("1", "bridge", "coverage", "attribute"),
    "cross": ("1", "coverage", "attribute"),
}
# the bundled dense model's name in a coefficients file (the bridge's is `bridge_model_name()`)
BUNDLED_DENSE = "all-MiniLM-L6-v2"


class CoefficientsError(ValueError):
    """A coefficients file that cannot be used: the message names the file and what is wrong."""


@dataclass(frozen=True, slots=True)
class FittedModels:
    """The models a calibration is for: the dense channel's and the bridge channel's (None: the
    deployment runs without the bridge, so its groups are never used and its model is not compared)."""

    dense: str
    bridge: str | None


@dataclass(frozen=True, slots=True)
class Calibration:
    """A coefficients file as read: the model, the models it was fitted with, when."""

    model: RelevanceModel
    models: FittedModels
    fitted: str

    def check_models(self, configured: FittedModels, source: str | Path) -> None:
        """Refuse (CoefficientsError) when the file was fitted for other models than `configured`."""
        wrong = []
        if self.models.dense != configured.dense:
            wrong.append(f"dense model {self.models.dense!r}, configured {configured.dense!r}")
        if configured.bridge is not None and self.models.bridge != configured.bridge:
            wrong.append(f"bridge model {self.models.bridge!r}, configured {configured.bridge!r}")
        if wrong:
            raise CoefficientsError(
                f"{source}: fitted for other models ({'; '.join(wrong)}); its relevance is not calibrated "
                "for these: fit for the configured models (bench/relevance.py --fit --out)"
            )


def document(
    coefficients: Mapping[str, Sequence[float]], models: FittedModels, fitted: str, **reported: Any
) -> dict[str, Any]:
    """The file's content (`reported`: more keys, written and never read)."""
    return {
        "format": FORMAT,
        "fitted": fitted,
        "models": {"dense": models.dense, "bridge": models.bridge},
        "coefficients": {g: [float(c) for c in coefficients[g]] for g in GROUPS if g in coefficients},
        **reported,
    }


def read_coefficients(path: str | Path) -> Calibration:
    """The coefficients file at `path`, validated; CoefficientsError names the file and the problem."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CoefficientsError(f"{path}: cannot be read ({exc})") from None
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CoefficientsError(f"{path}: not valid JSON ({exc})") from None
    return parse(raw, path)


def parse(raw: object, source: str | Path) -> Calibration:
    """A coefficients document (`document`'s shape), validated."""
    if not isinstance(raw, dict):
        raise CoefficientsError(f"{source}: a JSON object is expected, got {type(raw).__name__}")
    if raw.get("format") != FORMAT:
        raise CoefficientsError(f"{source}: format {raw.get('format')!r}, this mnemo reads format {FORMAT}")
    models = raw.get("models")
    if not isinstance(models, dict) or not all(
        isinstance(models.get(k), str) and models[k] for k in ("dense", "bridge")
    ):
        raise CoefficientsError(
            f'{source}: "models" must name the "dense" and "bridge" models it was fitted with'
        )
    coefficients = raw.get("coefficients")
    if not isinstance(coefficients, dict):
        raise CoefficientsError(
            f'{source}: "coefficients" must be an object of the groups {", ".join(GROUPS)}'
        )
    unknown = sorted(set(coefficients) - set(GROUPS))
    if unknown:
        raise CoefficientsError(f"{source}: unknown groups {unknown} (groups: {', '.join(GROUPS)})")
    groups = {g: _group(coefficients, g, source) for g in GROUPS}
    return Calibration(
        RelevanceModel(**groups), FittedModels(models["dense"], models["bridge"]), str(raw.get("fitted", ""))
    )


def _group(coefficients: Mapping[str, Any], group: str, source: str | Path) -> tuple[float, ...]:
    names = FEATURES[group]
    if group not in coefficients:
        raise CoefficientsError(f"{source}: group {group!r} is missing (features: {', '.join(names)})")
    values = coefficients[group]
    if not isinstance(values, list) or len(values) != len(names):
        got = f"{len(values)} coefficients" if isinstance(values, list) else type(values).__name__
        raise CoefficientsError(
            f"{source}: group {group!r} has {got}, wants {len(names)} ({', '.join(names)})"
        )
    for name, v in zip(names, values, strict=True):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise CoefficientsError(
                f"{source}: group {group!r}, coefficient {name!r} is {v!r}, not a finite number"
            )
    return tuple(float(v) for v in values)
