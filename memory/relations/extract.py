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
    BRANDS,
    DOC_KINDS,
    GIVEN_NAMES,
    KIN,
    NAME_WORDS,
    NOT_PERSON_WORDS,
    ORG_WORDS,
    PLACE_OF,
    PLACE_WORDS,
    PLACES,
    SOCIAL,
    SURNAMES,
    ZH_PLACE_SUFFIX,
    word_set,
    zh_words_led_by_surname,
)
from memory.relations.speech import OTHER, Statement, statements
from memory.text.cleaning import split_sentences
from memory.text.lexicons import EN_OCCUPATIONS
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


_CJK = re.compile(r"[\u4e00-\u9fff]")


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


_DOC_ID_RE = re.compile(r"(?<![A-Za-z0-9-])([A-Z]{1,5}-?\d{2,}(?:-\d+)*|[A-Z]{1,5}\d+[A-Z]?)(?![A-Za-z0-9-])")
_DOC_NUM_RE = re.compile(
    r"(?:订单|合同|报价单?|发票|工单|申请)(?:编号|号码|号)?[是为:：\s#]*(\d{4,20})|"
    r"\b(?:order|contract|quote|quotation|invoice|ticket|application)\s*(?:no\.?|number|#)?\s*[:#]?\s*(\d{4,20})\b",
    re.I,
)
# a long bare number is an id too ("880141这单显示已经在派送了", "Tracking says 880141 is out"): not an amount
# (a currency or unit next to it), a decimal or a time
_BARE_ID_RE = re.compile(
    r"(?<![\d.,:/$¥€£#-])(\d{6,20})(?![\d.,:/%])(?!\s?(?:元|块|円|美元|万|千|百|km|kg|dollars?\b|yuan\b|rmb\b|usd\b))",
    re.I,
)
_EN_PLACE_RE = re.compile(
    r"\b("
    + "|".join(sorted((re.escape(s) for s in PLACE_OF if not _CJK.search(s)), key=len, reverse=True))
    + r")\b",
    re.I,
)
_ZH_PLACE_RE = re.compile("|".join(sorted((s for s in PLACE_OF if _CJK.search(s)), key=len, reverse=True)))
_ORG_EN_RE = re.compile(
    r"\b((?:[A-Z][\w&'-]*\s){0,3}(?:Inc|Ltd|Corp|Bank|Group|Company|Labs|Technologies|Studio|Agency|Foundation))\b"
)
_ORG_ZH_RE = re.compile(r"([\u4e00-\u9fffA-Za-z]{2,8}?(?:公司|集团|银行|研究院|事务所|工作室))")
_EVENTS: dict[str, tuple[str, ...]] = {
    "wedding": ("婚礼", "wedding"),
    "birthday": ("生日", "birthday"),
    "interview": ("面试", "interview"),
    "graduation": ("毕业典礼", "graduation"),
    "concert": ("演唱会", "concert"),
    "conference": ("大会", "研讨会", "conference"),
}
_NAME = r"(?-i:(?P<n>[A-Z][a-z]{1,15}(?: [A-Z][a-z]{1,15})?))(?![A-Za-z])"
_ZH_NAME_BAD_START = set("说在去住买是和也给要刚昨今上下明我你他她的了很最都还就又一这那有没不把被跟从对")
_ZH_NAME_AFTER = (
    r"(?=推荐|说|在|去|住|买|是|和|也|给|要|刚|昨天|今天|上周|下周|明天|帮|请|送|做|[，,。.！!？?\s]|$)"
)
# a Chinese name right after a role: after 叫 ("我妈叫王芳"), or two characters led by a common surname or
# 小/阿 ("我朋友李雷推荐…", "我同事小王说…"); "我妈肯定要…" names no one "肯定"
_SURNAMES = SURNAMES
# two characters that start with a surname but are words, not names ("卫生在…", "岳父说…": kin is its own rule)
_ZH_NAME_WORDS = "小时|小心|小区|阿姨|卫生|卫星|卫衣|卫视|施工|童年|童话|童装|洪水|岳父|岳母|霍乱"
_ZH_NAME = (
    r"(?:叫|名叫)?\s?(?-i:(?P<n>[A-Z][a-z]{1,15}(?![A-Za-z])|(?:(?:(?<=叫)|(?<=叫\s))[\u4e00-\u9fff]{2}|"
    rf"(?!{_ZH_NAME_WORDS})[{_SURNAMES}小阿][\u4e00-\u9fff]){_ZH_NAME_AFTER}))"
)
_NOT_NAMES = frozenset(
    [
        "I",
        "The",
        "A",
        "An",
        "My",
        "Our",
        "Your",
        "His",
        "Her",
        "Their",
        "This",
        "That",
        "It",
        "We",
        "You",
        "He",
        "She",
        "They",
        "Mom",
        "Dad",
        "Mum",
        "Today",
        "Yesterday",
        "Tomorrow",
        "Monday",
        "Tuesday",
        "Wednesday",
        "Thursday",
        "Friday",
        "Saturday",
        "Sunday",
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
        "Chinese",
        "English",
        "Quote",
        "Contract",
        "Order",
        "Invoice",
        "Ticket",
        "Application",
        "Just",
        "Also",
        "Please",
        "Remember",
        "Yes",
        "No",
        "Ok",
        "Okay",
        "Thanks",
        "Hi",
        "Hello",
        "Hey",
        "Last",
        "Next",
        "Went",
        "Got",
        "Met",
        "Bought",
        "Sorry",
        "Well",
        "So",
        "And",
        "But",
        "Oh",
        "Wow",
        "Great",
        "Good",
        "Nice",
        "Maybe",
        "Still",
        "Since",
        "After",
        "Before",
        "When",
        "What",
        "Where",
        "Who",
        "Why",
        "How",
        "Which",
        "There",
        "Here",
        "Then",
    ]
)


def _kin_rules() -> list[tuple[str, re.Pattern[str]]]:
    """(role, pattern) per family role, zh then en; a pattern's group `n` is the person's name if said."""
    rules: list[tuple[str, re.Pattern[str]]] = []
    for role, (zh, en) in KIN.items():
        long_zh = [w for w in zh if len(w) > 1 and not w.startswith("我")]
        short_zh = [w for w in zh if len(w) == 1]
        own = [w.removeprefix("我") for w in zh if w.startswith("我")]
        zh_alt = "|".join(sorted(long_zh, key=len, reverse=True))
        must_me = "|".join(sorted(set(short_zh + own), key=len, reverse=True))
        if zh_alt:
            rules.append((role, re.compile(rf"(?:我的?)?(?:{zh_alt})(?:{_ZH_NAME})?")))
        if must_me:  # 我妈, 我姐: a one-character role only after 我
            rules.append((role, re.compile(rf"我的?(?:{must_me})(?![妈爸姐妹哥弟])(?:{_ZH_NAME})?")))
        en_alt = "|".join(sorted(en, key=len, reverse=True))
        rules.append(
            (
                role,
                re.compile(
                    rf"\bmy (?:{en_alt})(?![\w-])(?:(?:,|'s name is| is called| is named| named| called)? {_NAME})?",
                    re.I,
                ),
            )
        )
        rules.append((role, re.compile(rf"\b{_NAME},? (?:is )?my (?:{en_alt})\b")))
        if zh_alt or must_me:  # "Leo是我哥哥", "王芳是我妈妈": a name, then 是 and the role
            roles = "|".join(sorted({*long_zh, *short_zh, *own}, key=len, reverse=True))
            rules.append(
                (
                    role,
                    re.compile(
                        rf"(?:^|(?<=[，,。.！!？?\s]))(?-i:(?P<n>[A-Z][a-z]{{1,15}}|[\u4e00-\u9fff]{{2,3}}))是我的?(?:{roles})"
                    ),
                )
            )
    return rules


_KIN_LABEL_CUT = re.compile(
    r"^[,\s]*(?:is\s+)?(?:是)?|[\s,]*(?:叫|名叫|'s name is|is called|is named|named|called)?[\s,]*$", re.I
)


def _kin_label(m: re.Match[str]) -> str:
    """The role as said, without the name: "我妹妹", "my sister"."""
    text = m.group(0)
    if m.group("n"):
        text = text[: m.start("n") - m.start()] + text[m.end("n") - m.start() :]
    return _KIN_LABEL_CUT.sub("", text) or text


_KIN_RULES = _kin_rules()
_SOCIAL_RULES = [
    (
        rel,
        re.compile(
            rf"(?:我的?(?:{'|'.join(zh)})(?:{_ZH_NAME.replace('?P<n>', '')}))|"
            rf"(?:\b(?i:my) (?:(?:best|good|old|close) )?(?:{'|'.join(en)})s?,? {_NAME.replace('?P<n>', '')})|"
            rf"(?:\b{_NAME.replace('?P<n>', '')},? (?:is )?(?:a |my )(?:(?:best|good|old|close) )?(?:{'|'.join(en)}) of mine)",
        ),
    )
    for rel, (zh, en) in SOCIAL.items()
]

_STATUS: list[tuple[str, re.Pattern[str]]] = [
    (
        "rejected",
        re.compile(
            r"驳回|被拒|拒绝了|没通过|未通过|没批|被退回|\brejected\b|\bdeclined\b|\bturned down\b", re.I
        ),
    ),
    (
        "approved",
        re.compile(
            r"审批通过|审核通过|批准|批下来|批了|通过了|已通过|\bapproved\b|\bsigned off\b|\baccepted\b", re.I
        ),
    ),
    (
        "pending",
        re.compile(
            r"审批中|审核中|待审批|待审核|还在审|在走流程|\bpending\b|\bunder review\b|\bawaiting approval\b",
            re.I,
        ),
    ),
]
_SUBMITTED = re.compile(
    r"提交|递交|交了|交上|报上去|发出|\bsubmitted\b|\bsent (?:in|off|out)\b|\bfiled\b|\bhanded in\b", re.I
)
_SIGNED = re.compile(r"签了|签订|签署|签约|\bsigned\b(?! off)", re.I)
_FIRST_PERSON = re.compile(r"我|\bI\b|\bwe\b|我们", re.I)
_MET = re.compile(
    r"认识了?|遇到了?|遇见了?|碰到了?|结识了?|\bmet\b|\bran into\b|\b(?:got|get|gotten|getting) to know\b|"
    r"\bbefriended\b|\bmade friends with\b",
    re.I,
)
_RECOMMEND_EN = re.compile(
    r"\b(?:recommend(?:ed|s)?|suggest(?:ed|s)?|(?:told|tells) (?:me|us) (?:I|we) (?:should|must) (?:try|read|watch|see|visit)"
    r"|swear(?:s|ed)? by) (?:me |us |to me )?(?:the |a |an |this |that )?"
    r"(?:(?:book|film|movie|show|series|app|restaurant|cafe|café|game|album|podcast|novel|place|hotel|bar|shop"
    r"|bookshop|bookstore|documentary) )?"
    r"(?:(?:called|named) |\w+ (?:called|named) )?(?P<p>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3})|[a-z][\w'-]*)"
)
_RECOMMEND_ZH = re.compile(
    r"(?:推荐|安利|种草|力荐|(?:说)?一定要(?:试试|去|看看|读读))(?:了|给我|我|过)*(?:一(?:本|家|部|款|个|首|台|双))?"
    r"(?:书|电影|餐厅)?(?:叫|名叫)?(?P<p>[^，。！？,.!?\s的]{1,10})"
)
_BOUGHT_EN = re.compile(
    r"\bI (?:just |finally )?(?:bought|purchased|ordered) (?:a |an |the |my |some )?(?:new )?"
    r"(?P<p>(?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2})|[a-z][\w'-]*)",
    re.I,
)
_BOUGHT_ZH = re.compile(
    r"我(?:刚|已经|终于)?(?:买了|入手了|下单了)(?:一(?:台|个|部|辆|双|本|件|款))?(?:新的?)?(?P<p>[^，。！？,.!?\s的]{1,8})"
)
_VISITED = re.compile(r"去了|去过|到了|\bwent to\b|\bvisited\b|\btravel(?:l)?ed to\b|\bflew to\b", re.I)
_PERSON_NEXT = re.compile(
    r"(?:'s\b| (?:and|said|says|told|tells|is|was|recommended|recommends|suggested|lives|lived|works|worked|went|"
    r"gave|called|texted|sent|loves|likes|has|had|will|just|got|asked|moved|met|bought|invited|wants|needs|"
    r"takes|took|flies|flew|drove|drives|came|comes|left|leaves|goes|made|makes|found|finds|thinks|thought|"
    r"swears|hates|prefers|adores|insists|reckons|knows|keeps|plays|writes|cooks|sings|suggests|"
    r"(?-i:[a-z]{2,}ed)|(?-i:[a-z]{2,}ly (?:[a-z]+s|[a-z]{2,}ed)))\b)"  # a verb in the past ("Maya booked a
    # hotel"), or an adverb and a verb ("Hana highly recommends"): a name before it is someone's
)
# a person named only as whose relative or friend someone is ("the cousin of Noah", "Noah's cousin",
# "Noah的表哥"): the one met or spoken of is that other person, not the one named
_ROLE_EN = (
    r"(?:cousin|uncle|aunt|nephew|niece|friend|colleague|coworker|boss|neighbou?r|classmate|roommate|partner|"
    r"sister|brother|mother|mom|mum|father|dad|son|daughter|wife|husband|boyfriend|girlfriend|"
    r"grandma|grandmother|grandpa|grandfather|kid|child|children|parents?)s?"
)
_ROLE_ZH = (
    r"(?:表哥|表姐|表妹|表弟|堂哥|堂姐|堂妹|堂弟|叔叔|阿姨|舅舅|姑姑|侄子|侄女|外甥|朋友|同事|老板|邻居|同学|室友|"
    r"姐姐|妹妹|哥哥|弟弟|妈妈|爸爸|母亲|父亲|老婆|老公|妻子|丈夫|儿子|女儿|孩子|男朋友|女朋友|爷爷|奶奶|外公|外婆)"
)
_OF_ROLE_BEFORE = re.compile(rf"\b{_ROLE_EN} of (?:the |my )?$", re.I)
_ROLE_AFTER = re.compile(rf"(?:'s\s+(?:\w+\s+)?{_ROLE_EN}\b|\s?的{_ROLE_ZH})", re.I)
_CALLED = re.compile(r"\b(?:called|named) (?-i:[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,3})", re.I)
_PRODUCT_STOP = re.compile(r"(?:了|吧|呢|啊|给我|一下|昨天|今天|上周)$")
_EN_PRODUCT_STOP = frozenset(
    [
        "it",
        "that",
        "this",
        "them",
        "me",
        "us",
        "you",
        "to",
        "for",
        "a",
        "an",
        "the",
        "yesterday",
        "today",
        "tonight",
        "last",
        "week",
        "month",
        "year",
        "ago",
    ]
)


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


# --- proper names in Latin letters: a person only with a given name or a person's verb or role beside it
_LATIN_WORD_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9_'’&-]|\.(?=[A-Za-z0-9]))*")
_CONNECTORS = frozenset({"of", "the", "and", "de", "la", "du", "da", "van", "von", "der", "&"})
_DEVICE_WORDS = word_set(
    "pixel iphone ipad macbook thinkpad kindle switch playstation xbox galaxy surface airpods"
)
_TITLE_BEFORE = re.compile(
    r"\b(?:read|reading|reread|rereading|watched|watching|watch|saw|seen|listened to|listening to|listen to|"
    r"played|playing|finished|loved|book|novel|film|movie|show|series|song|album|podcast|documentary|game|"
    r"app|titled)\s+(?:the\s+|a\s+)?$",
    re.I,
)
_PLACE_BEFORE = re.compile(
    r"\b(?:in|to|near|around|visit|visited|visiting|toward|towards|across|through|into|outside)\s+(?:the\s+)?$",
    re.I,
)
_ORG_BEFORE = re.compile(
    r"\b(?:at|for|with|from|by|via|on|join|joined|joining|of)\s+(?:the\s+)?$|(?:在|于|加入了?|入职了?)\s?$",
    re.I,
)
_PERSON_ROLE_EN = (
    r"(?:friend|colleague|coworker|co-worker|boss|manager|neighbou?r|classmate|roommate|flatmate|partner|"
    r"cousin|uncle|aunt|nephew|niece|teacher|doctor|tutor|coach|sister|brother|mother|mom|mum|father|dad|son|"
    r"daughter|wife|husband|boyfriend|girlfriend|fianc[ée]e?|grandma|grandmother|grandpa|grandfather|kid|"
    r"child|sis|bro)"
)
_PERSON_BEFORE = re.compile(
    rf"(?:\b(?:my|our|his|her|their|your)\s+(?:(?:new|old|best|good|close|dear|little|big|younger|older|"
    rf"elder|kid)\s+)?{_PERSON_ROLE_EN}s?,?\s+$|\b(?:met|meet|meeting|ran into|bumped into|dating|married|"
    rf"texted|emailed|thanked|hugged|invited|told|asked|miss|missed|hang out with|hung out with|got to know|"
    rf"made friends with|befriended)\s+$|(?:叫|名叫|认识了?|遇到了?|遇见了?|碰到了?|结识了?|和|跟|给|陪|找|带|"
    rf"约了?|见了?|朋友|同事|老板|同学|室友|邻居|表哥|表姐|表妹|表弟)\s?$)",
    re.I,
)
_PERSON_AFTER = re.compile(
    rf"(?:['’]s\s+(?:\w+\s+)?{_PERSON_ROLE_EN}s?\b|,?\s+(?:and|&)\s+I\b|\s+(?:is|was)\s+(?:my|our|a|an)\s+"
    rf"(?:(?:good|best|old|close|new|great|retired)\s+)?(?:{_PERSON_ROLE_EN}|{EN_OCCUPATIONS}|vegetarian|"
    rf"vegan|person|guy|girl|woman|man|lady|student)s?\b|\s+(?:(?:just|also|still|really|always|never|"
    rf"finally|recently|highly|totally|then|now|actually)\s+)*(?:said|says|told|tells|texted|asked|asks|"
    rf"thinks|thought|reckons|insists|insisted|loves|loved|likes|liked|hates|hated|prefers|adores|lives|"
    rf"lived|works|worked|moved|married|recommended|recommends|suggested|suggests|swears|swore|wants|wanted|"
    rf"needs|feels|felt|invited|visited|booked|takes|took|gave|gives|cooked|cooks|drove|drives|flew|flies|"
    rf"came|comes|left|leaves|went|goes|bought|buys|sent|sends|keeps|kept|teaches|taught|studies|studied|"
    rf"turns|turned|has|had|started|joined|quit|retired|graduated|sings|sang|writes|wrote|called me|"
    rf"is (?:flying|visiting|moving|coming|getting|going|staying|starting|training|learning)|"
    rf"was (?:born|promoted|hired)|got (?:married|engaged|promoted|a job)|"
    rf"(?:will|would|can|could|should|might|must|wants to|needs to|has to|had to|is going to)\s+[a-z]+)\b|"
    r"\s?(?:推荐|说|告诉|是我|住|在|去|也|和|跟|要|刚|最近|今天|昨天|下个?月|上个?月|明天|帮|请|送|给|问|觉得|"
    r"认为|喜欢|爱|养|买|开|当|做|从|已经|一直|还|就|又|把|被|让|的(?:" + _ROLE_ZH + r")))",
    re.I,
)


_ANY_NAME = GIVEN_NAMES | NAME_WORDS
_ORG_NAMES = ORG_WORDS | BRANDS
_NAME_WORD_VERB = re.compile(
    r"\s+(?:(?:just|also|still|then|finally)\s+)?(?:[a-z]{2,}ed|called|sent|said|told|came|went)\b"
)


def _camel(word: str) -> bool:
    """ThinkPad, FedEx, iPhone: a capital after the first letter (a brand), not "McDonald"/"O'Neil"."""
    inner = re.sub(r"^(?:Mc|Mac|O'|O’|De|Di|La|Le)", "", word)
    return any(c.isupper() for c in inner[1:]) and not word.isupper()


def _runs(sentence: str) -> list[tuple[int, int, list[str]]]:
    """Runs of capitalised words ("One Hundred Years of Solitude", "ThinkPad X1 Carbon", "Pixel 8"):
    (start, end, words), a connector (of, the, and) only between two capitalised words, "I" in none."""
    tokens = [(m.start(), m.end(), m.group(0)) for m in _LATIN_WORD_RE.finditer(sentence)]
    runs: list[tuple[int, int, list[str]]] = []
    i = 0

    def cap(word: str) -> bool:  # a capitalised word, not "I" nor a document id ("Q-2024-031")
        if word == "I" or re.match(r"[A-Z]{1,5}-\d", word):
            return False
        return word[0].isupper() or len(word) > 1 and word[0] == "i" and word[1].isupper()

    def joined(a: int, b: int) -> bool:  # only spaces between two tokens
        return sentence[tokens[a][1] : tokens[b][0]] in (" ", "\u00a0")

    while i < len(tokens):
        if not cap(tokens[i][2]):
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and joined(j, j + 1):
            nxt = tokens[j + 1][2]
            if cap(nxt) or nxt[0].isdigit():
                j += 1
                continue
            k = j + 1
            while k < len(tokens) and k - j <= 2 and tokens[k][2].lower() in _CONNECTORS and joined(k - 1, k):
                k += 1
            if k > j + 1 and k < len(tokens) and joined(k - 1, k) and cap(tokens[k][2]):
                j = k
                continue
            break
        words = [t[2] for t in tokens[i : j + 1]]
        runs.append((tokens[i][0], tokens[j][1], words))
        i = j + 1
    return runs


def _proper_names(sentence: str) -> list[tuple[int, int, str, str]]:
    """(start, end, name, kind) of the capitalised names of an English (or mixed) sentence: a person
    (a given name, or a person's role or verb beside the name: "my friend Kenji", "Northwind called me",
    "Priya is a vegetarian"), a place (the lexicon, place words: "West Lake", "Mount Fuji"; an unknown
    name after in/to), an organisation (organisation words and brands: "Berlin Philharmonic", "British
    Museum", "Alibaba"; an unknown name after at/for/with/from) or a product (a model: "Pixel 8",
    "ThinkPad X1 Carbon"; a title: "One Hundred Years of Solitude", "I read Dune"). Demonyms, numbers,
    months and an unknown capitalised word with nothing beside it name nothing."""
    out: list[tuple[int, int, str, str]] = []
    lead = len(sentence) - len(sentence.lstrip(" \t\"'“‘(（[【"))
    for start, end, words in _runs(sentence):
        # "The British Museum", "Last Friday", "My Pixel": a leading function word is no part of a name
        while words and (words[0] in _NOT_NAMES or words[0].lower() in _CONNECTORS):
            start += len(words[0]) + 1
            words = words[1:]
        if not any(w[0].isalpha() for w in words):
            continue  # "Order 880120": a number is an id (above), no name
        name = " ".join(words)
        possessive = re.search(r"['’]s$", name) is not None
        if possessive:
            name = name[:-2]
            words = name.split()
        if not name:
            continue
        end = start + len(name)
        low = [w.lower() for w in words]
        before = sentence[:start]
        initial = start <= lead
        kind = ""
        if (
            any(c.isdigit() for c in name)
            or any(_camel(w) for w in words)
            or any(w.isupper() and len(w) >= 2 for w in words)
        ):
            kind = "product" if any(c.isdigit() for c in name) or set(low) & _DEVICE_WORDS else "org"
        elif any(w in _CONNECTORS for w in low) or _TITLE_BEFORE.search(before) or set(low) & _DEVICE_WORDS:
            kind = "product"  # a title ("Pride and Prejudice", "I read Dune") or a device ("my Kindle")
        elif set(low) & _ORG_NAMES:
            kind = "org"
        elif set(low) & PLACE_WORDS or name.lower() in PLACE_OF or all(w in PLACE_OF for w in low):
            kind = "place"
        elif set(low) & NOT_PERSON_WORDS or any(w in _NOT_NAMES for w in words):
            kind = ""
        elif len(words) <= 3 and all(w.isalpha() and w[0].isupper() for w in words):
            cue = _PERSON_BEFORE.search(before) is not None or _PERSON_AFTER.match(sentence, end) is not None
            # a given name that is also a word ("Mark", "Will") leads a sentence as a name before a verb
            given = low[0] in _ANY_NAME and (
                not (initial and low[0] in NAME_WORDS) or _NAME_WORD_VERB.match(sentence, end) is not None
            )
            if given or cue:
                kind = "person"
            elif _PLACE_BEFORE.search(before):
                kind = "place"
            elif _ORG_BEFORE.search(before):
                kind = "org"
        if kind:
            out.append((start, end, name, kind))
    return out


# a Chinese name leading a clause: a surname (or 小/老 + a surname) and one or two characters, then what
# the person does ("王芳是护士", "李雷养了一只狗", "小张说…"); a word the dictionary knows (周末, 马上) is none
_ZH_CLAUSE_START = re.compile(r"(?:^|(?<=[，,。.！!？?；;\s“\"]))(?=[\u4e00-\u9fff])")
_ZH_NAME_PREDICATE = re.compile(
    r"是|在|说|住|也|刚|去|和|跟|喜欢|爱|养|用|买|有|的|今天|昨天|最近|还|就|又|要|想|会|推荐|告诉|让|给|把|被|"
    r"从|对|已经|一直|每天|平时|下个?月|上个?月|很|特别|昨晚|今年|去年|明年|结婚|生了|考上|搬|先生|女士"
)


def zh_name_at(text: str, pos: int) -> str:
    """The Chinese name that starts at `pos` of `text` and is followed by what the person does, or ""."""
    if pos >= len(text) or text[pos] not in _SURNAMES + "小老":
        return ""
    common = zh_words_led_by_surname()
    for size in (3, 2):
        name = text[pos : pos + size]
        if len(name) < size or not all("\u4e00" <= c <= "\u9fff" for c in name):
            continue
        if not _ZH_NAME_PREDICATE.match(text, pos + size):
            continue
        if name[0] in "小老":
            if size == 2 and name[1] in _SURNAMES:
                return name  # 小张, 老王
            if name[0] == "老" or name in common or size == 3:
                continue
        if re.fullmatch(_ROLE_ZH, name) or re.match(_ZH_NAME_WORDS, name) or name in common:
            continue
        if size == 3 and (name[:2] in common or _ZH_NAME_PREDICATE.match(name, 2)):
            continue
        return name
    return ""


# a short model code after a name ("ThinkPad X1", "Galaxy S24", "vivo X100") is no document id
_MODEL_CODE_RE = re.compile(r"^[A-Z]{1,2}\d{1,3}[A-Z]?$")
_DOC_CUE_RE = re.compile(
    r"编号|单号|号码|工单|订单|合同|报价|发票|申请|\b(?:no\.?|number|id|ref|#|order|contract|quote|invoice|ticket|"
    r"application|case|claim|booking|reservation)\b",
    re.I,
)


def _is_model(text: str, start: int, code: str) -> bool:
    """`code` at `start` names a product's model, not a document: a short code right after a capitalised
    word or a brand, in a text without a document word."""
    if not _MODEL_CODE_RE.match(code) or _DOC_CUE_RE.search(text):
        return False
    before = re.search(r"([A-Za-z][\w-]*)\s*$", text[:start])
    return before is not None and (before.group(1)[0].isupper() or before.group(1).lower() in BRANDS)


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
