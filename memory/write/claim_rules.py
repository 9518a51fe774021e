"""The claim rules of facts that change (split from supersession.py, issue 43): zh+en patterns for
where the user lives, works and studies, diet, relationship, pets, favourites and counts (`RULES`), the
ones that say a fact changed (`CHANGE_RULES`), and how a matched value is cleaned and made canonical.
Data and pure functions; supersession.py reads a text with them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from memory.text.profile_words import (
    EN_BUSINESSES,
    EN_DWELLINGS,
    EN_OCCUPATIONS,
    EN_ORG_WORDS,
    EN_SCHOOL_WORDS,
    EN_WORK_FIELDS,
    ZH_BUSINESSES,
    ZH_OCCUPATIONS,
    ZH_SCHOOL_SUFFIXES,
    ZH_WORK_FIELDS,
)

_V = r"(?P<v>[^.,;!?\n]{1,60})"  # English value: the rest of the clause, trimmed by _clean_en


_Z = r"(?P<v>[^，。,.！!？?；;：:\s、]{1,20})"  # Chinese value, trimmed by _clean_zh


_ZH_WHEN = (
    r"(?:上周|上个月|上星期|去年|今年|前几天|前阵子|最近|刚刚|刚|已经|终于|现在|目前|如今|[0-9一二三四五六七八九十]+月份?|也|又|还|"
    r"这学期|上学期|这周|本周|这个月|本月|今天|昨天|前天|年初|年底|后来|从此|一直|早就)*"
)


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
    _r("school", r"(?:^|我|[，,])" + _ZH_WHEN + r"(?:转学到|转到|考上了|考进了)了?" + _Z),
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
    _r("car", r"我" + _ZH_WHEN + r"开的(?:车|汽车)" + _ZH_WHEN + r"(?:换成|变成|改成)了?(?:一辆)?" + _Z),
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


# --- changes said as changes (issue 24): job, employer, home, school, relationship ------------------
# Read with the lexicons of occupations, fields of work, schools and organisations (profile_words.py), so a
# rule names a kind of thing, not a wording: "我不当老师了，现在在银行做柜员", "I quit teaching; now I'm
# a data analyst", "我从明日传媒跳到了云游旅行", "Marco and I split up". Ends come before states; a
# sentence that ends an attribute and states its new value claims the value (`_sentence_claims`).
_ZS = r"(?:^|我|我们|[，,；;])"  # a Chinese clause start: the subject is often left out after a comma


# words that make the sentence about someone else than the user ("我妹妹住在…", "我同事换了工作")
ZH_OTHERS = "妹|姐|哥|弟|爸|妈|朋友|同事|父|母|儿|女|老公|老婆|邻居|同学"
_ZGAP = rf"(?:(?!{ZH_OTHERS}|他|她)[^，。,.！!？?；;\s]){{0,8}}?"


_ZV = r"(?P<v>[^，。,.！!？?；;\s]{2,12}?)"


_OCC = rf"(?P<v>(?:(?!的)[\u4e00-\u9fffA-Za-z]){{0,8}}(?:{ZH_OCCUPATIONS}))"


_OCC_OR_FIELD = rf"(?P<v>(?:(?!的)[\u4e00-\u9fffA-Za-z]){{0,8}}(?:{ZH_OCCUPATIONS})|(?:{ZH_WORK_FIELDS}))"


_ZSCHOOL = rf"(?P<v>[^，。,.！!？?；;\s的]{{0,10}}?(?:{ZH_SCHOOL_SUFFIXES}))"


_EN_OCC = rf"(?P<v>(?:[\w-]+ ){{0,3}}?(?:{EN_OCCUPATIONS}))\b"


_EN_ORG = r"(?P<v>(?-i:[A-Z])[\w&'.-]*(?: (?-i:[A-Z])[\w&'.-]*){0,3})"


_EN_SCHOOL = rf"(?P<v>(?:[\w'-]+ ){{0,4}}?(?:{EN_SCHOOL_WORDS}))\b"


_EN_I = r"\bI(?:'ve| have| had)?(?: just| recently| finally| since| now| then)?"


_EN_SUBJ = r"(?:^|[.;,:] |\bI |\band |\bthen |\bnow )"  # after "and", "now", a comma: the same subject


# lower case: "I quit Maple Consulting" names an employer, not a field of work
_WORKISH = rf"(?-i:my (?:job|career|position|role)|(?:[\w-]+ )?(?:{EN_WORK_FIELDS})|(?:[\w-]+ )?(?:{EN_OCCUPATIONS}))\b"


CHANGE_RULES: tuple[_Rule, ...] = (
    # --- job: ends
    _r(
        "job",
        rf"{_EN_I} (?:quit|left|gave up|stopped|dropped|retired from|moved out of|got out of|walked away from)(?: doing)? {_WORKISH}\b",
        "",
    ),
    _r("job", r"^(?:moved out of|left|quit|gave up|no more) " + _WORKISH, ""),
    _r(
        "job",
        rf"\bI(?:'m| am) (?:not (?:a|an) (?:[\w-]+ ){{0,2}}?(?:{EN_OCCUPATIONS})\b.{{0,12}}any ?more|no longer (?:a|an) (?:[\w-]+ ){{0,2}}?(?:{EN_OCCUPATIONS})\b)",
        "",
    ),
    _r("job", rf"{_EN_I} retired\b", ""),
    _r(
        "job",
        _ZS
        + _ZH_WHEN
        + r"(?:不当|不干|不做|不教|不开|不跑|辞掉了?|辞去了?)[^，。,.！!？?；;\s]{0,8}?(?:了|的工作)",
        "",
    ),
    _r("job", r"(?:离开了?|退出了?)[^，。,.！!？?；;\s]{0,6}?(?:行业|这行|岗位)|退休了", ""),
    # --- job: states
    _r(
        "job",
        rf"{_EN_SUBJ}(?:I(?:'m| am) |I(?:'ve| have) become |(?:I )?became )(?:now |currently )?(?:a |an )?{_EN_OCC}",
    ),
    _r(
        "job",
        rf"\b(?:took|got|landed|accepted|started|have|found) (?:a |an |the )?(?:new )?(?:[\w-]+ )?(?:job|position|role) as (?:a |an )?{_EN_OCC}",
    ),
    _r(
        "job",
        r"(?:\bI|\bnow I|\band now|^now) (?:now )?teach (?P<v>[a-z]+(?: [a-z]+)?)",
        lambda m: "teach " + _clean_en(m["v"]),
    ),
    _r(
        "job",
        r"\bI (?:now )?drive (?:a \w+ )?for (?P<v>[^.,;!?\n]{2,40})",
        lambda m: "driver: " + _clean_en(m["v"]),
    ),
    _r(
        "job",
        rf"{_EN_SUBJ}(?:I )?(?:now )?(?:run|own|opened|started) (?:a |an |my own )(?P<v>(?:[\w-]+ ){{0,2}}?(?:{EN_BUSINESSES}))\b",
        lambda m: "runs " + _clean_en(m["v"]),
    ),
    _r("job", r"\bmy (?:day |new |current )?job is (?:now )?" + _V),
    _r(
        "job",
        rf"{_ZS}{_ZH_WHEN}(?:是|当上了|成为了?|做起了|转行做|改行做|转行当|改行当)(?:一名|一个|一位|个|名)?{_OCC}",
    ),
    _r(
        "job",
        rf"{_ZS}{_ZH_WHEN}(?:在[^，。,.！!？?；;\s]{{1,10}}?)?(?:当|做|干|担任)(?:一名|一个|一位|个|名)?{_OCC_OR_FIELD}",
    ),
    _r(
        "job",
        rf"{_ZS}{_ZH_WHEN}(?:在[^，。,.！!？?；;\s]{{1,10}}?)?教(?P<v>[\u4e00-\u9fff]{{1,4}})",
        lambda m: "教" + _clean_zh(m["v"]),
    ),
    _r(
        "job",
        rf"{_ZS}{_ZH_WHEN}(?:每天|平时)?(?:开|跑)(?P<v>出租车?|网约车|货车|卡车|公交车?|大巴|滴滴)",
        lambda m: "开" + m["v"],
    ),
    _r(
        "job",
        rf"{_ZS}{_ZH_WHEN}开了?(?:一家|一个|家|个)(?P<v>[\u4e00-\u9fff]{{1,6}}?(?:{ZH_BUSINESSES}))",
        lambda m: "开" + m["v"],
    ),
    _r(
        "job",
        rf"{_ZS}{_ZH_WHEN}(?:转行|改行|换了?职业|换了?行)(?:了)?[，,]?{_ZH_WHEN}(?:做|当|是)(?:一名|个)?{_OCC_OR_FIELD}",
    ),
    # --- employer: ends and states
    _r("employer", r"\bI (?:don't|do not|no longer) work (?:at|for) ", ""),
    _r("employer", r"\b(?:laid me off|let me go|fired me)\b", ""),
    _r("employer", r"我?" + _ZH_WHEN + r"(?:不再|不)在" + _ZV + r"(?:工作|上班|干|打工)了", ""),
    _r("employer", r"(?:把我裁了|把我辞退了|被裁员?了?)", ""),
    _r("employer", rf"\bI(?:'m| am) (?:a |an )?(?:[\w-]+ ){{0,3}}?(?:{EN_OCCUPATIONS}) at {_EN_ORG}"),
    _r("employer", rf"\bI(?:'ve| have) been (?:at|with) {_EN_ORG}"),
    _r("employer", rf"\bI(?:'m| am) on the (?:[\w-]+ ){{1,3}}team at {_EN_ORG}"),
    _r("employer", rf"\bI do (?:[\w-]+ ){{1,2}}at {_EN_ORG}"),
    _r("employer", r"\bI(?:'m| am) (?:now )?employed (?:by|at) " + _V),
    _r("employer", r"\bI (?:got|was|have been|'ve been) (?:hired|recruited|taken on) by " + _V),
    _r(
        "employer",
        rf"\b(?:now )?I(?:'m| am) (?:now )?(?:at|with) (?!(?:[\w'-]+ ){{0,4}}(?:{EN_SCHOOL_WORDS})\b)(?=[^.,;!?]*\bnow\b|[^.,;!?]*$)"
        + _V,
    ),
    _r("employer", rf"\bnow I(?:'m| am) (?:at|with) (?!(?:[\w'-]+ ){{0,4}}(?:{EN_SCHOOL_WORDS})\b)" + _V),
    _r(
        "employer",
        rf"(?:{_EN_I} |^|\band |\bthen )(?:started (?:working |a new job )?at |took a (?:new )?job (?:at|with) |joined (?=(?-i:[A-Z]))|(?:got|landed|accepted) (?:a |an )?(?:new )?(?:job|position|offer) (?:at|with|from) )"
        + _V,
    ),
    _r(
        "employer",
        rf"\b(?:moved|switched|went|jumped) from (?:[\w&'.-]+ ){{0,3}}?(?:{EN_ORG_WORDS}) to {_EN_ORG}",
    ),
    _r(
        "employer",
        rf"{_ZS}{_ZH_WHEN}(?:在|于)(?P<v>[^，。,.！!？?；;\s]{{2,12}}?)(?:工作|上班|任职|干了?|打工|干活)",
    ),
    _r(
        "employer",
        rf"{_ZS}{_ZH_WHEN}在(?P<v>[^，。,.！!？?；;\s]{{2,12}}?)(?:当|做|干|担任)(?:一名|一个|个|名)?(?:{ZH_OCCUPATIONS}|{ZH_WORK_FIELDS})",
    ),
    _r(
        "employer",
        rf"{_ZS}{_ZH_WHEN}在(?P<v>[^，。,.！!？?；;\s]{{2,10}}?)的[^，。,.！!？?；;\s]{{0,6}}?(?:团队|部门|部|组|事业部|项目组)",
    ),
    _r(
        "employer",
        rf"我(?:现在|目前)?是(?P<v>[^，。,.！!？?；;\s的]{{2,10}}?)的[^，。,.！!？?；;\s]{{0,6}}?(?:{ZH_OCCUPATIONS})",
    ),
    _r("employer", r"被(?P<v>[^，。,.！!？?；;\s]{2,12}?)(?:录用|聘用|雇用|聘请|招进去)了?"),
    _r(
        "employer",
        rf"{_ZS}{_ZH_WHEN}(?:从[^，。,.！!？?；;\s]{{2,12}}?)?(?:跳槽到|跳槽去|跳到|换到|加入)了?{_ZV}(?:$|[，。,.！!；;])",
    ),
    _r("employer", rf"{_ZS}{_ZH_WHEN}在(?P<v>[^，。,.！!？?；;\s]{{2,12}}?)找了?(?:一)?份(?:新)?工作"),
    _r(
        "employer",
        rf"(?:换了?|跳槽)(?:公司|工作|东家|单位)?了?[，,]\s*{_ZH_WHEN}在(?P<v>[^，。,.！!？?；;\s]{{2,12}})",
    ),
    _r(
        "employer",
        r"(?:裁了|被裁|离职|辞职|跳槽|换了?工作)[^。！!？?]*?(?:去了|到了|进了)(?P<v>[^，。,.！!？?；;\s]{2,12})",
    ),
    # --- residence
    _r("residence", r"\bI (?:don't|do not) live in " + _V + r" any ?more", ""),
    _r("residence", r"\b(?:I|we)(?:'ve| have) (?:always |been )?(?:lived|living) in " + _V),
    _r("residence", r"\b(?:I|we)(?: now| currently)? live (?:in|at) " + _V),
    _r(
        "residence",
        r"\b(?:I|we)(?: now| currently)? live (?:near|by|close to|just outside|outside) [^.,;!?]*? in " + _V,
    ),
    _r(
        "residence",
        r"^(?:my |our )?(?:new )?home is (?:now )?(?:a |an |my )?(?:(?:[\w-]+ ){0,3}?in )?" + _V,
    ),
    _r(
        "residence",
        r"\b(?:my|our) (?:new |family )?(?:home|place|flat|apartment|house|address)(?: is| is now)? (?:now )?in "
        + _V,
    ),
    _r("residence", r"\bmy (?:new )?address is (?:now )?(?:in )?" + _V),
    _r(
        "residence",
        rf"\b(?:I|we) (?:rent|own|share|bought|have|found) (?:a|an|my|our) (?:[\w-]+ ){{0,2}}?(?:{EN_DWELLINGS}) in "
        + _V,
    ),
    _r(
        "residence",
        r"^(?:I|we)\b[^.;]*?\b(?:and|then) (?:moved|relocated|settled)(?: back)? (?:to|into|in) " + _V,
    ),
    _r("residence", r"^(?:I |we )?(?:just |recently |finally )?(?:moved|relocated)(?: [a-z]+)? to " + _V),
    _r("residence", r"\b(?:I|we)\b[^.;]*?\b(?:settled|settling)(?: down)? in " + _V),
    _r("residence", r"\bsigned a lease (?:on (?:a|an) [\w-]+ )?in " + _V),
    _r("residence", r"\bI(?:'m| am) (?:now )?in (?=(?-i:[A-Z])[^.,;!?]*\bnow\b)" + _V),
    _r("residence", r"我(?:们|家|们家)?" + _ZH_WHEN + r"(?:不再住在?|不住在?)" + _ZV + r"了", ""),
    _r("residence", r"我(?:们|们家)?" + _ZGAP + r"(?:住在|定居在|定居|生活在|常驻|常住在?)" + _Z),
    _r("residence", r"(?:我|我们|我家|我们家)" + _ZGAP + r"(?:搬家|搬)(?:到|去|回|进)了?" + _Z),
    _r(
        "residence",
        rf"{_ZS}{_ZH_WHEN}在(?P<v>[^，。,.！!？?；;\s]{{2,8}}?)(?:定居|安家|落户|生活|住|租房|租了房|合租|买了房|签了?租房合同)",
    ),
    _r("residence", r"我(?:们)?(?:家)?(?:现在)?的?(?:公寓|房子|家|住处|住所|新家)(?:现在)?在" + _Z),
    _r(
        "residence",
        r"我和[^，。,.！!？?；;\s]{1,4}?在(?P<v>[^，。,.！!？?；;\s]{2,8}?)(?:合租|租房|同住|住)",
    ),
    _r("residence", r"地址(?:改到|改成|换到|变成|搬到)了?" + _Z),
    _r("residence", r"(?:调到|调去|搬到)(?P<v>[^，。,.！!？?；;\s]{2,8}?)(?:去)?(?:住|生活|定居)"),
    # --- school
    _r("school", r"\bI (?:now |currently )?(?:study|studied)(?: [\w-]+){0,2} at " + _V),
    _r("school", r"\bI(?:'m| am) (?:now )?(?:studying|doing|taking)(?: [\w'-]+){0,3} at " + _V),
    _r("school", r"\bI (?:take|am taking|'m taking) (?:[\w-]+ ){0,2}?classes at " + _V),
    _r("school", r"\bI (?:now )?go to (?:[\w-]+ ){0,2}?school at " + _V),
    _r("school", rf"{_EN_SUBJ}(?:I )?(?:now )?(?:go to|attend|attending) {_EN_SCHOOL}"),
    _r("school", r"\bmy (?:new )?(?:school|college|university|uni) is (?:now )?" + _V),
    _r(
        "school",
        r"\b(?:I(?:'m| am)(?: now)?|I was|I got|now I'm) (?:enrolled|accepted|admitted) (?:at|in|to|into) "
        + _V,
    ),
    _r(
        "school",
        r"\bstarted (?:a|my) (?:phd|master'?s|degree|course|program|programme|doctorate|mba)(?: [\w-]+)? at "
        + _V,
    ),
    _r("school", rf"\b(?:now )?I(?:'m| am) (?:now )?at {_EN_SCHOOL}"),
    _r("school", rf"{_ZS}{_ZH_WHEN}(?:在|去了?|到|进了?|转到了?|转学到了?|考上了?|考进了?){_ZSCHOOL}"),
    _r("school", rf"我是{_ZSCHOOL}的"),
    _r("school", rf"被{_ZSCHOOL}录取"),
    _r("school", r"我的(?:新)?学校是" + _Z),
    _r("school", rf"(?:上|读|念)的是{_ZSCHOOL}"),
    _r("school", r"(?:改去|转去|去了?)(?P<v>[^，。,.！!？?；;\s]{2,8}?)(?:读书|念书|上学|读研|读博|读|念)"),
    # --- relationship
    _r(
        "relationship",
        r"\b(?:[A-Z]\w+ and I|I and [A-Z]\w+|we|I)(?: just| recently| finally)? (?:split up|broke up|separated|ended things|ended it|called it off|called off (?:the|our) engagement)\b",
        "single",
    ),
    _r("relationship", r"\bI(?:'m| am) (?:on my own|by myself) again\b", "single"),
    _r(
        "relationship",
        r"\b(?:[A-Z]\w+ and I|we)(?: just| recently| finally)? (?:got )?(?P<v>married|engaged|divorced)\b",
    ),
    _r("relationship", r"\b(?:[A-Z]\w+ and I|we) are (?:now )?(?P<v>divorced|separated|married|engaged)\b"),
    _r("relationship", r"\bI (?:just |recently )?(?:got )?remarried\b", "married"),
    _r("relationship", r"\bI(?:'m| am) (?:a )?(?:widow|widower|widowed)\b", "widowed"),
    _r("relationship", r"\bI(?:'ve| have) been single\b", "single"),
    _r("relationship", r"\bI(?:'m| am) in an? (?:[\w-]+ )?relationship\b", "in a relationship"),
    _r(
        "relationship",
        r"\bI (?:now )?have a (?:new )?(?:girlfriend|boyfriend|partner|wife|husband|fianc[ée]e?)\b",
        "in a relationship",
    ),
    _r(
        "relationship",
        r"\bI(?:'m| am|'ve been| have been) (?:now )?(?:dating|seeing|going out with) (?=someone|somebody|(?:a|an) (?:guy|girl|man|woman|boy|lady)\b|(?-i:[A-Z]))"
        + _V,
        lambda m: "dating " + _clean_en(m["v"]),
    ),
    _r(
        "relationship",
        r"\bmy (?:new )?(?:boyfriend|girlfriend|partner|fianc[ée]e?|wife|husband)(?:'s name)? is (?:called |named )?"
        + _V,
    ),
    _r(
        "relationship",
        r"我和" + _ZGAP + r"(?:分手|分了|分开|结束|离婚)了?",
        lambda m: "divorced" if "离婚" in m.group(0) else "single",
    ),
    _r("relationship", r"(?:取消了?|解除了?)婚约|退婚", "single"),
    _r("relationship", r"又是一个人|恢复单身", "single"),
    _r(
        "relationship", r"(?:老伴|老公|老婆|丈夫|妻子)[^，。,.！!？?；;\s]{0,5}?(?:去世|过世|走了)", "widowed"
    ),
    _r("relationship", r"再婚", "married"),
    _r("relationship", r"我(?:们)?" + _ZH_WHEN + r"(?P<v>单身|结婚|已婚|订婚|离婚|恋爱|脱单)了?"),
    _r("relationship", r"我和" + _ZGAP + r"(?P<v>结婚|订婚|领证)"),
    _r("relationship", rf"{_ZS}{_ZH_WHEN}(?P<v>单身)"),
    _r("relationship", r"我" + _ZH_WHEN + r"有(?:女朋友|男朋友|对象|女友|男友)了", "in a relationship"),
    _r(
        "relationship",
        r"(?:我|我在)和(?:一个叫)?[^，。,.！!？?；;\s]{1,10}?(?:约会|交往|谈恋爱|在一起|谈异地恋|恋爱)",
        lambda m: "dating " + m.group(0),
    ),
    _r(
        "relationship",
        r"(?:我|现在)的?(?:新)?(?:男朋友|女朋友|男友|女友|对象|伴侣|未婚夫|未婚妻)(?:叫|是)" + _Z,
    ),
)


RULES = (*RULES, *CHANGE_RULES)
