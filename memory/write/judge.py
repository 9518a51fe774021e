"""A second opinion on facts that change: which new memories a model says supersede a recalled old one.

The rules (supersession.py) read the attributes people state most; a statement they do not know
("we finally sold the flat in Hangzhou, Suzhou is home now") claims nothing. When an LLM is configured,
the long-term writer (never a request: the messages endpoint does not ask) collects up to `MAX_PAIRS`
pairs per write round, a new user memory the rules left alone and an older memory of the same speaker
it is close to (cosine ≥ `MIN_SIMILARITY`), and asks once. An answer that is not the strict JSON asked
for, a timeout or an error leaves the rules' result as it is. The model behind `SupersessionJudge` lives
in memory/chat (supersession_judge.py); this module only says what is asked and picks the pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from memory.embedding.base import Vectors
from memory.models import Memory
from memory.recall.keyword_index import BM25Index

MIN_SIMILARITY = 0.6
MAX_PAIRS = 8
PER_MEMORY = 2  # older memories asked about per new one


class SupersessionJudge(Protocol):
    async def judge(self, pairs: Sequence[tuple[Memory, Memory]]) -> list[bool] | None:
        """For each (new, old) pair: does `new` replace what `old` says? None: no answer (keep rules)."""
        ...


def judge_pairs(
    index: BM25Index | None, memories: Sequence[Memory], vectors: Vectors
) -> list[tuple[Memory, Memory]]:
    """(new, old) pairs worth asking about: a new user statement the rules did not read, and the older,
    current memories of the same speaker nearest to it. Needs the user's in-process index (users too
    large for one are left to the rules)."""
    if index is None or not index.has_vectors:
        return []
    batch = {m.id for m in memories}
    pairs: list[tuple[Memory, Memory]] = []
    for m, vector in zip(memories, vectors, strict=True):
        if m.source != "user" or m.facts or m.superseded_by or m.content.rstrip().endswith(("?", "？")):
            continue
        near = index.nearest(vector, limit=PER_MEMORY, keep=_older_of(m, batch))
        pairs.extend((m, o) for o, similarity in near if similarity >= MIN_SIMILARITY)
    return pairs


def _older_of(m: Memory, batch: set[str]) -> Callable[[Memory], bool]:
    def keep(o: Memory) -> bool:
        return (
            o.id not in batch
            and o.source == "user"
            and (o.name or "") == (m.name or "")
            and o.superseded_by is None
            and o.valid_since < m.valid_since
        )

    return keep
