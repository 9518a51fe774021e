"""What the integrations share: how a search hit reads to a language model, and message ids that sort in
the order they were written."""

from __future__ import annotations

import itertools
import time

from mnemo_client.models import SearchResult

_sequence = itertools.count()


def hits_as_text(result: SearchResult) -> str:
    """One line per memory, best first: `- [id] (date) content`; a plain sentence when there is none."""
    if not result.hits:
        return "No matching memories. 没有找到相关的记忆。"
    return "\n".join(
        f"- [{h.memory.id}] ({h.memory.created_at[:10]}) {h.memory.content}" for h in result.hits
    )


def ordered_ids(prefix: str, count: int) -> list[str]:
    """Ids whose text order is the order of writing (nanosecond clock, then a process-wide counter)."""
    now = time.time_ns()
    return [f"{prefix}-{now:020d}-{next(_sequence) % 10**6:06d}" for _ in range(count)]
