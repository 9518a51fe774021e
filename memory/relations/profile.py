"""The user's own entity: their profile. Pure.

What the user says of themself (never what the assistant said) gives attributes in a few categories,
each with a tag in Chinese and in English that list and search filter on: occupation (`#职业_教师` /
`#occupation_teacher`), employer, home, family, goal (`#目标_备考雅思` / `#goal_ielts`), preference,
device, diet and pet. A value the lexicon knows has one key in both languages (老师 = 教师 = teacher); one
it does not know is its own key, as said (`#职业_welder`). Occupation, employer, home and diet hold one
value at a time: the newest said is current and the earlier ones are past (`valid_to`, when the next was
said); the other categories accumulate.

Each memory's attributes are kept with its relation record (graph.Record.attrs), so forgetting the memory
forgets what it taught of the profile, as for every entity and relation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memory.relations.extract import ME, Extraction
from memory.relations.lexicon import KIN, PLACE_OF, PLACES
from memory.write.supersession import claims_of

# category -> its Chinese name (the English name is the key)
CATEGORIES: Mapping[str, str] = {
    "occupation": "职业",
    "employer": "工作单位",
    "home": "居住地",
    "family": "家人",
    "goal": "目标",
    "preference": "喜好",
    "device": "设备",
    "diet": "饮食",
    "pet": "宠物",
}
CATEGORY_OF: Mapping[str, str] = {**{v: k for k, v in CATEGORIES.items()}, **{k: k for k in CATEGORIES}}
EXCLUSIVE = frozenset({"occupation", "employer", "home", "diet"})  # one current value at a time

# category -> value key -> (Chinese tag value, English tag value, other spellings)
_VALUES: dict[str, dict[str, tuple[str, str, tuple[str, ...]]]] = {
    "occupation": {
        "teacher": ("教师", "teacher", ("老师", "教员", "teacher", "tutor")),
        "nurse": ("护士", "nurse", ("nurse",)),
        "doctor": ("医生", "doctor", ("大夫", "doctor", "physician")),
        "programmer": ("程序员", "programmer", ("码农", "developer", "software engineer", "programmer")),
        "engineer": ("工程师", "engineer", ("engineer",)),
        "lawyer": ("律师", "lawyer", ("lawyer", "attorney")),
        "accountant": ("会计", "accountant", ("会计师", "accountant")),
        "designer": ("设计师", "designer", ("designer",)),
        "student": ("学生", "student", ("研究生", "大学生", "博士生", "student")),
        "driver": ("司机", "driver", ("driver",)),
        "chef": ("厨师", "chef", ("chef", "cook")),
        "journalist": ("记者", "journalist", ("reporter", "journalist")),
        "product_manager": ("产品经理", "product-manager", ("product manager",)),
        "researcher": ("研究员", "researcher", ("researcher", "scientist")),
    },
    "goal": {
        "ielts": ("备考雅思", "ielts", ("雅思", "ielts")),
        "toefl": ("备考托福", "toefl", ("托福", "toefl")),
        "gre": ("备考GRE", "gre", ("gre",)),
        "kaoyan": ("考研", "kaoyan", ("考研", "postgraduate entrance exam", "grad school exam")),
        "cpa": ("备考注会", "cpa", ("注会", "注册会计师", "cpa")),
        "driving_licence": (
            "考驾照",
            "driving-licence",
            ("驾照", "driving test", "driver's license", "driving licence", "driving license"),
        ),
        "lose_weight": ("减肥", "lose-weight", ("减肥", "减重", "lose weight", "losing weight")),
        "marathon": ("跑马拉松", "marathon", ("马拉松", "marathon")),
        "japanese": ("学日语", "japanese", ("日语", "japanese")),
    },
    "preference": {
        "coffee": ("咖啡", "coffee", ("咖啡", "coffee")),
        "tea": ("茶", "tea", ("喝茶", "tea")),
        "hiking": ("徒步", "hiking", ("徒步", "爬山", "hiking", "hike")),
        "running": ("跑步", "running", ("跑步", "running", "jogging")),
        "reading": ("读书", "reading", ("读书", "看书", "阅读", "reading")),
        "cooking": ("做饭", "cooking", ("做饭", "烹饪", "cooking")),
        "travel": ("旅行", "travel", ("旅行", "旅游", "travel", "travelling", "traveling")),
        "swimming": ("游泳", "swimming", ("游泳", "swimming")),
        "photography": ("摄影", "photography", ("摄影", "拍照", "photography")),
        "movies": ("电影", "movies", ("电影", "movies", "films")),
        "yoga": ("瑜伽", "yoga", ("瑜伽", "yoga")),
        "basketball": ("篮球", "basketball", ("篮球", "basketball")),
        "games": ("游戏", "games", ("游戏", "video games", "gaming")),
    },
    "device": {
        "iphone": ("iPhone", "iphone", ("苹果手机", "iphone")),
        "ipad": ("iPad", "ipad", ("ipad",)),
        "macbook": ("MacBook", "macbook", ("macbook", "苹果电脑")),
        "pixel": ("Pixel", "pixel", ("pixel",)),
        "huawei": ("华为手机", "huawei", ("华为", "huawei")),
        "xiaomi": ("小米手机", "xiaomi", ("小米", "xiaomi")),
        "kindle": ("Kindle", "kindle", ("kindle",)),
        "switch": ("Switch", "switch", ("nintendo switch",)),
        "thinkpad": ("ThinkPad", "thinkpad", ("thinkpad",)),
        "apple_watch": ("苹果手表", "apple-watch", ("apple watch", "苹果手表")),
    },
    "diet": {
        "vegetarian": ("素食", "vegetarian", ("素食", "吃素", "vegetarian")),
        "vegan": ("纯素", "vegan", ("vegan",)),
    },
    "pet": {
        "dog": ("狗", "dog", ("狗", "dog")),
        "cat": ("猫", "cat", ("猫", "cat")),
    },
    "home": {key: (spellings[0], key, spellings) for key, spellings in PLACES.items()},
    "family": {
        role: (zh[0] if zh else ("姐妹" if role == "sister" else "兄弟"), role.replace("_", "-"), (*zh, *en))
        for role, (zh, en) in KIN.items()
    },
}
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _norm(value: str) -> str:
    """An unknown value's key and tag form: lower case, runs of spaces, '#' and '_' as one '-'."""
    return re.sub(r"[\s#_,，、]+", "-", value.strip().lower()).strip("-")[:40]


def _spelled(spelling: str, text: str) -> bool:
    if _CJK.search(spelling):
        return spelling in text
    return re.search(rf"(?<![a-z]){re.escape(spelling.lower())}(?![a-z])", text.lower()) is not None


def value_key(category: str, value: str) -> str:
    """The key of `value` in `category`: the lexicon entry it spells (老师 → teacher), else the value."""
    low = value.strip().lower()
    values = _VALUES.get(category, {})
    for key, (zh, en, spellings) in values.items():
        if low in (zh.lower(), en, key) or low in spellings:
            return key
    if category == "home" and low in PLACE_OF:
        return PLACE_OF[low]
    # the longest spelling found inside it: 小学老师 → teacher, "high school teacher" → teacher
    found = [
        (len(s), key) for key, (_, _, spellings) in values.items() for s in spellings if _spelled(s, low)
    ]
    return max(found)[1] if found else _norm(value)


def tags_of(category: str, key: str) -> tuple[str, str]:
    """(the Chinese tag, the English tag): ("#职业_教师", "#occupation_teacher")."""
    zh, en, _ = _VALUES.get(category, {}).get(key, (key, key, ()))
    return f"#{CATEGORIES[category]}_{_norm(zh)}", f"#{category}_{_norm(en)}"


TAG_MAX_CHARS = 64
TAG_RULE = (
    "a tag is '#<category>_<value>' with a category in Chinese or English "
    f"({', '.join(f'{zh}/{en}' for en, zh in CATEGORIES.items())}), at most {TAG_MAX_CHARS} characters "
    "(标签格式为 #类别_值，例如 #职业_教师 或 #occupation_teacher)"
)
_TAG_RE = re.compile(r"#([^\s_#]{1,12})_([^\s#\x00-\x1f\x7f]{1,50})")


def parse_tag(tag: str) -> tuple[str, str]:
    """(category, value key) of a tag in either language: "#职业_教师" and "#occupation_teacher" are both
    ("occupation", "teacher"). Raises ValueError (with the rule, zh and en) for anything else."""
    found = _TAG_RE.fullmatch(tag) if len(tag) <= TAG_MAX_CHARS else None
    category = CATEGORY_OF.get(found.group(1).lower()) if found else None
    if found is None or category is None:
        raise ValueError(TAG_RULE)
    key = value_key(category, found.group(2))
    if not key:
        raise ValueError(TAG_RULE)
    return category, key


@dataclass(frozen=True, slots=True)
class Attribute:
    """One thing a memory says of the user: ("occupation", "teacher", "小学老师")."""

    category: str
    key: str  # the value's key ("" for an attribute that ended: "我不当老师了")
    value: str  # as said


_FIRST_PERSON = re.compile(r"我|\bI\b|\bI'm\b|\bmy\b", re.I)
_NEGATED = re.compile(
    r"不喜欢|不爱|讨厌|没有|不再|不想|\bdon't\b|\bdo not\b|\bhate\b|\bnever\b|\bno longer\b", re.I
)
_QUESTION = re.compile(r"[?？]\s*$|吗[。]?$")
_GOAL_CUE = re.compile(
    r"备考|准备|在考|要考|想考|报了|报名|目标|计划|打算|争取|正在学|在学|想学|"
    r"\bpreparing\b|\bprepare\b|\bstudying for\b|\bgoal\b|\bplan(?:ning)? to\b|\bwant to\b|\btrying to\b|"
    r"\bsigned up\b|\btaking\b",
    re.I,
)
_PREFERENCE_CUE = re.compile(
    r"喜欢|爱(?:喝|吃|看|玩|打)|热爱|偏爱|迷上|\blove\b|\blike\b|\benjoy\b|\bprefer\b|\binto\b|\bfan of\b",
    re.I,
)
_DEVICE_CUE = re.compile(
    r"用|买了|换了|入手|我的|\buse\b|\busing\b|\bbought\b|\bgot\b|\bhave\b|\bmy\b|\bswitched to\b", re.I
)
_SENTENCE = re.compile(r"[^。！？!?.;；\n]+[。！？!?.;；]?")
_CLAIMS: Mapping[str, str] = {
    "job": "occupation",
    "employer": "employer",
    "residence": "home",
    "diet": "diet",
    "phone": "device",
    "car": "device",
}


def _as_said(spelling: str, text: str) -> str | None:
    """The words of `text` that spell `spelling` (its case kept: "iPhone"), or None."""
    if _CJK.search(spelling):
        return spelling if spelling in text else None
    found = re.search(rf"(?<![a-z]){re.escape(spelling)}(?![a-z])", text, re.I)
    return found.group(0) if found else None


def _lexicon_hits(category: str, sentence: str) -> list[tuple[str, str]]:
    """(key, words as said) of every value of `category` the sentence spells, longest spelling first."""
    out: dict[str, str] = {}
    spellings = sorted(
        ((s, key) for key, (_, _, ss) in _VALUES[category].items() for s in ss), key=lambda p: -len(p[0])
    )
    taken: list[str] = []
    for spelling, key in spellings:
        said = _as_said(spelling, sentence)
        if said is not None and not any(spelling in t for t in taken):
            out.setdefault(key, said)
            taken.append(spelling)
    return list(out.items())


def attributes_of(text: str, extraction: Extraction) -> tuple[Attribute, ...]:
    """What the user's own statement `text` says of them (zh + en). `extraction` is the text's entities
    and relations (family members come from it)."""
    found: dict[tuple[str, str], Attribute] = {}

    def add(category: str, key: str, value: str) -> None:
        found.setdefault((category, key), Attribute(category, key, value.strip()))

    for claim, value in claims_of(text):
        category = _CLAIMS.get(claim)
        if claim.startswith("favourite:") and value:
            add("preference", value_key("preference", value), value)
        elif claim.startswith("pet:"):
            kind = claim.removeprefix("pet:")
            add("pet", value_key("pet", kind), kind)
        elif category is not None:
            add(category, value_key(category, value) if value else "", value)
    for sentence in _SENTENCE.findall(text):
        if not _FIRST_PERSON.search(sentence) or _QUESTION.search(sentence.strip()):
            continue
        negated = _NEGATED.search(sentence) is not None
        if _GOAL_CUE.search(sentence) and not negated:
            for key, spelling in _lexicon_hits("goal", sentence):
                add("goal", key, spelling)
        if _PREFERENCE_CUE.search(sentence) and not negated:
            for key, spelling in _lexicon_hits("preference", sentence):
                add("preference", key, spelling)
        if _DEVICE_CUE.search(sentence):
            for key, spelling in _lexicon_hits("device", sentence):
                add("device", key, spelling)
    names = {e.id: e.name for e in extraction.entities}
    role_of = {person: kin for kin, person in extraction.aliases}
    for r in extraction.relations:
        if r.relation == "family" and r.object == ME:
            kin = r.subject if r.subject.startswith("kin:") else role_of.get(r.subject, "")
            if kin:
                named = names.get(r.subject, "") if not r.subject.startswith("kin:") else ""
                add("family", kin.removeprefix("kin:"), named or names.get(kin, kin))
    return tuple(found.values())


@dataclass(slots=True)
class ProfileEntry:
    """One value of one category, with every memory that said it."""

    category: str
    key: str
    value: str  # as said most recently
    said_at: float  # first said
    memory_ids: list[str] = field(default_factory=list)
    valid_to: float | None = None  # when a newer value of an exclusive category was said

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

    def compact(self, *, zh: bool) -> str:
        """One line for a prompt: "职业：教师；目标：备考雅思" / "occupation: teacher; goal: ielts"."""
        parts: dict[str, list[str]] = {}
        for e in self.current:
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
