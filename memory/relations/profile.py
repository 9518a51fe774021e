"""The user's own entity: their profile. Pure.

What the user says of themself (never what the assistant said) gives attributes in a few categories,
each with a tag in Chinese and in English that list and search filter on: occupation (`#职业_教师` /
`#occupation_teacher`), employer, home, family, goal (`#目标_备考雅思` / `#goal_ielts`), preference,
device, diet and pet. A value the lexicon knows has one key in both languages (老师 = 教师 = teacher); one
it does not know is its own key, as said (`#职业_welder`). Occupation, employer, home and diet hold one
value at a time: the newest said is current and the earlier ones are past (`valid_to`, when the next was
said); the other categories accumulate.

Only what the user states of themself as a fact counts (speech.py reads the message clause by clause):
not another person's clause ("我老公…在一家设计院上班"), a question, a negation, a condition or a wish,
someone's words or a quote, the past; a plan only as a goal. A car, a colour, a title or a number is no
device and no preference. Each attribute has a confidence (STATED, LOOSER, HEDGE, HABIT), an entry the
joint confidence of the memories stating it, and the chat prompt's line holds the entries from
PROFILE_MIN_CONFIDENCE up (`Profile.compact`).

Each memory's attributes are kept with its relation record (graph.Record.attrs), so forgetting the memory
forgets what it taught of the profile, as for every entity and relation.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memory.relations.extract import ME, Extraction, statement_claims
from memory.relations.lexicon import PLACE_OF, ZH_PLACE_SUFFIX
from memory.relations.speech import Statement, statements
from memory.relations.tags import (
    _CJK,
    _VALUES,
    CATEGORIES,
    EXCLUSIVE,
    TAG_RULE,
    parse_tag,
    tags_of,
    value_key,
)
from memory.text.profile_words import EN_OCCUPATIONS, ZH_OCCUPATIONS

# How sure the rules are that a memory states a value of the user (Attribute.confidence): a fact the
# user states of themself with a value the lexicons know, or a checked value of the write path's claims
STATED = 0.9
# a value outside the lexicons (a place or employer the rules cannot check by name: "一家设计院", "a bank")
LOOSER = 0.8
# a hedge takes this off ("maybe", "I think", "可能", "好像")
HEDGE = 0.3
# a preference only told by a habit ("我每天跑步", "I drink coffee every morning"), not by a liking
HABIT = 0.6
# The prompt's profile block holds an entry only from this confidence up (MemoryService.profile_summary,
# Profile.compact): one memory stating it (0.8-0.9) is enough, one hedged (0.6) or told by a habit (0.6)
# is not, two of those are (1 - 0.4 * 0.4 = 0.84). The profile route and the tags show every entry.
PROFILE_MIN_CONFIDENCE = 0.7
# the attributes of a record written before confidences (records of the rules that put other people's
# employers and cars' colours into profiles): kept, shown by the route, left out of the prompt until the
# memory is written again. Zero: however many old records repeat a value (the husband's employer said in
# five turns), their joint confidence stays 0; one rated memory stating it is what lets it in.
LEGACY_CONFIDENCE = 0.0


@dataclass(frozen=True, slots=True)
class Attribute:
    """One thing a memory says of the user: ("occupation", "teacher", "小学老师")."""

    category: str
    key: str  # the value's key ("" for an attribute that ended: "我不当老师了")
    value: str  # as said
    confidence: float = field(default=STATED, compare=False)  # 0-1, see STATED, LOOSER, HEDGE, HABIT


_GOAL_CUE = re.compile(
    r"备考|准备|在考|要考|想考|报了|报名|目标|计划|打算|争取|正在|在学|想学|学习|练习|备战|冲刺|在减|为.{0,12}做准备|"
    r"\bpreparing\b|\bprepare\b|\bstudying\b|\bgoal\b|\bplan(?:ning)? to\b|\bwant to\b|\btrying to\b|"
    r"\bsigned up\b|\btaking\b|\btraining for\b|\blearning\b|\bpractis|\bpractic|\baim(?:ing)? to\b",
    re.I,
)
_PREFERENCE_CUE = re.compile(
    r"喜欢|爱(?:喝|吃|看|玩|打|听|上|去|跑|游|做|拍)|热爱|偏爱|迷上|超爱|最爱|钟爱|着迷|"
    r"\b(?:I|we|really|also|just|do|still|totally|genuinely|kinda|absolutely)\s+"
    r"(?!(?:feel|feels|look|looks|seem|seems|sound|sounds)\s)(?:\w+\s+)?(?:like|likes)\b|"
    r"(?:'m|\bam|\breally|\bso|\btotally|\bbeen|\bgetting|\bgot)\s+(?:\w+\s+)?into\b|"
    r"\b(?:love|loves|loving|enjoy|enjoys|prefer|prefers|adore|adores|fan of|favou?rite|passionate about|"
    r"crazy about|obsessed with|addicted to|hooked on)\b",
    re.I,
)
_HABIT_CUE = re.compile(
    r"每天|每周|每晚|每个周末|经常|常常|平时|天天|总是|一般|通常|\bevery (?:day|morning|evening|night|week|weekend)\b|"
    r"\bdaily\b|\busually\b|\boften\b|\balways\b|\bmost (?:days|evenings|mornings|weekends)\b",
    re.I,
)
# what the user says they prefer it to: "I prefer tea to coffee", "比起咖啡我更喜欢茶"
_NOT_PREFERRED_EN = re.compile(r"\b(?:to|over|than|rather than|instead of)\b.*$", re.I)
_NOT_PREFERRED_ZH = re.compile(r"比起[^，,。我更]{1,12}|而不是.*$|胜过.*$")
_DEVICE_CUE = re.compile(
    r"用|买了|换了|入手|我的|换成|下单|\buse\b|\buses\b|\busing\b|\bbought\b|\bgot\b|\bhave\b|\bown\b|\bmy\b|"
    r"\bswitched to\b|\bupgraded to\b|\bplay on\b",
    re.I,
)
_DEVICE_VERB = re.compile(
    r"用|买了|换了|入手|换成|下单|\buse\b|\busing\b|\bbought\b|\bgot\b|\bown\b|\bswitched to\b", re.I
)
_DEVICE_NOUN = re.compile(
    r"手机|电脑|笔记本|平板|手表|\bphone\b|\blaptop\b|\btablet\b|\bwatch\b|\bnotebook\b", re.I
)
# device keys that are also a company's name ("我在华为上班" says nothing of a phone)
_COMPANY_DEVICES = frozenset(
    {"huawei", "xiaomi", "samsung", "oneplus", "oppo", "vivo", "lenovo", "dell", "garmin"}
)
# "my favourite book is …", "我最爱的电影是…": the kind is no liking of its own (the value after it is)
_FAVOURITE_KIND = re.compile(
    r"(?:最喜欢|最爱)的[\u4e00-\u9fff]{1,4}?(?=是|叫|要数|$)|\bfavou?rite [a-z]+(?: [a-z]+)?(?= is| are|$)",
    re.I,
)
# the user's own animal, said in passing ("我家狗叫豆豆", "I love hiking with my dog")
_MY_PET = re.compile(
    r"(?:我家|我们家|我的)(?:里)?(?:有|养了?|的)?(?:[一两二三四五六七八九十几\d]+[只条个])?小?"
    r"(?P<zh>狗狗|狗|猫咪|猫|兔子|仓鼠|鹦鹉|乌龟)|"
    r"\bmy (?:(?:little|old|new|sweet|lazy|big|two|three|rescue)\s+)?(?P<en>dog|cat|puppy|kitten|rabbit|bunny|"
    r"hamster|parrot|turtle|tortoise)s?\b",
    re.I,
)
_PET_KIND = {
    "狗狗": "dog",
    "狗": "dog",
    "猫咪": "cat",
    "猫": "cat",
    "puppy": "dog",
    "kitten": "cat",
    "bunny": "rabbit",
}
# a diet the user says they keep ("I've been vegan for two years", "我是素食者")
_DIET_WORDS = ("vegetarian", "vegan", "pescatarian", "吃素", "素食")
_CLAIMS: Mapping[str, str] = {
    "job": "occupation",
    "employer": "employer",
    "residence": "home",
    "diet": "diet",
}
_VAGUE = re.compile(r"^(?:一家|一个|一所|某|a |an |some |the )", re.I)
_ZH_JOB_FALLBACK = re.compile(
    r"^我(?:现在|目前|也|还)?是(?:一名|一个|一位|个|名)?(?P<v>[\u4e00-\u9fff]{1,6}?(?:师|员|医|工|家|匠|手|官|警))"
    r"(?:了|的|$)"
)
# "I've been a software engineer at Spotify", "I'm a nurse at a children's hospital"
_EN_JOB_AT = re.compile(
    rf"\bI(?:'m| am|'ve been| have been) (?:a|an) (?P<v>(?:[\w-]+ ){{0,2}}?(?:{EN_OCCUPATIONS}))\b"
    r"(?: at (?P<o>(?-i:[A-Z])[\w&'.-]*(?: (?-i:[A-Z])[\w&'.-]*){0,3}|(?:a|an|the) (?:[\w'-]+ ){0,2}[\w'-]+))?",
    re.I,
)
# what follows the workplace: "a ramen place downtown", "a clinic in Leeds"
_AFTER_WORKPLACE = re.compile(
    r"\s+(?:in|near|on|for|since|downtown|nearby|here|there|now|at|with|and|but|as|by|across|outside)\b.*$",
    re.I,
)
_OCCUPATION_HEAD = re.compile(rf"(?:{EN_OCCUPATIONS})\b|{ZH_OCCUPATIONS}", re.I)


def _spelling_re(category: str) -> tuple[re.Pattern[str], dict[str, str]]:
    """One pattern for every spelling of `category` (longest first: "apple watch" before "watch"; a
    Latin one as a whole word) and the key of each spelling (lower case)."""
    keys = {s.lower(): key for key, (_, _, ss) in _VALUES[category].items() for s in ss}
    alternatives = [
        re.escape(s) if _CJK.search(s) else rf"(?<![a-z]){re.escape(s)}(?![a-z])"
        for s in sorted(keys, key=len, reverse=True)
    ]
    return re.compile("|".join(alternatives), re.I), keys


_SPELLINGS = {category: _spelling_re(category) for category in _VALUES}


def _lexicon_hits(category: str, sentence: str) -> list[tuple[str, str]]:
    """(key, words as said) of every value of `category` the sentence spells, in the sentence's order (a
    longer spelling over the shorter ones inside it: "apple watch", not "watch")."""
    pattern, keys = _SPELLINGS[category]
    out: dict[str, str] = {}
    for m in pattern.finditer(sentence):
        out.setdefault(keys[m.group(0).lower()], m.group(0))
    return list(out.items())


def _original(value: str, text: str) -> str:
    """`value` (a claim's lower-cased value) as `text` spells it ("siemens" → "Siemens")."""
    if _CJK.search(value):
        return value
    found = re.search(re.escape(value), text, re.I)
    return found.group(0) if found else value


def _claimed(claim: str, value: str, st: Statement, weight: float) -> tuple[str, str, str, float] | None:
    """(category, key, value as said, confidence) of a claim the write path read in the user's clause,
    if its value is one of the category's: a job is an occupation ("teach math" is a teacher), a home a
    place, a pet an animal the user has, a favourite a preference of the lexicon ("my favourite book
    is …" is a title, "my favourite colour" a colour, "我的新车是白色的" a car: none is a preference or a
    device); a phone number, a car, a school and the rest are no category of the profile."""
    if claim.startswith("pet:"):
        kind = claim.removeprefix("pet:")
        if value in ("", "0"):
            return None
        return "pet", value_key("pet", kind), kind, weight
    if claim.startswith("favourite:"):
        key = value_key("preference", value)
        if key not in _VALUES["preference"]:
            return None
        return "preference", key, _original(value, st.text), weight
    category = _CLAIMS.get(claim)
    if category is None:
        return None
    if not value:
        return category, "", "", weight  # it ended ("我不当老师了", "I no longer live in Hangzhou")
    said = _original(value, st.text)
    if re.search(r"\d", value):
        return None
    if category == "occupation":
        key = value_key(category, value)
        if key in _VALUES["occupation"]:
            return category, key, said, weight
        if re.match(r"teach\b|教", value):
            return category, "teacher", said, weight
        if _OCCUPATION_HEAD.search(value) or value.startswith(("runs ", "开", "driver:")):
            return category, key, said, weight - 0.05
        return None
    if category == "home":
        key = value_key(category, value)
        if key in _VALUES["home"]:
            return category, key, said, weight
        proper = not _CJK.search(value) and said[:1].isupper()
        if proper or ZH_PLACE_SUFFIX.search(value):
            return category, key, said, min(weight, LOOSER)
        # "我在上海定居好几年了": the claim took the wrong words; the place the clause names is the home
        places = _lexicon_hits("home", st.text)
        if len(places) == 1:
            return category, places[0][0], places[0][1], weight - 0.05
        return None
    if category == "employer":
        if value.lower() in PLACE_OF:
            return None  # "我在成都工作": where, not for whom
        if _VAGUE.search(said) or (not _CJK.search(value) and not said[:1].isupper()):
            return category, value_key(category, value), said, min(weight, LOOSER)
        return category, value_key(category, value), said, weight
    if category == "diet":
        key = value_key(category, value)
        if key == "meat":  # eating meat again ends a vegetarian diet
            return category, "", "", weight
        return category, key, said, weight
    return None


def _family_mentions(
    extraction: Extraction, said: Sequence[Statement], weight_of: Callable[[Statement], float]
) -> list[tuple[str, str, float]]:
    """(role, as said, confidence) of the user's family the message names as what is so: not asked
    ("我妹妹叫什么名字？"), wished ("要是我有个哥哥"), nor had by no one ("I don't have my sister's …")."""
    names = {e.id: e.name for e in extraction.entities}
    role_of = {person: kin for kin, person in extraction.aliases}
    out: list[tuple[str, str, float]] = []
    for r in extraction.relations:
        if r.relation != "family" or r.object != ME:
            continue
        kin = r.subject if r.subject.startswith("kin:") else role_of.get(r.subject, "")
        if not kin:
            continue
        labels = [names.get(r.subject, ""), names.get(kin, "")]
        labels = [label for label in labels if label]
        best = 0.0
        for st in said:
            if st.question or st.conditional or st.reported:
                continue
            low = st.text.lower()
            for label in labels:
                at = low.find(label.lower())
                if at < 0 or _NEGATION_BEFORE.search(st.text[:at]):
                    continue
                best = max(best, weight_of(st))
        if best:
            named = names.get(r.subject, "") if not r.subject.startswith("kin:") else ""
            out.append((kin.removeprefix("kin:"), named or names.get(kin, kin), best))
    return out


# a negation before a relative's mention: "我没有姐姐", "I don't have my sister's number"
_NEGATION_BEFORE = re.compile(r"没有|没|不是|\bno\b|\bnot\b|n't\b|\bnever\b|\bwithout\b", re.I)


def attributes_of(text: str, extraction: Extraction) -> tuple[Attribute, ...]:
    """What the user's own statement `text` says of them (zh + en), each with its confidence.
    `extraction` is the text's entities and relations (family members, the people it names).

    Only the user's own clauses stated as facts of the present count (speech.py): not another person's
    ("我老公…在一家设计院上班" is the husband's employer), not a question, a negation, a condition or a
    wish, someone's words or a quote, the past; a plan counts only as a goal ("我打算考注会")."""
    people = [e.name for e in extraction.entities if e.id.startswith("person:")]
    said = extraction.said or tuple(statements(text, people))
    found: dict[tuple[str, str], Attribute] = {}

    def add(category: str, key: str, value: str, confidence: float) -> None:
        prev = found.get((category, key))
        if prev is None or confidence > prev.confidence:
            found[(category, key)] = Attribute(category, key, value.strip(), round(confidence, 2))

    def weight_of(st: Statement) -> float:
        return STATED - (HEDGE if st.hedged else 0.0)

    for st in said:
        if not st.mine or st.question or st.conditional or st.reported or st.past:
            continue
        weight = weight_of(st)
        own = st.first_person()
        claimed: set[str] = set()
        if not st.intent:
            for claim, value in statement_claims(st):
                # a negated clause states an end ("I don't live in London anymore") or a negative
                # value ("I don't eat meat"), never the value it negates ("我不住在北京")
                if st.negated and value and not value.startswith("no "):
                    continue
                got = _claimed(claim, value, st, weight)
                if got is not None:
                    add(*got)
                    claimed.add(got[0])
            job = None
            if not st.negated:
                job = _ZH_JOB_FALLBACK.match(own) if st.zh else _EN_JOB_AT.search(own)
            if job is not None and "occupation" not in claimed:
                value = job.group("v")
                add("occupation", value_key("occupation", value), value, weight - 0.05)
            if job is not None and "o" in job.re.groupindex and job.group("o") and "employer" not in claimed:
                org = _AFTER_WORKPLACE.sub("", job.group("o"))
                named = org[:1].isupper()
                org = re.sub(r"^(?:a|an|the) ", "", org, flags=re.I)
                add("employer", value_key("employer", org), org, weight if named else min(weight, LOOSER))
        if st.negated:
            continue
        body = st.text
        if not st.intent:
            if "diet" not in claimed:
                for key, spelling in _lexicon_hits("diet", body):
                    if spelling.lower() in _DIET_WORDS:
                        add("diet", key, spelling, weight)
            for pet in _MY_PET.finditer(body):
                kind = (pet.group("zh") or pet.group("en")).lower()
                add("pet", value_key("pet", _PET_KIND.get(kind, kind)), kind, weight)
        if _GOAL_CUE.search(body):
            for key, spelling in _lexicon_hits("goal", body):
                add("goal", key, spelling, weight)
        if st.intent:
            continue
        liked = _NOT_PREFERRED_ZH.sub("", body) if st.zh else body
        cue = _PREFERENCE_CUE.search(liked)
        liked = _FAVOURITE_KIND.sub(lambda m: "＿" * len(m.group(0)), liked)
        if cue is not None:
            if not st.zh:
                liked = liked[: cue.end()] + _NOT_PREFERRED_EN.sub("", liked[cue.end() :])
            for key, spelling in _lexicon_hits("preference", liked):
                add("preference", key, spelling, weight)
        elif _HABIT_CUE.search(body):
            for key, spelling in _lexicon_hits("preference", body):
                add("preference", key, spelling, min(weight, HABIT))
        if _DEVICE_CUE.search(body):
            for key, spelling in _lexicon_hits("device", body):
                if key in _COMPANY_DEVICES and not (_DEVICE_NOUN.search(body) or _DEVICE_VERB.search(body)):
                    continue
                add("device", key, spelling, weight)
    for role, label, confidence in _family_mentions(extraction, said, weight_of):
        add("family", role, label, confidence)
    # one value of an exclusive category per memory: the surest one said (an end only without one)
    out: list[Attribute] = []
    for category in CATEGORIES:
        mine = [a for (c, _), a in found.items() if c == category]
        if category in EXCLUSIVE and len(mine) > 1:
            values = [a for a in mine if a.key]
            mine = [max(values, key=lambda a: a.confidence)] if values else mine[:1]
        out += mine
    return tuple(out)


@dataclass(slots=True)
class ProfileEntry:
    """One value of one category, with every memory that said it."""

    category: str
    key: str
    value: str  # as said most recently
    said_at: float  # first said
    memory_ids: list[str] = field(default_factory=list)
    valid_to: float | None = None  # when a newer value of an exclusive category was said
    # how sure the rules are that it holds, from every memory saying it: 1 - Π(1 - confidence)
    confidence: float = 0.0

    @property
    def tags(self) -> tuple[str, str]:
        return tags_of(self.category, self.key)


@dataclass(frozen=True, slots=True)
class Profile:
    current: tuple[ProfileEntry, ...]
    past: tuple[ProfileEntry, ...]

    @property
    def tags(self) -> list[str]:
        return [t for e in self.current for t in e.tags]

    def sure(self, min_confidence: float = PROFILE_MIN_CONFIDENCE) -> tuple[ProfileEntry, ...]:
        """The current entries from `min_confidence` up: what the chat prompt's profile block holds."""
        return tuple(e for e in self.current if e.confidence >= min_confidence)

    def compact(self, *, zh: bool, min_confidence: float = PROFILE_MIN_CONFIDENCE) -> str:
        """One line for a prompt: "职业：教师；目标：备考雅思" / "occupation: teacher; goal: ielts"; only
        the entries from `min_confidence` up (PROFILE_MIN_CONFIDENCE)."""
        parts: dict[str, list[str]] = {}
        for e in self.sure(min_confidence):
            zh_value, en_value, _ = _VALUES.get(e.category, {}).get(e.key, (e.value, e.value, ()))
            name = CATEGORIES[e.category] if zh else e.category
            parts.setdefault(name, []).append(zh_value if zh else en_value)
        sep, colon, comma = ("；", "：", "、") if zh else ("; ", ": ", ", ")
        return sep.join(f"{k}{colon}{comma.join(vs)}" for k, vs in parts.items())


def build_profile(said: Iterable[tuple[str, float, Sequence[Attribute]]]) -> Profile:
    """The profile from (memory id, said at, attributes) of every memory, in any order."""
    ordered = sorted(said, key=lambda t: (t[1], t[0]))
    entries: dict[tuple[str, str], ProfileEntry] = {}
    latest: dict[str, tuple[str, str]] = {}  # exclusive category -> its current entry
    past: list[ProfileEntry] = []
    for mid, at, attrs in ordered:
        for a in attrs:
            if a.category in EXCLUSIVE:
                prev = latest.get(a.category)
                if prev is not None and prev != (a.category, a.key):
                    ended = entries.pop(prev)
                    ended.valid_to = at
                    past.append(ended)
                    del latest[a.category]
                if not a.key:  # "我不当老师了": the current one ended, nothing new
                    continue
                latest[a.category] = (a.category, a.key)
            entry = entries.get((a.category, a.key))
            if entry is None:
                entry = entries[(a.category, a.key)] = ProfileEntry(a.category, a.key, a.value, at)
            entry.value = a.value or entry.value
            if mid not in entry.memory_ids:
                entry.memory_ids.append(mid)
                entry.confidence = round(1 - (1 - entry.confidence) * (1 - a.confidence), 3)
    order = list(CATEGORIES)
    current = sorted(entries.values(), key=lambda e: (order.index(e.category), e.said_at))
    return Profile(tuple(current), tuple(sorted(past, key=lambda e: (order.index(e.category), e.said_at))))


def tagged(said: Iterable[tuple[str, Sequence[Attribute]]], wanted: Sequence[tuple[str, str]]) -> set[str]:
    """The memories stating every (category, key) in `wanted` (AND; a tag's zh and en forms are one)."""
    want = set(wanted)
    return {mid for mid, attrs in said if want <= {(a.category, a.key) for a in attrs}}


__all__ = [
    "CATEGORIES",
    "EXCLUSIVE",
    "LEGACY_CONFIDENCE",
    "PROFILE_MIN_CONFIDENCE",
    "TAG_RULE",
    "Attribute",
    "Profile",
    "ProfileEntry",
    "attributes_of",
    "build_profile",
    "parse_tag",
    "tagged",
    "tags_of",
    "value_key",
]
