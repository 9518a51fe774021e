"""A user's entity graph, built in process from the per-memory records the store keeps. Pure.

Each memory's record says which entities it names, which relations it states (with the time it was
said) and which aliases it teaches ("my sister Anna": `kin:sister → person:anna`). The graph folds
them: aliases resolve (the newest alias of a role wins), an English nickname or a ≥ 3-letter first
name prefix joins the one full name it can stand for (Mel = Melanie), a place has one id in both
languages (the extractor's lexicon); relations of one family per subject (`status`: pending, approved,
rejected; `home`; `work`) are current only until a newer one of the family was said (`valid_to`).
Forgetting a memory is dropping its record: whatever it alone taught (an alias too) goes with it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import orjson

from memory.relations.extract import ME, Entity, Extraction, extract
from memory.relations.lexicon import EXCLUSIVE, NICKNAMES
from memory.relations.profile import LEGACY_CONFIDENCE, Attribute, Profile, build_profile, tagged


@dataclass(frozen=True, slots=True)
class Record:
    """What one memory contributes to the graph (stored as JSON under the memory's id)."""

    said_at: float
    entities: tuple[Entity, ...]
    relations: tuple[tuple[str, str, str, str], ...]  # (subject, relation, object, when)
    aliases: tuple[tuple[str, str], ...]
    attrs: tuple[Attribute, ...] = ()  # what it says of the user's profile (profile.py)

    @classmethod
    def of(cls, extraction: Extraction, said_at: float, attrs: tuple[Attribute, ...] = ()) -> Record:
        return cls(
            said_at,
            extraction.entities,
            tuple((r.subject, r.relation, r.object, r.when) for r in extraction.relations),
            extraction.aliases,
            attrs,
        )

    def __bool__(self) -> bool:
        """Worth keeping: it names an entity or says something of the user."""
        return bool(self.entities or self.attrs)

    def dumps(self) -> str:
        return json.dumps(
            {
                "t": self.said_at,
                "e": [[e.id, e.kind, e.name] for e in self.entities],
                "r": [list(r) for r in self.relations],
                "a": [list(a) for a in self.aliases],
                **(
                    {"p": [[a.category, a.key, a.value, a.confidence] for a in self.attrs]}
                    if self.attrs
                    else {}
                ),
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def loads(cls, raw: str | bytes) -> Record:
        d = orjson.loads(raw)  # a worker's first search of a user parses every record: 3x json's speed
        return cls(
            float(d["t"]),
            tuple(Entity(i, k, n) for i, k, n in d["e"]),
            tuple((s, r, o, w) for s, r, o, w in d["r"]),
            tuple((a, b) for a, b in d["a"]),
            # an attribute of a record written before confidences has none: LEGACY_CONFIDENCE
            tuple(
                Attribute(a[0], a[1], a[2], float(a[3]) if len(a) > 3 else LEGACY_CONFIDENCE)
                for a in d.get("p", ())
            ),
        )


@dataclass(frozen=True, slots=True)
class Merge:
    """Two entities the user (or an admin) said are one: `source` resolves to `target` from now on, in
    every record written before or after; a split deletes the merge and undoes exactly that."""

    id: str  # mg-<16 hex>
    source: str
    target: str
    at: float
    actor: str = ""

    def dumps(self) -> str:
        return json.dumps({"s": self.source, "t": self.target, "at": self.at, "by": self.actor})

    @classmethod
    def loads(cls, merge_id: str, raw: str | bytes) -> Merge:
        d = json.loads(raw)
        return cls(merge_id, str(d["s"]), str(d["t"]), float(d["at"]), str(d.get("by", "")))


@dataclass(frozen=True, slots=True)
class Fact:
    """One relation as said in one memory; `valid_to` set once a newer one of its family was said."""

    subject: str
    relation: str
    object: str
    when: str
    said_at: float
    memory_id: str
    valid_to: float | None = None


@dataclass(slots=True)
class Node:
    id: str
    kind: str
    name: str  # the name said most recently
    aliases: set[str] = field(default_factory=set)  # every other name and id it was known by
    memories: set[str] = field(default_factory=set)


_LATIN_NAME = re.compile(r"^[a-z]+$")
_SIBLINGS = {
    "kin:sister": ("kin:elder_sister", "kin:younger_sister"),
    "kin:brother": ("kin:elder_brother", "kin:younger_brother"),
}


class Graph:
    def __init__(self, records: Mapping[str, Record], merges: Iterable[Merge] = ()) -> None:
        self.records = dict(records)
        self.merges = sorted(merges, key=lambda m: (m.at, m.id))
        ordered = sorted(self.records.items(), key=lambda kv: (kv[1].said_at, kv[0]))
        self.alias: dict[str, str] = {}
        said: dict[str, float] = {}
        for _, rec in ordered:  # newest alias of a role wins
            for alias, target in rec.aliases:
                if alias != target:
                    self.alias[alias] = target
                    said[alias] = rec.said_at
        for general, specific in _SIBLINGS.items():  # "my sister" is the sister named (姐姐 or 妹妹)
            named = sorted((s for s in specific if s in self.alias), key=lambda s: said[s])
            if general not in self.alias and named:
                self.alias[general] = self.alias[named[-1]]
            elif general in self.alias:
                for s in specific:
                    self.alias.setdefault(s, self.alias[general])
        self.merged_by: dict[str, Merge] = {}  # source -> the merge in force that made it an alias
        self.void: list[Merge] = []  # merges without effect, oldest first
        for merge in self.merges:  # said by the user or an admin: above what the rules guessed
            # the store refuses a merge that would close a cycle or merge an entity twice (atomically,
            # issue 39); such pairs are still in data an older version let race (A into B and B into
            # A; A into B and into C), or a memory taught later that the target is the source: the
            # first one holds, the other is left without effect rather than making a cycle
            if merge.source in self.merged_by or self.resolve(merge.target) == merge.source:
                self.void.append(merge)
                continue
            self.alias[merge.source] = merge.target
            self.merged_by[merge.source] = merge
        self._nicknames(r.entities for _, r in ordered)
        self.nodes: dict[str, Node] = {}
        self.by_memory: dict[str, set[str]] = {}
        for mid, rec in ordered:
            ids = self.by_memory.setdefault(mid, set())
            for e in rec.entities:
                cid = self.resolve(e.id)
                node = self.nodes.get(cid)
                if node is None:
                    node = self.nodes[cid] = Node(cid, e.kind, e.name)
                elif e.id == cid or node.kind == "person" and not cid.startswith("kin:"):
                    node.aliases.add(node.name)
                    node.name = e.name if e.id == cid else node.name
                node.aliases.add(e.name)
                if e.id != cid:
                    node.aliases.add(e.id)
                node.memories.add(mid)
                ids.add(cid)
        for node in self.nodes.values():
            node.aliases.discard(node.name)
        self.facts = self._facts(ordered)
        self._facts_of: dict[str, list[Fact]] = {}
        for f in self.facts:
            self._facts_of.setdefault(f.memory_id, []).append(f)
        names = {a.lower(): n.id for n in self.nodes.values() for a in (n.name, *n.aliases) if len(a) >= 2}
        self._cjk = {name: cid for name, cid in names.items() if re.search(r"[\u4e00-\u9fff]", name)}
        self._latin = {name: cid for name, cid in names.items() if name not in self._cjk}

    def _nicknames(self, entities: Iterable[tuple[Entity, ...]]) -> None:
        """Mel → Melanie when the user knows exactly one person the short name can stand for."""
        people = {e.id: e.name.lower() for es in entities for e in es if e.id.startswith("person:")}
        firsts = {pid: name.split()[0] for pid, name in people.items() if _LATIN_NAME.match(name.split()[0])}
        for pid, first in firsts.items():
            if pid in self.alias:
                continue
            fuller = {
                other
                for other, full in firsts.items()
                if other != pid
                and full != first
                and (full in NICKNAMES.get(first, ()) or (len(first) >= 3 and full.startswith(first)))
            }
            if len(fuller) == 1:
                self.alias[pid] = fuller.pop()

    def undone_by_split(self, merge_id: str) -> list[str]:
        """The merges a split of `merge_id` deletes: that one, and every merge without effect that
        would take effect without it (B into A once A into B is split): a split undoes exactly its
        merge and brings none to life. Just `[merge_id]` unless merges without effect are stored."""
        drop = [merge_id]
        while self.void:
            after = Graph(self.records, (m for m in self.merges if m.id not in drop))
            woken = [m.id for m in self.void if m.id not in drop and after.merged_by.get(m.source) == m]
            if not woken:
                break
            drop += woken
        return drop

    def resolve(self, entity_id: str) -> str:
        seen = {entity_id}
        while entity_id in self.alias:
            entity_id = self.alias[entity_id]
            if entity_id in seen:
                break
            seen.add(entity_id)
        return entity_id

    def _facts(self, ordered: list[tuple[str, Record]]) -> list[Fact]:
        facts: list[Fact] = []
        latest: dict[tuple[str, str], int] = {}  # (subject, family) -> index of the current fact
        for mid, rec in ordered:
            for s, r, o, w in rec.relations:
                fact = Fact(self.resolve(s), r, self.resolve(o) if o else "", w, rec.said_at, mid)
                family = EXCLUSIVE.get(r)
                if family is not None:
                    key = (fact.subject, family)
                    prev = latest.get(key)
                    if prev is not None:
                        old = facts[prev]
                        if (old.relation, old.object) != (fact.relation, fact.object):
                            facts[prev] = Fact(
                                old.subject, old.relation, old.object, old.when, old.said_at, old.memory_id,
                                valid_to=rec.said_at,
                            )  # fmt: skip
                    latest[key] = len(facts)
                facts.append(fact)
        return facts

    def __len__(self) -> int:
        return len(self.nodes)

    def profile(self) -> Profile:
        """The user's own entity: what their memories say of them, current and past (profile.py)."""
        return build_profile((mid, r.said_at, r.attrs) for mid, r in self.records.items() if r.attrs)

    def tagged(self, wanted: Sequence[tuple[str, str]]) -> set[str]:
        """The memories stating every (category, key) of `wanted` (profile tags; AND)."""
        return tagged(((mid, r.attrs) for mid, r in self.records.items()), wanted)

    def entities_in(self, text: str, *, said_at: float) -> list[str]:
        """The user's entities `text` names: by the extractor's ids (aliases resolved: 杭州 finds what
        Hangzhou named; "my sister" finds Anna), then by every name and alias the graph knows."""
        found = [self.resolve(e.id) for e in extract(text, said_at=said_at).entities]
        words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'.-]*", text)
        grams = {" ".join(words[i : i + n]) for n in (1, 2, 3) for i in range(len(words) - n + 1)}
        for gram in grams:
            cid = self._latin.get(gram.lower())
            # a person, an organisation or a product is named by its name as written ("Painting's
            # great" once made a person of the word: "what inspired her painting" does not name it);
            # a place of the lexicon or a document id in any case
            if cid is not None and (
                gram[0].isupper() or self.nodes[cid].kind == "place" or cid.startswith("doc:")
            ):
                found.append(cid)
        found += [cid for name, cid in self._cjk.items() if name in text]
        return [c for c in dict.fromkeys(found) if c in self.nodes and c != ME]

    def says_as(self, memory_id: str, text: str, entities: Iterable[str]) -> bool:
        """Whether the memory only mentions one of `entities` (canonical ids), by that entity's own id,
        in words `text` also uses ("苏州" in both): the keyword channel already counts those words, a
        link adds only what they cannot reach ("my wife" → a memory saying "Rosa", or "My wife Rosa…",
        which says who she is; 杭州 → "Hangzhou") or a relation the memory states of the entity ("I met
        Lucas in Tokyo": Tokyo → Lucas met_in)."""
        record = self.records.get(memory_id)
        if record is None:
            return False
        wanted = set(entities)
        if any(f.subject in wanted or f.object in wanted for f in self._facts_of.get(memory_id, ())):
            return False  # it states something of it ("I met Lucas in Tokyo"): more than the words
        low = text.lower()
        return any(
            len(e.name) >= 2 and e.name.lower() in low
            for e in record.entities
            if e.id in wanted and self.resolve(e.id) == e.id
        )

    def relations_of(self, entity_id: str) -> list[Fact]:
        return [f for f in self.facts if entity_id in (f.subject, f.object)]

    def label(self, entity_id: str) -> str:
        if entity_id == ME:
            return "me"
        node = self.nodes.get(entity_id)
        return node.name if node is not None else entity_id

    def path(self, entity_id: str, memory_id: str) -> str:
        """How a memory hangs off an entity, for the score breakdown: "Q-2024-031 → approved"."""
        for f in self._facts_of.get(memory_id, ()):
            if entity_id in (f.subject, f.object):
                if f.subject == entity_id:
                    tail = (
                        f.relation
                        if not f.object or f.object == ME
                        else f"{f.relation} {self.label(f.object)}"
                    )
                else:
                    tail = f"{self.label(f.subject)} {f.relation}"
                return f"{self.label(entity_id)} → {tail}"
        return f"{self.label(entity_id)} → mentioned"

    def linked(
        self,
        seeds: Iterable[str],
        entities: Iterable[str] = (),
        *,
        hub: int = 25,
        limit: int = 30,
    ) -> dict[str, tuple[str, str]]:
        """Memory id -> (path, the memory it was reached from; "" when from an entity the question
        names). Three ways, most specific first:
        - one hop from a specific entity the question names (`entities`, aliases resolved: a person, a
          place, an organisation, a document id; never a date, an event word or a product said in
          lower case such as "podcast");
        - two hops from it, only through an entity the memory of the first hop *relates* to it ("I met
          Lucas in Tokyo": Tokyo → Lucas met_in; "the cousin of Noah in Tokyo" names Noah but relates
          nothing) or through a document id ("I signed contract CT-3301 with Globex" → CT-3301);
        - one hop from the `seeds` (memory ids: the best candidates), through their document ids only:
          a name or a place two good candidates share is what the channels already weighed, an id is
          what they cannot ("我3月提交的报价单" finds the March memory naming Q-2025-103, the id finds
          its approval).
        Dates and entities in more than `hub` memories (the user, the city they live in) link nothing:
        they join everything."""
        out: dict[str, tuple[str, str]] = {}
        named = [cid for cid in dict.fromkeys(entities) if self._links(cid, hub) and self._specific(cid)]
        via: list[tuple[str, str]] = []  # (from memory, entity) for the hops after the first
        for cid in named:
            for mid in self._newest(cid):
                if mid not in out:
                    out[mid] = (self.path(cid, mid), "")
                    if len(out) >= limit:
                        return out
                via += [
                    (mid, other)
                    for other in sorted(self.by_memory.get(mid, ()))
                    if self._joins(mid, cid, other)
                ]
        for mid in dict.fromkeys(seeds):
            via += [(mid, cid) for cid in sorted(self.by_memory.get(mid, ())) if cid.startswith("doc:")]
        for origin, cid in via:
            if not self._links(cid, hub):
                continue
            for mid in self._newest(cid):
                if mid != origin and mid not in out:
                    out[mid] = (self.path(cid, mid), origin)
                    if len(out) >= limit:
                        return out
        return out

    def _specific(self, cid: str) -> bool:
        """An entity that names one thing: not an event word ("birthday") nor a product said in lower
        case ("podcast", "记账软件" is CJK and stays)."""
        node = self.nodes[cid]
        if node.kind in ("date", "event"):
            return False
        if node.kind == "product":
            return any(c.isupper() or c.isdigit() or "\u4e00" <= c <= "\u9fff" for c in node.name)
        return True

    def _joins(self, memory_id: str, named: str, other: str) -> bool:
        """`other` leads on from `memory_id` (reached through the question's entity `named`): a
        document id, or an entity the memory states a relation between it and `named`."""
        if other == named:
            return False
        if other.startswith("doc:"):
            return True
        return any({f.subject, f.object} == {named, other} for f in self._facts_of.get(memory_id, ()))

    def _links(self, cid: str, hub: int) -> bool:
        node = self.nodes.get(cid)
        return node is not None and node.kind != "date" and len(node.memories) <= hub

    def _newest(self, cid: str) -> list[str]:
        return sorted(self.nodes[cid].memories, key=lambda m: -self.records[m].said_at)


def search(graph: Graph, prefix: str = "", kind: str | None = None) -> list[Node]:
    """The user's entities whose name, an alias or id starts with `prefix` (case-insensitive; any word
    of a Latin name), most-mentioned first; dates only when asked for by `kind`."""
    p = prefix.strip().lower()
    out = []
    for node in graph.nodes.values():
        if kind is not None and node.kind != kind or kind is None and node.kind == "date":
            continue
        names = [node.id, node.name, *node.aliases]
        if not p or any(
            n.lower().startswith(p) or any(w.startswith(p) for w in n.lower().split()) for n in names
        ):
            out.append(node)
    out.sort(key=lambda n: (-len(n.memories), n.name))
    return out
