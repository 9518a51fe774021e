"""Proper names in a sentence, by rules: capitalised runs in English, surnames and name words in Chinese.

What extract.py takes for people, places and organisations before it relates them (split from extract.py,
issue 43). Pure.
"""

from __future__ import annotations

import re

from memory.relations.lexicon import (
    BRANDS,
    GIVEN_NAMES,
    NAME_WORDS,
    NOT_PERSON_WORDS,
    ORG_WORDS,
    PLACE_OF,
    PLACE_WORDS,
    word_set,
    zh_words_led_by_surname,
)
from memory.relations.rules import (
    _NOT_NAMES,
    _ROLE_ZH,
    _SURNAMES,
    _ZH_NAME_WORDS,
)
from memory.text.profile_words import EN_OCCUPATIONS

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
