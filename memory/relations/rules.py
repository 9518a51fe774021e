"""The zh+en patterns relation extraction reads a sentence with: kin, social ties, status, documents, events,
places, organisations, products. Data for extract.py and names.py (split from extract.py, issue 43); the
names keep their leading underscore: nothing outside memory/relations reads them.
"""

from __future__ import annotations

import re

from memory.relations.lexicon import (
    KIN,
    PLACE_OF,
    SOCIAL,
    SURNAMES,
)

_CJK = re.compile(r"[\u4e00-\u9fff]")


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
