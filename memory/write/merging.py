"""Near-duplicate memories: when two are the same fact (`same_facts`), and how two records of one fact
merge into one (`merge`: the newer text and time, the union of provenance, the older id)."""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from memory.models import Memory
from memory.text.tokens import tokenize

_DIGITS_RE = re.compile(r"\d+")
# A capitalised Latin word, wherever it stands: sentence-initial too, and glued to Chinese ("Karl下个月…",
# where `\b` sees no boundary because 下 is a word character). Wider than the entity rule on purpose: a
# missed merge stores one near-duplicate more, a wrong one loses what was said about someone else.
_LATIN_NAME_RE = re.compile(r"(?<![A-Za-z])[A-Z][a-z]{2,}(?![A-Za-z])")
LEXICAL_OVERLAP = 0.6


def same_facts(a: Memory, b: Memory) -> bool:
    """Cosine alone is not enough to merge: MiniLM puts "我住在杭州" and "我住在苏州" above 0.95, and
    "order A123" / "order A124" too, and two template sentences about different people ("Karl下个月要去
    大理" / "Ben下个月要去拉萨") as well. A near-duplicate must also name the same numbers, entities and
    capitalised names, and share most of its words."""
    if _DIGITS_RE.findall(a.content) != _DIGITS_RE.findall(b.content):
        return False
    if set(_LATIN_NAME_RE.findall(a.content)) != set(_LATIN_NAME_RE.findall(b.content)):
        return False
    if {e.lower() for e in a.entities} != {e.lower() for e in b.entities}:
        return False
    ta, tb = set(tokenize(a.content)), set(tokenize(b.content))
    return not (ta or tb) or len(ta & tb) / len(ta | tb) >= LEXICAL_OVERLAP


def merge(old: Memory, new: Memory) -> Memory:
    """Keep the newer text and time, the union of provenance, the higher importance, the older id."""
    newer, older = (new, old) if new.created_at >= old.created_at else (old, new)
    ids = tuple(dict.fromkeys([*old.source_message_ids, *new.source_message_ids]))
    # a memory superseded stays superseded when the same words come again from before the change
    # (a retried write, a re-import); said again after it, it is current again
    stays = old if old.superseded_by and (old.valid_to is None or new.created_at < old.valid_to) else newer
    return replace(
        newer,
        valid_from=None if stays is newer else old.valid_from,
        valid_to=stays.valid_to,
        superseded_by=stays.superseded_by,
        id=old.id,
        source_message_ids=ids,
        importance=max(old.importance or 0.0, new.importance or 0.0),
        tier="fact" if "fact" in (old.tier, new.tier) else newer.tier,
        entities=tuple(dict.fromkeys([*newer.entities, *older.entities]))[:20],
        context=newer.context or older.context,
    )


def merge_within_batch(memories: list[Memory]) -> list[Memory]:
    by_hash: dict[str, Memory] = {}
    for m in memories:
        by_hash[m.content_hash] = merge(by_hash[m.content_hash], m) if m.content_hash in by_hash else m
    return list(by_hash.values())


def dedupe_ids(memories: list[Memory], vectors: np.ndarray) -> tuple[list[Memory], np.ndarray]:
    """Two candidates merged into the same existing memory: keep one record per id (merged)."""
    chosen: dict[str, int] = {}
    out: list[Memory] = []
    rows: list[int] = []
    for row, m in enumerate(memories):
        if m.id in chosen:
            j = chosen[m.id]
            out[j] = merge(out[j], m)
            rows[j] = row  # the merged record keeps the newer candidate's vector
        else:
            chosen[m.id] = len(out)
            out.append(m)
            rows.append(row)
    return out, vectors[rows]
