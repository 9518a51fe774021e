"""What a user's index derives from their memories besides their words (`IndexViews`): the memories by
content hash and by claim key, supersession's chains, the user's own memories newest first, and
newest-first runs of those that a rule picks (the statements of a category, the sentences saying "my
dentist"). Each is built on first use; all but the hashes are carried to the index a write makes, in
time proportional to what the write changed.

Rebuilt after every write instead, a 10M-token user (58,565 memories) paid them again at the next
search after each chat turn's write: tens of milliseconds for the claim keys and the sort, and a scan of
29,000 own memories for a category question (issue 45). A carried view is the one a rebuild makes, in
the same order (`tests/unit/test_index_views.py`).
"""

from __future__ import annotations

import bisect
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

from memory.models import Memory

__all__ = ["RULES_KEPT", "IndexViews", "Rule"]

Rule = Callable[[Memory], bool]
RULES_KEPT = 64  # newest-first runs kept per index (by rule key, least recently asked dropped first)


def _age(m: Memory) -> float:
    return -m.created_at


def _every(m: Memory) -> bool:
    return True


_EVERY = ("every own memory",)  # the key of `users_newest_first`'s run (rule keys are the callers')


class IndexViews:
    """The derived views of one index's memories (an index never changes: a write makes a new one, and
    `after_write` makes its views from these, in the thread pool while searches of the old index may
    build views of it: a view is published whole, and the runs are read from a copy)."""

    def __init__(self, memories: Mapping[str, Memory]) -> None:
        self._memories = memories
        self._by_hash: dict[str, Memory] | None = None
        self._by_fact: dict[str, list[Memory]] | None = None
        self._chains: dict[str, list[str]] | None = None
        self._runs: OrderedDict[Hashable, tuple[Rule, list[Memory]]] = OrderedDict()

    def with_hashes(self, hashes: Iterable[str]) -> list[Memory]:
        """Memories whose content hash is one of `hashes` (the writer's exact-duplicate check)."""
        if self._by_hash is None:
            by_hash: dict[str, Memory] = {}
            for m in self._memories.values():
                by_hash.setdefault(m.content_hash, m)
            self._by_hash = by_hash
        return [self._by_hash[h] for h in dict.fromkeys(hashes) if h in self._by_hash]

    def with_fact_keys(self, fact_keys: Iterable[str]) -> list[Memory]:
        """Memories stating one of these attributes (`Memory.facts` keys: the writer's supersession,
        and recall of a question about one); "pet" asks for "pet:cat" too."""
        wanted = set(fact_keys)
        facts = self.by_fact()
        keys = sorted(
            k for k in facts if k in wanted or k.split(":", 1)[0] in wanted
        )  # an order a carry keeps
        return list({m.id: m for k in keys for m in facts[k]}.values())

    def by_fact(self) -> dict[str, list[Memory]]:
        """The memories stating each `Memory.facts` key, in the index's order."""
        if self._by_fact is None:
            by_fact: dict[str, list[Memory]] = {}
            for m in self._memories.values():
                for key, _ in m.facts:
                    by_fact.setdefault(key, []).append(m)
            self._by_fact = by_fact  # whole: a write in the thread pool may carry it meanwhile
        return self._by_fact

    def chains(self) -> dict[str, list[str]]:
        """Superseded memories by the id of the memory that superseded them."""
        if self._chains is None:
            chains: dict[str, list[str]] = {}
            for m in self._memories.values():
                if m.superseded_by:
                    chains.setdefault(m.superseded_by, []).append(m.id)
            self._chains = chains
        return self._chains

    def users_newest_first(self) -> list[Memory]:
        """The user's own memories (source "user"), newest first (equal times in the index's order): the
        run of the rule that picks every one."""
        return self.newest_where(_EVERY, _every, build=self._memories.values)

    def newest_where(
        self, key: Hashable, rule: Rule, build: Callable[[], Iterable[Memory]] | None = None
    ) -> list[Memory]:
        """The user's own memories `rule` picks, newest first (a run of `users_newest_first`). `key`
        names the rule (equal keys: equal rules); `build`, when given, yields a superset of them in the
        index's order (a term's postings: cheaper than reading every own memory)."""
        kept = self._runs.get(key)
        if kept is not None:
            self._runs.move_to_end(key)
            return kept[1]
        if build is None:
            run = [m for m in self.users_newest_first() if rule(m)]
        else:
            run = sorted((m for m in build() if m.source == "user" and rule(m)), key=_age)
        self._runs[key] = (rule, run)
        while len(self._runs) > RULES_KEPT:
            self._runs.popitem(last=False)
        return run

    def after_write(
        self, memories: Mapping[str, Memory], gone: Mapping[str, Memory], added: Sequence[Memory]
    ) -> IndexViews:
        """The views of the index a write made (`memories`: its memories, the kept in this index's order,
        then `added`), from these: without `gone` (the memories it removed or replaced, as they were),
        with `added`. What was not built here is built there on first use."""
        out = IndexViews(memories)
        if self._by_fact is not None:
            by_fact = dict(self._by_fact)
            for key in {k for m in gone.values() for k, _ in m.facts}:
                by_fact[key] = [m for m in by_fact.get(key, []) if m.id not in gone]
                if not by_fact[key]:
                    del by_fact[key]
            for m in added:
                for key, _ in m.facts:
                    by_fact[key] = [*by_fact.get(key, []), m]  # a new list: this index's is shared
            out._by_fact = by_fact
        if self._chains is not None:
            chains = dict(self._chains)
            for head in {m.superseded_by for m in gone.values() if m.superseded_by}:
                chains[head] = [mid for mid in chains.get(head, []) if mid not in gone]
                if not chains[head]:
                    del chains[head]
            for m in added:
                if m.superseded_by:
                    chains[m.superseded_by] = [*chains.get(m.superseded_by, []), m.id]
            out._chains = chains
        for name, (rule, run) in list(self._runs.items()):  # a copy: a search may add a run meanwhile
            out._runs[name] = (rule, _carried(run, gone, added, rule))
        return out


def _carried(
    run: list[Memory], gone: Mapping[str, Memory], added: Sequence[Memory], rule: Rule
) -> list[Memory]:
    """A newest-first run without `gone`, with the own memories of `added` that `rule` picks, each after
    the equal times already there (where a stable sort of the new index's order puts it)."""
    out = [m for m in run if m.id not in gone] if gone else list(run)
    for m in added:
        if m.source == "user" and rule(m):
            out.insert(bisect.bisect_right(out, _age(m), key=_age), m)
    return out
