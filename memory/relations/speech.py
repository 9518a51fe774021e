"""Who says what of whom in one of the user's messages, by rules, zh + en. Pure.

`statements(text)` splits a message into its clauses and tells of each one
- its *subject*: the user (我, I, my phone, a clause that leaves the subject out after one of the user's),
  someone else (我老公, my husband, Anna, 他, you) or a thing ("The Apple Store was packed", 它);
- what keeps it from being a fact of the user's present: a question ("我住哪？", "do you like cats?"),
  a negation or a dislike ("我不喜欢咖啡", "I don't have a dog", "I hate running"), a condition or a wish
  ("要是我住在北京就好了", "if I were a doctor", "I'd love to…"), a plan or a want ("我想养一只猫", "I'm
  thinking about getting a cat"), someone else's words or a quote ("我妈说我应该当老师", 'He said, "I live
  in Oslo"', "Ben thinks I work at Google"), the past ("I used to live in Beijing", "我在北京住过三年"),
  and a hedge ("maybe", "可能", "I think").

A clause that says no subject takes the one of the clause before it ("我老公是建筑师，在一家设计院上班":
the second clause is the husband's too); the message starts with the user. After a reporting verb (说,
告诉, said, told, thinks) the rest of the sentence is someone's words. Book and film titles (《…》) are
masked: "我在读《我的猫》" names no cat.

The profile (profile.py) takes only what the user states of themself as a fact; the extractor
(extract.py) gives what someone else's clause states (where they work or live) to that person.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from memory.relations.lexicon import GIVEN_NAMES, KIN, SOCIAL, word_set
from memory.text.turns import fold_quotes

ME, OTHER, THING = "me", "other", "thing"

_CJK = re.compile(r"[\u4e00-\u9fff]")
# a sentence ends at 。！？!?；; or a full stop before a space or the end (not "3.5", not "St.Mary")
_SENTENCE_RE = re.compile(r"[^。！？!?；;\n]+?(?:[。！？!?；;\n]+|\.(?=\s|$)|$)")
# clauses: commas, colons and dashes; in English also "and/but/so…" before a new subject
_EN_SUBJECT_AHEAD = (
    r"(?:I|I'm|I've|I'd|I'll|we|we're|we've|my|our|he|he's|she|she's|they|they're|you|it|it's|his|her|"
    r"their|(?-i:[A-Z][a-z]+))\b"
)
_CLAUSE_SPLIT_RE = re.compile(
    r"[，,：:]|\s[-–—]+\s|…+|\.{3}|"
    rf"\s(?=(?i:and|but|so|because|while|whereas|although|though|cause|'cause)\s+{_EN_SUBJECT_AHEAD})|"
    r"\s(?=(?i:and|but)\s+(?:now\s+|also\s+|currently\s+)?(?:work|live|teach|study|drive|own|run|moved|started|"
    r"joined)\b)"
)
_PUNCT = " \t。！？!?；;.,，、：:~～…\"'()（）[]【】-–—*"

# the family and the people around the user, as a subject ("我老公…", "my husband…", "老板说…")
_ROLES_ZH = sorted(
    {w for zh, _ in (*KIN.values(), *SOCIAL.values()) for w in zh if not w.startswith("我")}
    | word_set(
        "妈 爸 姐 妹 哥 弟 表哥 表姐 表妹 表弟 堂哥 堂姐 堂妹 堂弟 叔叔 阿姨 舅舅 舅妈 姑姑 姨妈 侄子 侄女 外甥 邻居 "
        "同学 室友 孩子 宝宝 闺女 家人 亲戚 父母 爸妈 公公 婆婆 岳父 岳母 对象 前任 前男友 前女友 老师 导师 教练 "
        "房东 客户 上司 领导 经理 队友 网友 舍友 同桌 学生 徒弟 师傅 医生 老乡 发小 闺蜜 儿媳 女婿 孙子 孙女 媳妇 "
        "老伴"
    ),
    key=len,
    reverse=True,
)
_ROLE_ZH = "|".join(_ROLES_ZH)
_ROLES_EN = sorted(
    {w for _, en in (*KIN.values(), *SOCIAL.values()) for w in en}
    | word_set(
        "parents parent kids kid children child baby cousin uncle aunt nephew niece neighbour neighbor "
        "classmate roommate flatmate housemate partner fiance fiancee fiancé fiancée coworkers colleagues "
        "friends teacher doctor therapist landlord landlady client team ex in-laws family grandparents "
        "brothers sisters sons daughters stepmom stepdad stepson stepdaughter"
    ),
    key=len,
    reverse=True,
)
_ROLE_EN = "|".join(re.escape(w) for w in _ROLES_EN)

_EN_LEAD_RE = re.compile(
    r"^(?:(?:and|but|so|because|though|although|while|whereas|also|plus|now|then|well|oh|yeah|yes|no|ok|"
    r"okay|actually|honestly|anyway|btw|by the way|currently|these days|nowadays|lately|recently|still|"
    r"today|tonight|yesterday|last (?:night|week|month|year|spring|summer|autumn|fall|winter|weekend)|"
    r"this (?:week|month|year|morning|evening|weekend|summer|winter)|next (?:week|month|year)|in \d{4}|"
    r"at the moment|for now|as of now|right now|finally|fortunately|unfortunately|luckily|sadly|"
    r"basically|meanwhile|otherwise|cause|'cause)\b[,\s]*)+",
    re.I,
)
_ZH_LEAD_RE = re.compile(
    r"^(?:(?:但是|但|可是|不过|而且|并且|所以|因为|其实|现在|目前|如今|最近|平时|平常|另外|还有|对了|顺便说一下|"
    r"哈哈+|嗯+|呃|然后|后来|去年|今年|明年|前年|上周|这周|下周|周末|上个月|这个月|下个月|今天|昨天|前天|刚才|"
    r"刚刚|每天|每周|早上|晚上|说实话|老实说|坦白说|总之|反正|话说|[0-9一二三四五六七八九十]+月份?|"
    r"[0-9]{4}年)[，,\s]*)+"
)
# "I think …", "我觉得…": the rest is the clause, hedged; "I heard…", "听说…": the rest is someone's words
_EN_HEDGE_HEAD_RE = re.compile(
    r"^I (?:think|guess|suppose|believe|feel like|reckon|assume|bet)\b(?: that)?[,\s]*", re.I
)
_EN_SURE_HEAD_RE = re.compile(
    r"^(?:I know|I mean|I'm (?:pretty |fairly |quite )?sure)\b(?: that)?[,\s]*", re.I
)
_EN_HEARD_HEAD_RE = re.compile(
    r"^(?:I (?:heard|was told|read)|apparently|supposedly|rumou?r has it)\b(?: that)?[,\s]*", re.I
)
_ZH_HEDGE_HEAD_RE = re.compile(r"^我(?:觉得|感觉|认为|猜|估计|相信)")
_ZH_SURE_HEAD_RE = re.compile(r"^我(?:知道|发现|确定)")
_ZH_HEARD_HEAD_RE = re.compile(r"^(?:我?听(?:人|别人)?说|据说)")

# someone's words follow (the rest of the sentence is theirs, or a quote)
_EN_REPORT_RE = re.compile(
    r"\b(?:said|says|say|told|tells|tell|telling|asked|asks|mentioned|mentions|claims|claimed|insists|"
    r"insisted|thinks|thought|believes|believed|reckons|reckoned|heard|texted|wrote|writes|swears|swore|"
    r"according to|was told|joked|jokes|complains|complained|promised)\b",
    re.I,
)
_ZH_REPORT_RE = re.compile(
    r"(?<![小听据如是么用虽实再话])说(?!明|话|实话|真的|不定|起来|服|法|好了)|告诉|跟我讲|讲过|问我|"
    r"(?<!我)觉得|(?<!我)认为|(?<!我)以为|听说|据说|写着|写的是|提到|夸我|骂我|吐槽"
)
_QUOTE_PAIRS = (('"', '"'), ("「", "」"), ("『", "』"), ("‘", "’"))

_EN_NOT_NEGATION_RE = re.compile(
    r"\bnot only\b|\bnot just\b|\bno doubt\b|\bno matter\b|\bno wonder\b|\bcan't wait\b|\bcouldn't be happier\b|"
    r"\bcan't (?:live|do) without\b|\bcan't get enough\b|\bcan't stop\b|\bnever miss\b|\bnothing beats\b|"
    r"\bno problem\b|\bno one else\b",
    re.I,
)
_EN_NEGATION_RE = re.compile(
    r"\b(?:not|no|never|none|nobody|nothing|nowhere|neither|nor|without|cannot|hate|hates|dislike|dislikes|"
    r"detest|loathe)\b|n't\b|\bcan't stand\b|\bnot a fan\b|\bnot into\b",
    re.I,
)
_ZH_NOT_NEGATION_RE = re.compile(
    r"差不多|了不起|忍不住|不得不|不错|不少|不久|不过|不仅|不但|不断|不停|不同|不管|不然|不一样|不如|没错|没多久|"
    r"别人|别的|别墅|特别|分别|区别|告别|级别|类别|性别|识别|个别|差别|离别|道别|派别|辨别|别致|淹没|埋没|出没|沉没|没收|"
    r"未来|要不要|是不是|会不会|能不能|可不可以|好不好|对不对|有没有|该不该|行不行|喜不喜欢|"
    r"爱不爱|用不用|去不去|不知道|没想到"
)
_ZH_NEGATION_RE = re.compile(r"不|没|别|未|并非|毫无|无法|讨厌|受不了|嫌弃|厌恶|反感")

# a condition or a wish: the whole sentence ("如果我是医生，我会更忙")
_EN_CONDITION_RE = re.compile(
    r"\b(?:if|unless|suppose|supposing|imagine|imagining|what if|in another life|hypothetically|assuming)\b",
    re.I,
)
_ZH_CONDITION_RE = re.compile(r"如果|要是|假如|假设|假使|倘若|万一|若是|要不是|设想|想象一下|想想")
# the clause alone ("I'm a nurse, but I'd love to be a doctor")
_EN_WISH_RE = re.compile(
    r"\b(?:wish|wishes|would|wouldn't|could|couldn't|dream of|dreaming of|dreams of|someday|one day)\b|'d\b",
    re.I,
)
_ZH_WISH_RE = re.compile(r"就好了|该多好|多好|但愿|梦想|幻想|做梦都想|巴不得|多希望|希望|羡慕")
_EN_INTENT_RE = re.compile(
    r"\b(?:want|wants|wanted|wanna|hope to|hoping to|plan|plans|planned|planning|going to|gonna|"
    r"thinking (?:about|of)|considering|consider|might|may|will|intend|intending|aim to|aiming to|looking to|"
    r"about to|tempted to|tempted by|need to|needs to|should|shall)\b|'ll\b",
    re.I,
)
_ZH_INTENT_RE = re.compile(
    r"(?<![联感思理猜回设幻梦假构料预])想(?!起|念|到|通|法|象)|打算|准备|计划|考虑|将要|即将|将来|以后|可能会|应该|得(?=去|搬|换|买)|"
    r"会(?=去|搬|换|买|养|当|做|学|考|辞|留)|要(?=去|搬|换|买|养|当|做|辞|考|学|开始)|下个月|下周|明年|下半年"
)
_EN_PAST_RE = re.compile(
    r"\bused to\b|\bback (?:in|when|then)\b|\bwhen I was\b|\bformerly\b|\bpreviously\b|\bin the past\b|"
    r"\bas a (?:kid|child|teen|teenager|student)\b|\bex-|"
    r"\bI (?:lived|worked|studied|taught|was (?:a|an)|had (?:a|an|two|three|four|some))\b|\bgrew up\b|"
    r"\bin (?:college|high school|uni|university)\b",
    re.I,
)
_ZH_PAST_RE = re.compile(
    r"以前|之前|过去|曾经|小时候|那时候?|当年|当初|年轻的时候|上学的时候|大学的时候|读书的时候|原来|从前|"
    r"(?:住|做|当|干|养|用|工作|上班|待|呆|吃|喝|学|读|开)过(?!敏|年|来|去|程|期|度|滤)|"
    r"[^\s，,。]{1,6}过(?:[一两三四五六七八九十几\d]+|好几)(?:年|个月|天)"
)
_NOW_RE = re.compile(r"现在|目前|如今|当前|\bnow\b|\bcurrently\b|\bthese days\b|\bnowadays\b", re.I)
_EN_HEDGE_RE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|kind of|sort of|kinda|sorta|apparently|seems?|i guess|i think|"
    r"i suppose|not sure|i believe)\b",
    re.I,
)
_ZH_HEDGE_RE = re.compile(r"可能|也许|大概|好像|似乎|估计|说不定|或许|不确定|应该是|感觉|我觉得|我猜")

_EN_QUESTION_START_RE = re.compile(
    r"^(?:what|where|when|who|whom|whose|why|how|which)\b|"
    r"^(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|had|may|might)\s+"
    r"(?:you|i|we|my|it|there|he|she|they|this|that|your|an?|the)\b",
    re.I,
)
_ZH_QUESTION_RE = re.compile(
    r"(?:吗|么|嘛)$|(?:什么|哪|谁|怎么|怎样|几|多少|为什么|为啥|啥).*(?:呢|来着)$|"
    r"是不是|要不要|该不该|能不能|会不会|有没有|可不可以|还是.{1,8}(?:呢|来着)?$"
)
_TAG_RE = re.compile(r"^(?:right|correct|isn't it|no|yes|ok|okay|对吧|对吗|是吧|是吗|对不对|没错吧)$", re.I)
_TITLE_RE = re.compile(r"《[^》]{0,40}》")


@dataclass(frozen=True, slots=True)
class Statement:
    """One clause of a message and how it is said."""

    text: str  # the clause (quotes folded, titles masked), without its punctuation
    start: int  # where it is in the message
    end: int
    subject: str  # ME, OTHER or THING
    holder: str  # the words naming the subject when it is not the user ("我老公", "my husband", "Anna")
    explicit: bool  # the clause says its subject (else it continues the clause before)
    zh: bool
    question: bool = False
    negated: bool = False  # a negation or a dislike
    conditional: bool = False  # a condition or a wish
    intent: bool = False  # a plan or a want
    reported: bool = False  # someone's words or a quote
    past: bool = False
    hedged: bool = False
    rest: str = ""  # the clause from its subject on (lead words and "I think" cut)

    @property
    def fact(self) -> bool:
        """Said as a fact of the present (a negated one too): not asked, wished, planned, reported or past."""
        return not (self.question or self.conditional or self.intent or self.reported or self.past)

    @property
    def mine(self) -> bool:
        """About the user: said with the user as subject, or of a thing with the user's "my" ("Coffee is my
        favourite drink")."""
        return self.subject == ME or self.subject == THING and _MY_RE.search(self.text) is not None

    def first_person(self) -> str:
        """The clause said with 我/I as its subject, for rules written for the user's own statements:
        "在一家设计院上班" → "我在一家设计院上班" (the subject left out); of someone else's clause, the
        same with them as 我/I ("my husband works at Siemens" → "I work at Siemens")."""
        rest = self.rest or self.text
        if self.subject == OTHER and self.holder and rest.startswith(self.holder):
            tail = rest[len(self.holder) :]
            return "我" + tail if self.zh else "I" + _first_person_verb(tail)
        if self.subject == ME and not self.explicit:
            return ("我" + rest) if self.zh else ("I " + rest)
        return rest


_MY_RE = re.compile(r"\bmy\b|我的|我最", re.I)
_EN_VERB_AS_I = {
    "is": "am",
    "'s": "'m",
    "has": "have",
    "does": "do",
    "lives": "live",
    "works": "work",
    "teaches": "teach",
    "drives": "drive",
    "studies": "study",
    "goes": "go",
    "owns": "own",
    "rents": "rent",
}
_EN_VERB_RE = re.compile(
    r"^(\s*(?:now |currently |still |just |recently |also |actually )*)(is|'s|has|does|lives|works|teaches|"
    r"drives|studies|goes|owns|rents)\b"
)


def _first_person_verb(tail: str) -> str:
    """ " works at Siemens" → " work at Siemens"."""
    m = _EN_VERB_RE.match(tail)
    if m is None:
        return tail if tail.startswith((" ", "'")) else " " + tail
    return m.group(1) + _EN_VERB_AS_I[m.group(2)] + tail[m.end() :]


def mask_titles(text: str) -> str:
    """《…》's words as "＿" (same length): a title names no cat, no city and no job."""
    return _TITLE_RE.sub(lambda m: "《" + "＿" * (len(m.group(0)) - 2) + "》", text)


def _quoted(original: str, folded: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for text, (left, right) in ((folded, _QUOTE_PAIRS[0]), *((original, p) for p in _QUOTE_PAIRS[1:])):
        pos = 0
        while True:
            a = text.find(left, pos)
            if a < 0:
                break
            if left == "‘" and a > 0 and text[a - 1].isalpha():
                pos = a + 1
                continue
            b = text.find(right, a + 1)
            if b < 0:
                break
            spans.append((a, b + 1))
            pos = b + 1
    return spans


def _reads_as_question(clause: str) -> bool:
    if _CJK.search(clause):
        return _ZH_QUESTION_RE.search(clause) is not None
    return _EN_QUESTION_START_RE.search(clause) is not None


def _negated(clause: str, zh: bool) -> bool:
    if zh or _CJK.search(clause):
        return _ZH_NEGATION_RE.search(_ZH_NOT_NEGATION_RE.sub("", clause)) is not None or bool(
            _EN_NEGATION_RE.search(_EN_NOT_NEGATION_RE.sub("", clause))
        )
    return _EN_NEGATION_RE.search(_EN_NOT_NEGATION_RE.sub("", clause)) is not None


def _subject(rest: str, names: Iterable[str], zh: bool) -> tuple[str, str, bool]:
    """(subject, holder, explicit) of a clause from its first words."""
    if zh:
        m = re.match(rf"(?:我们|我)(?:家)?的?(?:{_ROLE_ZH})(?!圈|们的)", rest)
        if m is not None:
            if re.match(r"(?:和|跟|与)我", rest[m.end() :]):
                return ME, "", True
            return OTHER, m.group(0), True
        if re.match(r"(?:我们|咱们|咱|俺|本人|我)", rest):
            return ME, "", True
        m = re.match(r"(?:他们|她们|他|她|你们|你|您|大家|别人|有人|人家|对方|谁|某人)", rest)
        if m is not None:
            return OTHER, m.group(0), True
        if re.match(r"(?:它们|它|这|那)", rest):
            return THING, "", True
        m = re.match(rf"(?:{_ROLE_ZH})(?!圈)", rest)
        if m is not None:
            if re.match(r"(?:和|跟|与)我", rest[m.end() :]):
                return ME, "", True
            return OTHER, m.group(0), True
    else:
        m = re.match(
            rf"(?:my|our)\s+(?:(?:new|old|little|big|younger|older|elder|best|good|close|dear|kid|baby)\s+)*"
            rf"(?:{_ROLE_EN})(?![\w-])(?:'s?)?",
            rest,
            re.I,
        )
        if m is not None:
            if re.match(r"\s+(?:and|&)\s+I\b", rest[m.end() :]):
                return ME, "", True
            return OTHER, m.group(0), True
        if re.match(r"(?:I|I'm|I've|I'd|I'll|me|myself)\b|(?i:we|we're|we've|we'd|we'll|us)\b", rest):
            return ME, "", True
        if re.match(r"(?:[A-Z][a-z]+|(?:my|our) \w+) (?:and|&) I\b", rest, re.I):
            return ME, "", True
        if re.match(r"(?:my|our)\b", rest, re.I):
            return ME, "", True
        m = re.match(
            r"(?:he|he's|she|she's|they|they're|you|you're|someone|somebody|everyone|everybody|people|nobody|"
            r"his|her|their|your)\b",
            rest,
            re.I,
        )
        if m is not None:
            return OTHER, m.group(0), True
        if re.match(
            r"(?:it|it's|this|that|these|those|there|the|a|an|its|one|some|any|every|each)\b", rest, re.I
        ):
            return THING, "", True
    for name in names:  # a name the extractor found leads the clause ("Anna住在奥斯陆", "小李在…")
        if rest.startswith(name) and (_CJK.match(name) or not re.match(r"[A-Za-z0-9]", rest[len(name) :])):
            return OTHER, name, True
    head = re.match(r"(?:[A-Z][\w'&.-]*\s+)+", rest + " ")
    if head is not None and not re.match(r"I\b", rest):
        word = head.group(0).split()[0].lower()
        if word in GIVEN_NAMES:
            return OTHER, head.group(0).split()[0], True
        # a capitalised name before its verb is what the clause is about ("Lake Tahoe is…", "Alibaba is
        # hiring"); a capitalised verb at a sentence's start leaves the subject out ("Love hiking")
        if _THING_VERB_RE.match(rest, head.end()):
            return THING, "", True
    return ME, "", False


_THING_VERB_RE = re.compile(
    r"(?:is|are|was|were|has|have|had|will|can|could|does|did|'s|makes|made|keeps|kept|seems|looked|looks|"
    r"sells|opened|closed|went|gets|got|just|also|still|[a-z]+s|[a-z]+ed)\b"
)


def statements(text: str, names: Iterable[str] = ()) -> list[Statement]:
    """The clauses of `text` (a user's message), each with its subject and how it is said. `names`: the
    people the extractor found in it ("Anna", "小李"), so a clause led by one is theirs."""
    known = sorted({n for n in names if n}, key=len, reverse=True)
    folded = fold_quotes(text)
    masked = mask_titles(folded)
    quotes = _quoted(text, folded)
    out: list[Statement] = []
    subject, holder = ME, ""
    for sm in _SENTENCE_RE.finditer(masked):
        sentence = sm.group(0)
        body = sentence.strip()
        if not body.strip(_PUNCT):
            continue
        zh = _CJK.search(sentence) is not None
        asks = bool(re.search(r"[?？]\s*$", body))
        conditional = bool(_ZH_CONDITION_RE.search(sentence) or _EN_CONDITION_RE.search(sentence))
        pieces: list[tuple[int, int]] = []
        pos = 0
        for cm in _CLAUSE_SPLIT_RE.finditer(sentence):
            pieces.append((pos, cm.start()))
            pos = cm.end()
        pieces.append((pos, len(sentence)))
        # a reporting verb splits its clause: the words after it (and the rest of the sentence) are theirs
        parts: list[tuple[int, int, bool]] = []
        reporting = False
        for a, b in pieces:
            if reporting:
                parts.append((a, b, True))
                continue
            rm = (_ZH_REPORT_RE if zh else _EN_REPORT_RE).search(sentence, a, b)
            if rm is None:
                parts.append((a, b, False))
                continue
            parts.append((a, rm.end(), False))
            parts.append((rm.end(), b, True))
            reporting = True
        parts = [(a, b, r) for a, b, r in parts if sentence[a:b].strip(_PUNCT)]
        texts = [sentence[a:b].strip(_PUNCT) for a, b, _ in parts]
        tag_last = bool(texts) and _TAG_RE.match(texts[-1]) is not None
        past_before = False
        for n, ((a, b, reported), clause) in enumerate(zip(parts, texts, strict=True)):
            start = sm.start() + a + (len(sentence[a:b]) - len(sentence[a:b].lstrip(_PUNCT)))
            end = start + len(clause)
            rest = (_ZH_LEAD_RE if zh else _EN_LEAD_RE).sub("", clause)
            if zh:
                rest = _EN_LEAD_RE.sub("", rest) if re.match(r"[A-Za-z]", rest) else rest
            hedged = False
            for head, hedge, hearsay in (
                (_EN_HEDGE_HEAD_RE, True, False),
                (_EN_SURE_HEAD_RE, False, False),
                (_EN_HEARD_HEAD_RE, False, True),
                (_ZH_HEDGE_HEAD_RE, True, False),
                (_ZH_SURE_HEAD_RE, False, False),
                (_ZH_HEARD_HEAD_RE, False, True),
            ):
                hm = head.match(rest)
                if hm is not None and hm.end() < len(rest):
                    rest = rest[hm.end() :]
                    hedged = hedged or hedge
                    reported = reported or hearsay
                    break
            who, named, explicit = _subject(rest, known, zh)
            if not explicit:
                who, named = subject, holder
            subject, holder = who, named
            in_quote = any(qa <= start < qb for qa, qb in quotes)
            last = n == len(parts) - 1
            question = (asks and last and not tag_last) or _reads_as_question(clause)
            past = (_ZH_PAST_RE if zh else _EN_PAST_RE).search(clause) is not None or (
                past_before and not explicit and _NOW_RE.search(clause) is None
            )
            past_before = past
            out.append(
                Statement(
                    text=clause,
                    start=start,
                    end=end,
                    subject=who,
                    holder=named,
                    explicit=explicit,
                    zh=zh,
                    question=question,
                    negated=_negated(rest, zh),
                    conditional=conditional
                    or (_ZH_WISH_RE if zh else _EN_WISH_RE).search(clause) is not None,
                    intent=(_ZH_INTENT_RE if zh else _EN_INTENT_RE).search(clause) is not None,
                    reported=reported or in_quote,
                    past=past,
                    hedged=hedged or (_ZH_HEDGE_RE if zh else _EN_HEDGE_RE).search(clause) is not None,
                    rest=rest,
                )
            )
    return out


__all__ = ["ME", "OTHER", "THING", "Statement", "mask_titles", "statements"]
