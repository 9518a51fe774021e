"""Relevance: one number a person can read, the calibrated probability that a hit is relevant.

The ranking score (memory/recall/retrieval.py) orders the candidates of one search: its channels are
min-max normalised over those candidates, so the best of five unrelated memories still scores high.
Relevance is computed from each channel's *absolute* evidence for one memory (models.Evidence):

- `cosine`: MiniLM cosine (used only when query and memory are both English: MiniLM reads most Chinese
  characters as [UNK], so its cosine says nothing there);
- `coverage`: the idf-weighted share of the query's words (stems, CJK bigrams; single CJK characters at
  the keyword channel's 0.3 weight) that the memory holds, words of its surrounding turns at 0.9
  (as BM25 counts them: in a dialogue the question's words are often in the turn before). A query word the user never wrote counts in full against it: "xyzzy plugh" covers 0;
- `bridge`: the multilingual bridge cosine the ranking uses, when that channel took part: the
  memory's vector blended with its neighbouring turns' (0.3 each, in the query's language and across);
- `attribute`: the memory states the attribute the question asks about ("where do I live");
- `known` (same language only): the idf-weighted share of the query's words the user ever wrote, in
  any memory searched. A question none of whose words the user used ("xyzzy plugh", "量子计算的原理是
  什么") is seldom about anything they said, however near its vector falls.

relevance = σ(b · x), a logistic model per language pair (English query and memory; Chinese and
Chinese; query and memory in different languages), with and without the bridge. A channel that did
not match adds nothing (coverage 0, no bridge term); there is no floor. The coefficients are fitted by
`bench/relevance.py --fit` on labelled zh/en query-memory pairs (`bench/data/relevance_pairs.json`);
the reliability table (relevance bins against the observed share of relevant hits) is in
docs/benchmarks.md.

`matched_channels` is what forget by meaning adds on top: a memory is only forgotten when at least two
channels agree (MiniLM, keywords, the bridge, and the attribute rules of facts that change), so no
single channel, and never the bridge alone across languages, can select it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from memory.models import Evidence

Coefficients = tuple[float, ...]


@dataclass(frozen=True, slots=True)
class RelevanceModel:
    """Logistic coefficients per feature group (`features`): intercept first, then the features in the
    order `features` lists them. Fitted by `bench/relevance.py --fit` (see the module docstring)."""

    # fitted on the even-numbered queries of bench/data/relevance_pairs.json (the odd ones are held
    # out for the reliability table): `.venv/bin/python bench/relevance.py --fit`, "fitted_on_even_queries"
    # features, in order: 1, cosine, coverage, attribute, known, standing
    en: Coefficients = (-6.862, 13.781, 3.262, 3.328, -1.691, 1.081)
    # 1, bridge, coverage, attribute, known, standing
    zh_bridge: Coefficients = (-8.241, 6.033, 2.596, 1.206, 1.347, 5.033)
    # 1, coverage, attribute, known, standing
    zh: Coefficients = (-7.544, 3.959, 0.814, 1.623, 6.611)
    # across languages: 1, bridge, coverage, attribute. No labelled pair across languages shares a word
    # (a name, a number), so coverage got no weight there
    cross_bridge: Coefficients = (-6.663, 15.349, 0.0, 5.134)
    # 1, coverage, attribute
    cross: Coefficients = (-4.066, 0.0, 5.549)

    def coefficients(self, group: str) -> Coefficients:
        found: Coefficients = getattr(self, group)
        return found


DEFAULT_MODEL = RelevanceModel()
FUSED_CAP = 1.5  # the fused value with every boost can pass 1; beyond this it says nothing more
KNOWN_FULL = 0.1  # a query a tenth of whose (weighted) words the user wrote gets its full standing
GROUPS = ("en", "zh_bridge", "zh", "cross_bridge", "cross")


def features(e: Evidence) -> tuple[str, tuple[float, ...]]:
    """The feature group of this evidence and its feature vector (with the intercept's 1)."""
    attribute = 1.0 if e.attribute else 0.0
    # the ranking's relative standing counts only as far as the query says something the user wrote:
    # a query of unknown words ("xyzzy plugh") always has a best candidate, which means nothing
    standing = min(e.fused, FUSED_CAP) * min(1.0, e.known / KNOWN_FULL)
    if not e.cross and e.query_language == "en":
        return "en", (1.0, e.cosine, e.coverage, attribute, e.known, standing)
    if not e.cross:
        if e.bridge is not None:
            return "zh_bridge", (1.0, e.bridge, e.coverage, attribute, e.known, standing)
        return "zh", (1.0, e.coverage, attribute, e.known, standing)
    if e.bridge is not None:
        return "cross_bridge", (1.0, e.bridge, e.coverage, attribute)
    return "cross", (1.0, e.coverage, attribute)


# A query none of whose words the user ever wrote ("xyzzy plugh", "啊啊啊", "how do airplanes fly") is
# matched by meaning alone: its hits must reach at least this relevance, in either language. MiniLM and
# the bridge put gibberish as near to a memory (relevance ~0.01) as a real question is to a turn of a
# conversation it asks about; the words tell them apart (bench/relevance.py, docs/benchmarks.md#relevance).
# A question in the other language than every memory knows none of their words either: it needs this
# too (its relevant hits reach it: 37 of the 39 labelled cross-language pairs); a name or number it
# shares with them makes it known
UNKNOWN_QUERY_FLOOR = 0.1


def reaches(e: Evidence, relevance: float, floor: float) -> bool:
    """Whether a hit of this relevance passes the floor `floor` (0: every hit passes); a query of
    unknown words needs UNKNOWN_QUERY_FLOOR."""
    if floor <= 0:
        return True
    if e.known <= 0:
        return relevance >= max(floor, UNKNOWN_QUERY_FLOOR)
    return relevance >= floor


def relevance_of(e: Evidence, model: RelevanceModel = DEFAULT_MODEL) -> float:
    group, x = features(e)
    z = sum(b * v for b, v in zip(model.coefficients(group), x, strict=True))
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


@dataclass(frozen=True, slots=True)
class ChannelFloors:
    """Where a channel counts as matched, for forget's two-channel rule (`matched_channels`)."""

    # chosen with bench/relevance.py (docs/benchmarks.md#relevance): where a channel's own measure
    # stops being what unrelated pairs also reach
    dense: float = 0.35  # MiniLM cosine, English query and memory only
    keyword: float = 0.25  # coverage: a quarter of the query's weighted words
    bridge: float = 0.35  # multilingual cosine


def matched_channels(e: Evidence, floors: ChannelFloors = ChannelFloors()) -> dict[str, float]:
    """The channels that matched this memory on their own absolute measure, with that measure."""
    out: dict[str, float] = {}
    if not e.cross and e.query_language == "en" and e.cosine >= floors.dense:
        out["dense"] = round(e.cosine, 4)
    if e.coverage >= floors.keyword:
        out["keyword"] = round(e.coverage, 4)
    if e.bridge is not None and e.bridge >= floors.bridge:
        out["bridge"] = round(e.bridge, 4)
    if e.attribute:  # the rules read the memory as stating what the question asks ("我住在哪里")
        out["attribute"] = 1.0
    return out


# what asks to forget, not what to forget: "忘掉我住在哪里" is about where I live
_FORGET_WORDS = re.compile(
    r"请?(?:帮我)?(?:忘掉|忘记|忘了|别记得|不要记得|删掉|删除|清除|抹掉)|"
    r"\b(?:please\s+)?(?:forget(?:\s+about)?|delete|remove|erase)\b(?:\s+(?:that|the fact that|about))?",
    re.IGNORECASE,
)


def forget_query(query: str) -> str:
    """The query of a forget without its command words ("忘掉…", "forget that …"); unchanged when
    nothing else would be left."""
    stripped = " ".join(_FORGET_WORDS.sub(" ", query).split())
    return stripped if stripped.strip("，。,.!！?？ ") else query
