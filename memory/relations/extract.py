"""Entities and relations of one memory's text, by rules, in Chinese and English. Pure.

`extract(text, said_at=...)` returns what the text names (people and the user's family, places,
organisations, products, documents and ids, dates, events) and how they relate to the user and to each
other. Entity ids are stable and fit the API's id rule (`kind:slug`, ASCII): a place known in both
languages gets one id (杭州 and Hangzhou are `place:hangzhou`), a Chinese name without a lexicon entry a
short hash of it. "my sister Anna" / "我妹妹Anna" also gives the alias `kin:sister → person:anna`, so a
later "my sister" is Anna (graph.py resolves aliases over all of a user's memories).

Reuses the write path's rules: `memory.text.slots.extract_slots` (dates, months, places, document
numbers), `memory.write.scoring.entities` (names), `memory.write.supersession.claims_of` (where the user
lives and works).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memory.relations.lexicon import (
    DOC_KINDS,
    KIN,
    PLACE_OF,
    PLACES,
    SURNAMES,
    ZH_PLACE_SUFFIX,
)
from memory.relations.names import (
    _ZH_CLAUSE_START,
    _is_model,
    _proper_names,
    zh_name_at,
)
from memory.relations.rules import (
    _BARE_ID_RE,
    _BOUGHT_EN,
    _BOUGHT_ZH,
    _CALLED,
    _CJK,
    _DOC_ID_RE,
    _DOC_NUM_RE,
    _EN_PLACE_RE,
    _EN_PRODUCT_STOP,
    _EVENTS,
    _FIRST_PERSON,
    _KIN_RULES,
    _MET,
    _NOT_NAMES,
    _OF_ROLE_BEFORE,
    _ORG_EN_RE,
    _ORG_ZH_RE,
    _PRODUCT_STOP,
    _RECOMMEND_EN,
    _RECOMMEND_ZH,
    _ROLE_AFTER,
    _ROLE_ZH,
    _SIGNED,
    _SOCIAL_RULES,
    _STATUS,
    _SUBMITTED,
    _VISITED,
    _ZH_NAME_BAD_START,
    _ZH_PLACE_RE,
    _kin_label,
)
from memory.relations.speech import OTHER, Statement, statements
from memory.text.cleaning import split_sentences
from memory.text.slots import extract_slots
from memory.write.scoring import entities as named_things
from memory.write.supersession import claims_of

ME = "me"  # the user's own entity (their profile)


@dataclass(frozen=True, slots=True)
class Entity:
    id: str  # kind:slug, ASCII (app/http/ids.py)
    kind: str  # person, place, org, product, document, date, event
    name: str  # as the text says it


@dataclass(frozen=True, slots=True)
class Relation:
    subject: str  # an entity id, or ME
    relation: str  # submitted, approved, lives_in, ... (lexicon.CORE_RELATIONS; open set)
    object: str = ""  # an entity id, ME, or "" for a state of the subject ("Q-2024-031 → approved")
    when: str = ""  # the date or month the text gives ("2026-03"), else ""


@dataclass(frozen=True, slots=True)
class Extraction:
    entities: tuple[Entity, ...] = ()
    relations: tuple[Relation, ...] = ()
    aliases: tuple[tuple[str, str], ...] = ()  # (alias id, entity id): kin:sister → person:anna
    # the text's clauses (speech.py), for the profile (not kept: a record holds the three above)
    said: tuple[Statement, ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        return bool(self.entities)


def slug(name: str) -> str:
    """An ASCII id part for a name: lower-case words joined by '-', or a short hash of a Chinese name."""
    low = name.strip().lower()
    if _CJK.search(low) or not low:
        return "x" + hashlib.blake2b(low.encode("utf-8"), digest_size=5).hexdigest()
    return re.sub(r"[^a-z0-9.]+", "-", low).strip("-")[:80] or "x"


def place_id(name: str) -> str:
    return f"place:{PLACE_OF.get(name.strip().lower(), slug(name))}"


def person_id(name: str) -> str:
    return f"person:{slug(name)}"


def _kind_of_doc(text: str) -> str:
    low = text.lower()
    for kind, words in DOC_KINDS.items():
        if any((w in text) if _CJK.search(w) else re.search(rf"\b{w}\b", low) for w in words):
            return kind
    return "document"


def _month_of(said_at: float) -> datetime:
    return datetime.fromtimestamp(said_at, tz=UTC)


class _Found:
    def __init__(self) -> None:
        self.entities: dict[str, Entity] = {}
        self.spans: list[tuple[int, int, str]] = []  # (start, end, entity id) in the sentence
        self.relations: dict[Relation, None] = {}
        self.aliases: dict[tuple[str, str], None] = {}

    def add(self, entity: Entity, start: int = -1, end: int = -1) -> str:
        self.entities.setdefault(entity.id, entity)
        if start >= 0:
            self.spans.append((start, end, entity.id))
        return entity.id

    def relate(self, subject: str, relation: str, obj: str = "", when: str = "") -> None:
        if subject and subject != obj:
            self.relations.setdefault(Relation(subject, relation, obj, when), None)


def _product(raw: str, *, zh: bool) -> str:
    value = raw.strip().strip("《》“”\"'")
    if zh:
        value = _PRODUCT_STOP.sub("", value)
    else:
        words = value.split()
        while words and words[-1].lower() in _EN_PRODUCT_STOP:
            words.pop()
        value = " ".join(w for w in words if w.lower() not in _EN_PRODUCT_STOP)
    return value if len(value) >= 2 else ""


def _person_before(found: _Found, pos: int) -> str:
    """The person (or family member) named last before `pos` in the sentence."""
    best = ""
    best_end = -1
    for _start, end, eid in found.spans:
        if (
            end <= pos
            and (end > best_end or end == best_end and eid.startswith("person:"))
            and (eid.startswith(("person:", "kin:")))
        ):
            best, best_end = eid, end
    return best


# a family role said of someone else ("她老公", "朋友的妈妈", "王先生"), or had by no one ("我没有姐姐")
_KIN_NOT_MINE_BEFORE = re.compile(
    rf"(?:[他她你它您]|们|(?<!我)的|[{SURNAMES.replace('向', '').replace('于', '')}]|没有|没|无|不是|表|堂|干)$"
)
_KIN_TITLES = ("先生", "太太", "爱人")


def _kin_is_users(sentence: str, m: re.Match[str]) -> bool:
    said = m.group(0)
    if said.startswith(("我", "my", "My", "MY")) or re.match(r"[A-Z][a-z]+,? (?:is )?my ", said):
        return True
    if re.match(r"(?-i:[A-Z][a-z]+|[\u4e00-\u9fff]{2,3})是我", said):
        return True
    before = sentence[: m.start()].rstrip()
    if _KIN_NOT_MINE_BEFORE.search(before):
        return False
    # 先生, 太太, 爱人 are titles as often as roles: the user's only with 我
    return not said.startswith(_KIN_TITLES)


def _holder_id(holder: str, found: _Found) -> str:
    """The entity someone else's clause is about: a family role (我老公, my husband → kin:husband) or a
    person the text names (Anna, 小李); "" for a pronoun, a friend or a colleague (several people)."""
    words = re.sub(r"^(?:我们|我)(?:家)?的?|^(?:my|our)\s+|['’]s?$", "", holder.strip(), flags=re.I).strip()
    low = words.lower()
    for role, (zh, en) in KIN.items():
        bare = {w.removeprefix("我") for w in zh}
        if low in bare or low in en or re.sub(r"^(?:little|big|younger|older|elder)\s+", "", low) in en:
            return f"kin:{role}"
    pid = person_id(words)
    return pid if pid in found.entities else ""


@functools.lru_cache(
    maxsize=64
)  # the clauses of the message at hand: read by the extractor, then the profile
def _claims_of(clause: str) -> tuple[tuple[str, str], ...]:
    return tuple(claims_of(clause))


def statement_claims(st: Statement) -> tuple[tuple[str, str], ...]:
    """The write path's claims (memory/write/supersession.py) of a clause said with 我/I as its subject
    (`Statement.first_person`); cached, as the extractor and the profile both read them."""
    return _claims_of(st.first_person())


def _claims(said: Sequence[Statement], found: _Found, orgs: set[str]) -> None:
    """Where the user (and the people they speak of) work and live, from the clauses that state it as a
    fact: the user's own ones to the user, someone else's to that person ("我老公…在一家设计院上班":
    the husband works there; the user does not)."""
    for st in said:
        if not st.fact or st.hedged:
            continue
        if st.mine:
            subject = ME
        elif st.subject == OTHER and st.holder:
            subject = _holder_id(st.holder, found)
        else:
            continue
        if not subject:
            continue
        for key, value in statement_claims(st):
            if not value or st.negated:
                continue
            if key == "employer":
                if value.lower() in PLACE_OF:
                    continue  # "我在成都工作": where, not for whom
                orgs.add(value.lower())
                found.relate(subject, "works_at", found.add(Entity(f"org:{slug(value)}", "org", value)))
            elif key == "residence":
                place = _place_of(value, st.text)
                if place:
                    found.relate(subject, "lives_in", found.add(Entity(place_id(place), "place", place)))


def _place_of(value: str, clause: str) -> str:
    """The place a residence claim names: its value when it reads as a place (the lexicon, a capitalised
    name, 某某市), else the one lexicon place the clause names ("我在上海定居好几年了" → 上海), else ""."""
    if value.lower() in PLACE_OF or ZH_PLACE_SUFFIX.search(value):
        return value
    if not _CJK.search(value):
        said = re.search(re.escape(value), clause, re.I)
        if said is not None and said.group(0)[:1].isupper():
            return said.group(0)
    named = {
        PLACE_OF[m.group(0).lower()]: m.group(0)
        for m in (*_ZH_PLACE_RE.finditer(clause), *_EN_PLACE_RE.finditer(clause))
    }
    return next(iter(named.values())) if len(named) == 1 else ""


def extract(text: str, *, said_at: float) -> Extraction:
    """What `text` names and how those things relate (zh + en). `said_at` (epoch seconds) resolves
    relative dates ("3月" is March of the year it was said)."""
    found = _Found()
    now = _month_of(said_at)
    slots = extract_slots(text, now=now)
    when = next((s.value for s in slots if s.name in ("date", "month")), "")
    for s in slots:
        if s.name in ("date", "month"):
            found.add(Entity(f"date:{s.value[:10]}", "date", s.raw.strip()))
    # documents and ids (Q-2024-031, 订单号 88231); a model's code ("ThinkPad X1") is none
    docs: list[str] = []
    doc_kind = _kind_of_doc(text)
    for m in _DOC_ID_RE.finditer(text):
        if not _is_model(text, m.start(1), m.group(1)):
            docs.append(found.add(Entity(f"doc:{m.group(1).lower()}", doc_kind, m.group(1))))
    for m in _DOC_NUM_RE.finditer(text):
        number = m.group(1) or m.group(2)
        docs.append(found.add(Entity(f"doc:{number.lower()}", _kind_of_doc(m.group(0)), number)))
    for m in _BARE_ID_RE.finditer(text):
        if f"doc:{m.group(1)}" not in docs:
            docs.append(found.add(Entity(f"doc:{m.group(1)}", doc_kind, m.group(1))))
    for s in slots:
        if (
            s.name.endswith("_number")
            and not any(d == f"doc:{s.value.lower()}" for d in docs)
            and not _is_model(text, max(0, text.find(s.value)), s.value)
        ):
            docs.append(found.add(Entity(f"doc:{s.value.lower()}", s.name.removesuffix("_number"), s.value)))
    docs = list(dict.fromkeys(docs))
    # organisations: names with an organisation word (where the user works: the clauses below)
    orgs: set[str] = set()
    for m in (*_ORG_EN_RE.finditer(text), *_ORG_ZH_RE.finditer(text)):
        orgs.add(m.group(1).lower())
        found.add(Entity(f"org:{slug(m.group(1))}", "org", m.group(1)))
    # events
    low = text.lower()
    for key, words in _EVENTS.items():
        if any((w in text) if _CJK.search(w) else re.search(rf"\b{w}\b", low) for w in words):
            found.add(Entity(f"event:{key}", "event", key))
    sentences = split_sentences(text) or [text]
    for sentence in sentences:
        found.spans = []
        _sentence(sentence, found, orgs, docs, when)
    # where the user and the people they name work and live, clause by clause
    people = [e.name for e in found.entities.values() if e.id.startswith("person:")]
    said = tuple(statements(text, people))
    _claims(said, found, orgs)
    # Chinese names elsewhere (after 和/跟/朋友...; Latin names are the sentences' proper names)
    called = {m.group(0).split(" ", 1)[1] for m in _CALLED.finditer(text)}
    for name in named_things(text):
        if not _CJK.search(name) or name.lower() in orgs or re.search(r"\d", name):
            continue
        if any(name in c for c in called) or re.fullmatch(_ROLE_ZH, name):
            continue
        if name.lower() in PLACE_OF or any(e.name in name or name in e.name for e in found.entities.values()):
            continue
        if any(s.name == "place" and s.value == name for s in slots):
            found.add(Entity(place_id(name), "place", name))
            continue
        found.add(Entity(person_id(name), "person", name))
    return Extraction(tuple(found.entities.values()), tuple(found.relations), tuple(found.aliases), said)


def _sentence(sentence: str, found: _Found, orgs: set[str], docs: list[str], when: str) -> None:
    low = sentence.lower()
    # places (both languages, one id per place)
    places: list[str] = []
    for m in (*_ZH_PLACE_RE.finditer(sentence), *_EN_PLACE_RE.finditer(sentence)):
        name = m.group(0)
        places.append(found.add(Entity(f"place:{PLACE_OF[name.lower()]}", "place", name), m.start(), m.end()))
    # the user's family, named or not ("她老公", "王先生", "我没有姐姐" are no family of the user's)
    for role, pattern in _KIN_RULES:
        for m in pattern.finditer(sentence):
            if not _kin_is_users(sentence, m):
                continue
            kin = found.add(Entity(f"kin:{role}", "person", _kin_label(m)), m.start(), m.end())
            name = m.group("n")
            if name and name not in _NOT_NAMES and name[0] not in _ZH_NAME_BAD_START:
                person = found.add(Entity(person_id(name), "person", name), m.start("n"), m.end("n"))
                found.aliases.setdefault((kin, person), None)
                found.relate(person, "family", ME)
            else:
                found.relate(kin, "family", ME)
    for rel, pattern in _SOCIAL_RULES:
        for m in pattern.finditer(sentence):
            name = next((g for g in m.groups() if g), "")
            if name and name not in _NOT_NAMES and name[0] not in _ZH_NAME_BAD_START:
                start = sentence.find(name, m.start())
                person = found.add(Entity(person_id(name), "person", name), start, start + len(name))
                found.relate(person, rel, ME)
    # what was recommended or bought: its words are no person's name
    products: list[tuple[int, int, str, str]] = []  # (start, end, verb, product name)
    for verb, patterns in (
        ("recommended", (_RECOMMEND_EN, _RECOMMEND_ZH)),
        ("bought", (_BOUGHT_EN, _BOUGHT_ZH)),
    ):
        for pattern in patterns:
            for m in pattern.finditer(sentence):
                name = _product(m.group("p"), zh=pattern in (_RECOMMEND_ZH, _BOUGHT_ZH))
                if name:
                    products.append((m.start("p"), m.start("p") + len(name), verb, name))
    taken = [(s, e) for s, e, _ in found.spans] + [(s, e) for s, e, _, _ in products]
    taken += [m.span() for m in _CALLED.finditer(sentence)]  # "a cafe called Blue Door" is no one
    # capitalised names: people (for "who recommended", "whom I met"), places, organisations, products
    for start, end, name, kind in _proper_names(sentence):
        if any(s < end and start < e for s, e in taken):
            continue
        if kind == "person":
            if name.lower() in orgs or any(name in o for o in orgs):
                continue
            found.add(Entity(person_id(name), "person", name), start, end)
        elif kind == "place":
            found.add(Entity(place_id(name), "place", name), start, end)
        elif kind == "org":
            orgs.add(name.lower())
            found.add(Entity(f"org:{slug(name)}", "org", name))
        else:
            found.add(Entity(f"product:{slug(name)}", "product", name))
    # Chinese names leading a clause ("王芳是护士", "李雷养了一只狗")
    for m in _ZH_CLAUSE_START.finditer(sentence):
        name = zh_name_at(sentence, m.start())
        if name and not any(s <= m.start() < e for s, e in taken):
            found.add(Entity(person_id(name), "person", name), m.start(), m.start() + len(name))
    # documents and their state
    here = [d for d in docs if found.entities[d].name.lower() in low] or (docs if len(docs) == 1 else [])
    for doc in here:
        for status, pattern in _STATUS:
            if pattern.search(sentence):
                found.relate(doc, status, "", when)
                break
        if _SUBMITTED.search(sentence) and _FIRST_PERSON.search(sentence):
            found.relate(ME, "submitted", doc, when)
        if _SIGNED.search(sentence) and _FIRST_PERSON.search(sentence):
            found.relate(ME, "signed", doc, when)
    # met, recommended, bought, visited
    people = [
        eid
        for start, end, eid in found.spans
        if eid.startswith(("person:", "kin:"))
        and not _OF_ROLE_BEFORE.search(sentence[:start])
        and not _ROLE_AFTER.match(sentence, end)
    ]
    met = _MET.search(sentence)
    # the user met them: said with 我/I, or with no one before the verb ("在东京旅行的时候遇到了Lucas",
    # "Got to know Lucas in Tokyo": Chinese and chat English leave the user out)
    if met and (
        _FIRST_PERSON.search(sentence)
        or not any(start < met.start() and eid.startswith("person:") for start, _, eid in found.spans)
        and not any(
            w not in _NOT_NAMES and w.lower() not in PLACE_OF
            for w in re.findall(r"(?<![A-Za-z])[A-Z][a-z]+", sentence[: met.start()])
        )
    ):
        for person in people:
            found.relate(ME, "met", person, when)
            for place in places:
                found.relate(person, "met_in", place, when)
    for start, _, verb, name in products:
        target = place_id(name) if place_id(name) in found.entities else f"product:{slug(name)}"
        if target.startswith("product:"):
            found.add(Entity(target, "product", name))
        who = _person_before(found, start) if verb == "recommended" else ME
        found.relate(who or ME, verb, target, when)
    if _VISITED.search(sentence) and _FIRST_PERSON.search(sentence):
        for place in places:
            found.relate(ME, "visited", place, when)


__all__ = [
    "ME",
    "PLACES",
    "Entity",
    "Extraction",
    "Relation",
    "extract",
    "person_id",
    "place_id",
    "slug",
    "statement_claims",
    "zh_name_at",
]
