"""Facts that change: what a user's statement says about them, and whether it replaces an older one.

`claims_of(text)` reads the attributes people state most, in Chinese and English, from a user's own
first-person statement: where they live, where they work (and their job), school, relationship,
children, pets, diet and allergies, phone and e-mail (redacted placeholders), car, favourite things,
and "I no longer … / 我不再… / 我已经不…了". Each claim is `(key, value)`: the value normalised
(lower case, time words and particles cut off), "" when the statement only ends the attribute
("I quit my job", "我辞职了", "I no longer live in Hangzhou").

`supersedes(new, old)`: a newer claim of the same key replaces an older one when the values differ
(or the value is a redacted placeholder, which hides whether it changed, or the new claim ends the
attribute). Keys of things a user can have several of carry the thing in the key (`allergy:peanuts`,
`pet:cat`), so "I have a dog" never replaces "I have two cats". Questions, plans and wishes ("Where do I
live?", "I want to move to Suzhou", "我想搬到苏州") state nothing. The write pipeline applies this under
the user's lock (policy.py); old memories are kept, marked `superseded_by` and `valid_to`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memory.recall.keyword_index import UNIGRAM, tokenize
from memory.text.facts import HABIT, PLACEHOLDER_RE, Claim, supersedes
from memory.text.turns import fold_quotes

__all__ = ["HABIT", "PLACEHOLDER_RE", "Claim", "claims_of", "habit_tokens", "supersedes"]


_V = r"(?P<v>[^.,;!?\n]{1,60})"  # English value: the rest of the clause, trimmed by _clean_en
_Z = r"(?P<v>[^，。,.！!？?；;：:\s、]{1,20})"  # Chinese value, trimmed by _clean_zh
_ZH_WHEN = r"(?:上周|上个月|上星期|去年|今年|前几天|前阵子|最近|刚刚|刚|已经|终于|现在|目前|如今|[0-9一二三四五六七八九十]+月份?|也|又|还)*"

_EN_STOP_WORDS = (
    "last this next since for and but because with now recently yesterday today ago where which who when so on at in "
    "during every each by "
    "to from after before while as until till already again anymore any too also though although since "
    "two three four five six seven weeks week months month years year days day"
)
_EN_STOP = frozenset(_EN_STOP_WORDS.split())
_ZH_CUTS = (
    "了", "的", "啦", "呢", "吧", "啊", "呀", "工作", "上班", "任职", "实习", "这边", "那边", "住", "上学", "读书",
    "上周", "去年", "今年", "现在", "已经", "一起", "附近",
)  # fmt: skip
# values that say how or when, not which place or company: "I work at home", "I live in fear", "我在家工作"
_NOT_VALUES = frozenset(
    (
        "home",
        "night",
        "nights",
        "weekends",
        "the moment",
        "fear",
        "peace",
        "hope",
        "denial",
        "myself",
        "家",
        "家里",
    )
)
_NOT_FACT_EN = re.compile(
    r"\b(?:if|want to|wants to|would like to|'d like to|plan(?:ning)? to|thinking (?:of|about)|might|may|"
    r"going to|gonna|hope to|dream of|wish|should i|could i|will i)\b",
    re.I,
)
_NOT_FACT_ZH = re.compile(r"想|打算|准备|计划|如果|要是|希望|考虑|可能|会不会|是不是|要不要|能不能|梦想")
_QUESTION_END = re.compile(r"[?？]\s*$|[吗呢么]\s*[?？]?\s*$")


def _clean_en(raw: str) -> str:
    words = raw.strip().lower().replace("’", "'").split()
    while words and words[0] in ("a", "an", "the", "my", "our"):
        words = words[1:]
    out: list[str] = []
    for word in words:
        if word in _EN_STOP or len(out) == 4:
            break
        out.append(word)
    return " ".join(out).strip(" '\"-")


def _clean_zh(raw: str) -> str:
    value = raw.strip()
    for cut in _ZH_CUTS:
        pos = value.find(cut)
        if pos > 0:
            value = value[:pos]
    return value.strip()


def _clean(raw: str) -> str:
    return _clean_zh(raw) if re.search(r"[\u4e00-\u9fff]", raw) else _clean_en(raw)


_CANONICAL = {
    # diet
    "吃素": "vegetarian", "素食": "vegetarian", "素食者": "vegetarian", "是素食者": "vegetarian",
    "纯素": "vegan", "不吃肉": "no meat", "吃肉": "meat", "吃荤": "meat",
    # relationship
    "单身": "single", "结婚": "married", "已婚": "married", "订婚": "engaged", "离婚": "divorced",
    "恋爱": "in a relationship", "脱单": "in a relationship", "分手": "single", "broke up": "single",
    # pets and favourite things
    "猫": "cat", "猫咪": "cat", "狗": "dog", "狗狗": "dog", "兔子": "rabbit", "仓鼠": "hamster",
    "鹦鹉": "parrot", "鱼": "fish", "乌龟": "turtle", "puppy": "dog", "kitten": "cat",
    "颜色": "colour", "color": "colour", "电影": "movie", "film": "movie", "书": "book", "歌": "song",
    "歌手": "singer", "食物": "food", "菜": "food", "运动": "sport", "城市": "city", "饮料": "drink",
    # counts
    "一": "1", "两": "2", "二": "2", "三": "3", "四": "4", "五": "5", "a": "1", "an": "1", "one": "1",
    "two": "2", "three": "3", "four": "4", "five": "5", "no": "0",
}  # fmt: skip


def _canon(value: str) -> str:
    v = value.strip().lower()
    v = re.sub(r"s$", "", v) if v in ("cats", "dogs", "rabbits", "hamsters", "parrots", "turtles") else v
    return _CANONICAL.get(v, v)


@dataclass(frozen=True, slots=True)
class _Rule:
    key: str
    pattern: re.Pattern[str]
    value: Callable[[re.Match[str]], str] | str | None = None  # None: group "v"; str: a fixed value
    thing: str | None = None  # group whose value goes into the key (`pet:<thing>`)


def _r(
    key: str,
    pattern: str,
    value: Callable[[re.Match[str]], str] | str | None = None,
    thing: str | None = None,
) -> _Rule:
    return _Rule(key, re.compile(pattern, re.I), value, thing)


_PETS_EN = r"(?P<k>cat|dog|rabbit|hamster|parrot|turtle|fish|puppy|kitten)s?"
_PETS_ZH = r"(?P<k>猫咪|猫|狗狗|狗|兔子|仓鼠|鹦鹉|乌龟|鱼)"
_NUM_ZH = r"(?P<n>[一两二三四五六0-9]+)"
_NUM_EN = r"(?P<n>no|a|an|one|two|three|four|five|\d+)"

# Order matters: the first rule that matches a sentence for a key wins; ends come before states.
RULES: tuple[_Rule, ...] = (
    # --- where they live
    _r("residence", r"\bI(?:'ve| have)? no longer live (?:in|at) " + _V, ""),
    _r("residence", r"\bI(?: now| currently| still| actually)? live (?:in|at) " + _V),
    _r("residence", r"\bI(?:'m| am)(?: now| currently)? (?:living|based|settled) in " + _V),
    _r(
        "residence",
        r"\b(?:I|we)(?:'ve| have)?(?: just| recently| finally| already)? (?:moved|relocated) (?:back )?(?:to|into) "
        + _V,
    ),
    _r("residence", r"\bmy (?:new )?(?:home|place|flat|apartment|house) is in " + _V),
    _r("residence", r"我(?:们|们家|家)?" + _ZH_WHEN + r"(?:不再住在|不住在)" + _Z + r"(?:了)", ""),
    _r("residence", r"我(?:们|们家)?" + _ZH_WHEN + r"(?:住在|定居在|定居|生活在)" + _Z),
    _r("residence", r"我(?:们|家|们家)?" + _ZH_WHEN + r"(?:搬家|搬)(?:到|去|回|进)了?" + _Z),
    _r("residence", r"我家(?:现在)?在" + _Z),
    _r(
        "residence", r"^我[^，,]{0,12}[，,]\s*" + _ZH_WHEN + r"(?:住在|定居在|搬到了?)" + _Z
    ),  # 我们又搬家了，现在住在南京
    # --- work
    _r(
        "employer", r"\bI(?: just| recently|'ve| have)? (?:quit|left|resigned from) my (?:job|position)\b", ""
    ),
    _r("employer", r"\bI(?: just)? (?:got|was) (?:laid off|fired|let go)\b", ""),
    _r("employer", r"\bI(?:'m| am)(?: now)? (?:unemployed|between jobs|out of work)\b", ""),
    _r("employer", r"\bI(?:'ve| have)? no longer work (?:at|for) " + _V, ""),
    _r("employer", r"\bI(?: now| currently| still)? work (?:at|for) " + _V),
    _r(
        "employer",
        r"\bI(?:'ve| have)?(?: just| recently)? (?:joined (?=(?-i:[A-Z]))|started (?:working |a new job )?at |got (?:a |the )?(?:new )?job (?:at|with) |switched jobs to |landed a job at )"
        + _V,
    ),
    _r("employer", r"\bmy (?:new )?(?:employer|company) is " + _V),
    _r("employer", r"(?:^|我|，|,)" + _ZH_WHEN + r"(?:辞职|离职|被裁|被辞退|失业)了?", ""),
    _r("employer", r"我" + _ZH_WHEN + r"(?:不再|不)在" + _Z + r"(?:工作|上班)了", ""),
    _r("employer", r"我" + _ZH_WHEN + r"(?:在|于)" + r"(?P<v>[^，。,.！!？?；;\s]{2,14}?)(?:工作|上班|任职)"),
    _r(
        "employer",
        r"(?:^|我|[，,])"
        + _ZH_WHEN
        + r"(?:入职|加入|跳槽到|跳槽去|跳到|换到)了?(?![时日期十几个天周月年0-9一二三四五六七八九])"
        + _Z,
    ),
    _r("job", r"\bI work as (?:a|an) " + _V),
    _r("job", r"\bmy (?:new )?job is " + _V),
    _r("job", r"我的(?:新)?(?:工作|职业)是" + _Z),
    _r("job", r"我" + _ZH_WHEN + r"(?:当上了|成为了|做起了)" + _Z),
    # --- school
    _r("school", r"\bI(?: now| currently)? (?:study|go to school|am studying|'m studying) at " + _V),
    _r("school", r"\bI(?:'m| am)(?: now)? (?:a )?(?:student|freshman|sophomore|junior|senior) at " + _V),
    _r("school", r"\bI (?:just )?(?:transferred to|got into|enrolled (?:at|in)) " + _V),
    _r(
        "school",
        r"我"
        + _ZH_WHEN
        + r"在(?P<v>[^，。,.！!？?；;\s]{2,14}?)(?:上学|读书|读大学|念书|读研|读博|上大学|读高中|读初中)",
    ),
    _r("school", r"我?" + _ZH_WHEN + r"(?:转学到|转到|考上了|考进了)" + _Z),
    # --- relationship
    _r(
        "relationship",
        r"\bI(?:'m| am)(?: now| currently| officially)? (?P<v>single|married|engaged|divorced|widowed|separated|in a relationship|dating someone)\b",
    ),
    _r("relationship", r"\bI(?: just| recently)? got (?P<v>married|engaged|divorced)\b"),
    _r("relationship", r"\b(?:I|we)(?: just| recently)? broke up\b", "single"),
    _r("relationship", r"\bmy (?:new )?(?:boyfriend|girlfriend|partner|fianc[ée]e?)(?:'s name)? is " + _V),
    _r("relationship", r"我" + _ZH_WHEN + r"(?P<v>单身|结婚|已婚|订婚|离婚|恋爱|脱单)了?"),
    _r("relationship", r"(?:我|我们)" + _ZH_WHEN + r"分手了?", "single"),
    _r("relationship", r"我(?:的)?(?:新)?(?:男朋友|女朋友|男友|女友|对象)(?:叫|是)" + _Z),
    # --- children
    _r(
        "children",
        r"\bI have " + _NUM_EN + r" (?:kids?|children|child|sons?|daughters?)\b",
        lambda m: _canon(m["n"]),
    ),
    _r(
        "children",
        r"\b(?:I|we)(?: just)? had (?:a|our (?:first|second|third)) (?:baby|son|daughter|child)\b",
        "+1",
    ),
    _r("children", r"我(?:现在|已经)?有" + _NUM_ZH + r"个(?:孩子|儿子|女儿|小孩)", lambda m: _canon(m["n"])),
    _r("children", r"我(?:还)?没有(?:孩子|小孩)", "0"),
    _r("children", r"(?:我|我们)" + _ZH_WHEN + r"(?:生了|有了)(?:一个|二胎|老二|宝宝|孩子)", "+1"),
    # --- pets (one key per kind of animal)
    _r("pet", r"\bmy " + _PETS_EN + r" (?:\w+ )?(?:died|passed away|ran away)\b", "", thing="k"),
    _r("pet", r"\bI (?:now )?have " + _NUM_EN + " " + _PETS_EN + r"\b", lambda m: _canon(m["n"]), thing="k"),
    _r(
        "pet",
        r"\bI(?: just)? (?:got|adopted) (?:a |another |two )?(?:new )?" + _PETS_EN + r"\b",
        "+1",
        thing="k",
    ),
    _r("pet", r"我(?:家)?的?" + _PETS_ZH + r"(?:去世|死|走丢|丢|送人)了", "", thing="k"),
    _r(
        "pet",
        r"我(?:现在)?(?:养了?|有)" + _NUM_ZH + r"(?:只|条|个)" + _PETS_ZH,
        lambda m: _canon(m["n"]),
        thing="k",
    ),
    _r("pet", r"我" + _ZH_WHEN + r"(?:新)?(?:领养|收养)了(?:一只|一条)?" + _PETS_ZH, "+1", thing="k"),
    # --- diet and allergies
    _r("allergy", r"\bI(?:'m| am) no longer allergic to " + _V, "", thing="v"),
    _r("allergy", r"\bI(?:'m| am)(?: very| severely)? allergic to " + _V, "yes", thing="v"),
    _r("allergy", r"我对(?P<v>[^，。,.！!？?；;\s]{1,8}?)(?:已经)?不过敏了", "", thing="v"),
    _r("allergy", r"我对(?P<v>[^，。,.！!？?；;\s]{1,8}?)过敏", "yes", thing="v"),
    _r("diet", r"\bI(?:'m| am)(?: now)? (?:a )?(?P<v>vegetarian|vegan|pescatarian)\b"),
    _r("diet", r"\bI(?:'m| am) no longer (?:a )?(?:vegetarian|vegan|pescatarian)\b", ""),
    _r(
        "diet",
        r"\bI(?: now)? (?:don't|do not|no longer|never) eat (?P<v>meat|pork|beef|fish|seafood|dairy)\b",
        lambda m: "no " + m["v"].lower(),
    ),
    _r("diet", r"\bI(?:'ve| have)? (?:started eating|eat|am eating) meat again\b", "meat"),
    _r("diet", r"我" + _ZH_WHEN + r"(?:不再|不)(?:吃素|是素食者)了?", ""),
    _r("diet", r"我" + _ZH_WHEN + r"(?:开始)?(?P<v>吃素|是素食者|纯素)"),
    _r("diet", r"我" + _ZH_WHEN + r"(?:又)?(?:开始)?(?:吃肉|吃荤)了", "meat"),
    _r("diet", r"我" + _ZH_WHEN + r"不吃(?P<v>肉|猪肉|牛肉|海鲜|鱼)", lambda m: "no " + m["v"]),
    # --- contact (values are redacted placeholders)
    _r("phone", r"\bmy (?:new )?(?:phone|cell|mobile)(?: number| no\.?)? is (?:now )?" + _V),
    _r("phone", r"\bI (?:changed|got a new) (?:my )?(?:phone )?number\b", "[PHONE]"),
    _r("email", r"\bmy (?:new )?e-?mail(?: address)? is (?:now )?" + _V),
    _r("email", r"\bI (?:changed|got a new) (?:my )?e-?mail(?: address)?\b", "[EMAIL]"),
    _r(
        "phone",
        r"我的?(?:新)?(?:手机号码|手机号|电话号码|电话|手机)(?:现在)?(?:是|改成了?|换成了?|变成了?)" + _Z,
    ),
    _r("phone", r"我" + _ZH_WHEN + r"(?:换了|改了)(?:新的?)?(?:手机号|电话号码|号码)", "[PHONE]"),
    _r(
        "email",
        r"我的?(?:新)?(?:邮箱地址|邮箱|电子邮箱|邮件地址)(?:现在)?(?:是|改成了?|换成了?|变成了?)" + _Z,
    ),
    _r("email", r"我" + _ZH_WHEN + r"(?:换了|改了)(?:新的?)?邮箱", "[EMAIL]"),
    # --- car
    _r("car", r"\bI(?: just)? sold my car\b", ""),
    _r("car", r"\bI(?: now)? drive (?:a|an) " + _V),
    _r("car", r"\bmy (?:new )?car is (?:a|an) " + _V),
    _r(
        "car",
        r"\bI(?: just)? bought (?:a|an) (?:new |used )?car\b(?:,? (?:a|an) " + _V + ")?",
        lambda m: _clean_en(m["v"] or "") or "+1",
    ),
    _r("car", r"我" + _ZH_WHEN + r"(?:把车卖了|卖了车|卖掉了车)", ""),
    _r("car", r"我(?:现在)?开的是(?:一辆)?" + _Z),
    _r("car", r"我的(?:新)?车是(?:一辆)?" + _Z),
    _r(
        "car",
        r"我" + _ZH_WHEN + r"(?:新)?买了(?:一辆|辆)(?:新)?(?P<v>[^，。,.！!？?；;\s]{1,10}?)(?:车|$|，|。)",
    ),
    # --- favourite things (one key per thing)
    _r(
        "favourite",
        r"\bmy (?:new )?(?:all-time )?favou?rite (?P<k>[a-z]+(?: [a-z]+)?) (?:is|are|has become|is now) (?:now )?"
        + _V,
        thing="k",
    ),
    _r("favourite", r"我最喜欢的(?P<k>[\u4e00-\u9fff]{1,6}?)(?:现在)?(?:是|变成了?|换成了?)" + _Z, thing="k"),
)
_NO_LONGER = (
    re.compile(r"\bI(?:'ve| have)? no longer (?P<rest>[^.,;!?\n]{3,60})", re.I),
    re.compile(r"\bI (?:don't|do not|can't|cannot) (?P<rest>[^.,;!?\n]{3,60}?) any ?more\b", re.I),
    re.compile(r"\bI(?:'ve| have)? (?:stopped|given up|gave up|quit) (?P<rest>[^.,;!?\n]{3,60})", re.I),
    re.compile(r"我" + _ZH_WHEN + r"不再(?P<rest>[^，。,.！!？?；;\s]{1,15})"),
    re.compile(r"我" + _ZH_WHEN + r"已经不(?P<rest>[^，。,.！!？?；;\s]{1,15}?)了"),
    re.compile(r"我" + _ZH_WHEN + r"(?:戒了|戒掉了)(?P<rest>[^，。,.！!？?；;\s]{1,10})"),
)
_SENTENCE_RE = re.compile(r"[^。！？!?;；\n.]+(?:[。！？!?;；\n]|\.(?!\w)|$)")


def _value(rule: _Rule, match: re.Match[str]) -> str:
    if isinstance(rule.value, str):
        return rule.value
    if rule.value is not None:
        return rule.value(match)
    return _canon(_clean(match.group("v") or ""))


def _sentence_claims(sentence: str) -> list[Claim]:
    out: list[Claim] = []
    taken: set[str] = set()
    for rule in RULES:
        if rule.key in taken and rule.thing is None:
            continue
        match = rule.pattern.search(sentence)
        if match is None:
            continue
        before = sentence[max(0, match.start() - 8) : match.start() + 3]
        if _NOT_FACT_EN.search(before) or _NOT_FACT_ZH.search(before):
            continue
        key = rule.key
        if rule.thing is not None:
            thing = _canon(_clean(match.group(rule.thing) or ""))
            if not thing:
                continue
            key = f"{key}:{thing}"
        if key in taken:
            continue
        value = _value(rule, match)
        if rule.value is None and (not value or value in _NOT_VALUES):
            continue
        out.append((key, value))
        taken.update((key, rule.key))
    if not out:
        for pattern in _NO_LONGER:
            match = pattern.search(sentence)
            if match is None:
                continue
            rest = match.group("rest").strip()
            # "I no longer live in Hangzhou" is the end of a known attribute; anything else is a habit
            restated = _sentence_claims(("我" if re.match(r"[\u4e00-\u9fff]", rest) else "I ") + rest)
            if restated:
                return [(k, "") for k, _ in restated]
            words = habit_tokens(rest)
            if words:
                return [(HABIT, rest.lower().rstrip("了啦"))]
    return out


def claims_of(text: str) -> list[Claim]:
    """Every (key, value) the user's statement `text` asserts about themself; questions and plans
    assert nothing."""
    out: list[Claim] = []
    for sentence in _SENTENCE_RE.findall(fold_quotes(text)):
        s = sentence.strip()
        if not s or _QUESTION_END.search(s):
            continue
        for claim in _sentence_claims(s):
            if all(claim[0] != k for k, _ in out):
                out.append(claim)
    return out


def habit_tokens(phrase: str) -> frozenset[str]:
    """The words a habit's old statement must contain ("play tennis" → play, tenni; "喝咖啡" → bigrams)."""
    return frozenset(t for t in tokenize(phrase) if not t.startswith(UNIGRAM))
