"""Personal names across scripts: a Latin name and its Chinese transliteration (Caroline / 卡罗琳,
Melanie / 梅兰妮, Jon / 乔恩) get the same phonetic key, so a question in one script finds the speaker
named in the other.

The key is the name's consonant skeleton in coarse classes (b/p, d/t, g/k, j/q/zh/ch/z/c, s/x/sh, l/r, m,
n, f, w/v), with vowels, h and y dropped and repeats collapsed, plus the first vowel to tell apart two
names of one skeleton (Jon 乔恩 and Gina 吉娜 are both J-N). Chinese transliterations render a Latin
final consonant as a syllable of its own (Mel 梅尔, Oscar 奥斯卡 with the r unsaid, Jon 乔恩) and a
Latin r as l, which the classes absorb.

The pinyin of the characters transliterations use is a table here, generated with pypinyin 0.55.0
(`tests/unit/test_transliteration.py` checks it against pypinyin, a dev dependency) and corrected where
a transliteration reads a character otherwise (什 shi, not shen; 勒 le): importing pypinyin costs about
55 MB per process for the ~200 characters needed. A name written with characters outside the table
gets no key: it matches nothing across scripts (it still matches itself).
"""

from __future__ import annotations

import calendar
import re

from memory.text.lexicons import EN_STOPWORDS

PINYIN: dict[str, str] = {
    "丁": "ding",
    "丘": "qiu",
    "丰": "feng",
    "丹": "dan",
    "丽": "li",
    "乌": "wu",
    "乔": "qiao",
    "亚": "ya",
    "亨": "heng",
    "什": "shi",
    "伊": "yi",
    "休": "xiu",
    "伦": "lun",
    "伯": "bo",
    "佐": "zuo",
    "佩": "pei",
    "佳": "jia",
    "克": "ke",
    "兰": "lan",
    "兹": "zi",
    "内": "nei",
    "冈": "gang",
    "凯": "kai",
    "刘": "liu",
    "利": "li",
    "加": "jia",
    "努": "nu",
    "劳": "lao",
    "勒": "le",
    "华": "hua",
    "卓": "zhuo",
    "博": "bo",
    "卡": "ka",
    "卢": "lu",
    "厄": "e",
    "古": "gu",
    "史": "shi",
    "吉": "ji",
    "哈": "ha",
    "唐": "tang",
    "因": "yin",
    "图": "tu",
    "圭": "gui",
    "坎": "kan",
    "坦": "tan",
    "埃": "ai",
    "基": "ji",
    "塔": "ta",
    "塞": "sai",
    "多": "duo",
    "夫": "fu",
    "夸": "kua",
    "奇": "qi",
    "奈": "nai",
    "奎": "kui",
    "奥": "ao",
    "妮": "ni",
    "姆": "mu",
    "威": "wei",
    "娅": "ya",
    "娜": "na",
    "宁": "ning",
    "安": "an",
    "宾": "bin",
    "密": "mi",
    "尔": "er",
    "尚": "shang",
    "尤": "you",
    "尼": "ni",
    "巴": "ba",
    "布": "bu",
    "希": "xi",
    "帕": "pa",
    "库": "ku",
    "康": "kang",
    "廷": "ting",
    "弗": "fu",
    "彼": "bi",
    "德": "de",
    "恩": "en",
    "恰": "qia",
    "戈": "ge",
    "戴": "dai",
    "扎": "zha",
    "托": "tuo",
    "扬": "yang",
    "拉": "la",
    "拜": "bai",
    "捷": "jie",
    "提": "ti",
    "摩": "mo",
    "敏": "min",
    "文": "wen",
    "斯": "si",
    "施": "shi",
    "昂": "ang",
    "普": "pu",
    "曼": "man",
    "朗": "lang",
    "本": "ben",
    "朵": "duo",
    "杜": "du",
    "杰": "jie",
    "松": "song",
    "林": "lin",
    "查": "cha",
    "柯": "ke",
    "根": "gen",
    "格": "ge",
    "桑": "sang",
    "梅": "mei",
    "森": "sen",
    "欧": "ou",
    "比": "bi",
    "汀": "ting",
    "汉": "han",
    "汤": "tang",
    "沃": "wo",
    "沙": "sha",
    "法": "fa",
    "波": "bo",
    "泰": "tai",
    "泽": "ze",
    "洁": "jie",
    "洛": "luo",
    "海": "hai",
    "温": "wen",
    "潘": "pan",
    "爱": "ai",
    "特": "te",
    "玛": "ma",
    "珀": "po",
    "珍": "zhen",
    "班": "ban",
    "理": "li",
    "琦": "qi",
    "琪": "qi",
    "琳": "lin",
    "琼": "qiong",
    "瑞": "rui",
    "瑟": "se",
    "瓦": "wa",
    "甘": "gan",
    "皮": "pi",
    "盖": "gai",
    "福": "fu",
    "科": "ke",
    "穆": "mu",
    "米": "mi",
    "索": "suo",
    "约": "yue",
    "纳": "na",
    "纽": "niu",
    "维": "wei",
    "缪": "mou",
    "罗": "luo",
    "美": "mei",
    "考": "kao",
    "耶": "ye",
    "肯": "ken",
    "舍": "she",
    "艾": "ai",
    "芙": "fu",
    "芬": "fen",
    "芭": "ba",
    "苏": "su",
    "若": "ruo",
    "英": "ying",
    "茨": "ci",
    "莉": "li",
    "莎": "sha",
    "莫": "mo",
    "莱": "lai",
    "莲": "lian",
    "菲": "fei",
    "萨": "sa",
    "蒂": "di",
    "蒙": "meng",
    "蓓": "bei",
    "蕾": "lei",
    "薇": "wei",
    "西": "xi",
    "詹": "zhan",
    "让": "rang",
    "诺": "nuo",
    "谢": "xie",
    "豪": "hao",
    "贝": "bei",
    "贾": "jia",
    "赖": "lai",
    "赫": "he",
    "路": "lu",
    "辛": "xin",
    "达": "da",
    "迈": "mai",
    "迪": "di",
    "道": "dao",
    "邦": "bang",
    "里": "li",
    "金": "jin",
    "锡": "xi",
    "阿": "a",
    "雅": "ya",
    "雷": "lei",
    "霍": "huo",
    "露": "lu",
    "韦": "wei",
    "马": "ma",
    "高": "gao",
    "鲁": "lu",
    "麦": "mai",
    "黛": "dai",
    "齐": "qi",
}

_INITIALS = (
    ("zh", "J"),
    ("ch", "J"),
    ("sh", "S"),
    ("b", "P"),
    ("p", "P"),
    ("d", "T"),
    ("t", "T"),
    ("g", "K"),
    ("k", "K"),
    ("j", "J"),
    ("q", "J"),
    ("x", "S"),
    ("z", "J"),
    ("c", "J"),
    ("s", "S"),
    ("f", "F"),
    ("h", ""),
    ("l", "L"),
    ("r", "L"),
    ("m", "M"),
    ("n", "N"),
    ("w", "W"),
    ("y", ""),
)
_VOWELS = "aeiou"


def _collapse(classes: list[str]) -> str:
    out: list[str] = []
    for c in classes:
        if c and (not out or out[-1] != c):
            out.append(c)
    return "".join(out)


def chinese_key(name: str) -> str | None:
    """The consonant skeleton of a Chinese transliteration (卡罗琳 → KLN); None when a character is not
    in the table or the skeleton is shorter than two."""
    if len(name) < 2 or any(ch not in PINYIN for ch in name):
        return None
    classes: list[str] = []
    for ch in name:
        syllable = PINYIN[ch]
        initial, klass = next(((i, k) for i, k in _INITIALS if syllable.startswith(i)), ("", ""))
        final = syllable[len(initial) :]
        classes.append(klass)
        if final == "er":
            classes.append("L")
        elif final.endswith(("n", "ng")):
            classes.append("N")
    key = _collapse(classes)
    return key if len(key) >= 2 else None


_LATIN_NAME_RE = re.compile(r"^[A-Za-z][a-z]+$")
_DIGRAPHS = (("ph", "f"), ("ch", "J"), ("sh", "S"), ("th", "t"), ("ck", "k"), ("qu", "k"), ("ng", "n"))
_LATIN_CLASSES = {
    "J": "J",
    "S": "S",
    "k": "K",
    "q": "K",
    "b": "P",
    "p": "P",
    "d": "T",
    "t": "T",
    "j": "J",
    "z": "J",
    "s": "S",
    "f": "F",
    "l": "L",
    "r": "L",
    "m": "M",
    "n": "N",
    "v": "W",
}


def latin_key(name: str) -> str | None:
    """The consonant skeleton of a Latin-script name (Caroline → KLN); None for what is not one word of
    letters or has a skeleton shorter than two."""
    word = name.removesuffix("'s").removesuffix("’s")
    if not _LATIN_NAME_RE.match(word):
        return None
    w = word.lower()
    for digraph, sound in _DIGRAPHS:
        w = w.replace(digraph, sound)
    if len(w) > 2 and w.endswith("r") and w[-2] in _VOWELS:
        w = w[:-1]  # an r after a vowel at the end is not said (Oscar 奥斯卡)
    classes: list[str] = []
    for i, ch in enumerate(w):
        nxt = w[i + 1] if i + 1 < len(w) else ""
        prev = w[i - 1] if i else ""
        if ch == "c":
            classes.append("S" if nxt in ("e", "i", "y") else "K")
        elif ch == "g":
            classes.append("J" if nxt in ("e", "i", "y") else "K")
        elif ch == "x":
            classes += ["K", "S"]
        elif ch == "w":
            classes.append("" if prev in _VOWELS else "W")  # a w after a vowel is one (Andrew 安德鲁)
        else:
            classes.append(_LATIN_CLASSES.get(ch, ""))  # vowels, h and y are not consonants here
    key = _collapse(classes)
    return key if len(key) >= 2 else None


def _first_vowel(name: str) -> str:
    if name[:1].isascii():
        return next((c for c in name.lower() if c in _VOWELS), "")
    vowels = "".join(c for c in PINYIN.get(name[:1], "") if c in _VOWELS)
    # a glide before the nucleus is not the vowel heard (qiao: "ao", Jo; ji: "i", Gi)
    return vowels[1:] if len(vowels) > 1 and vowels[0] in "iu" else vowels


def _vowels_agree(latin: str, chinese: str) -> bool:
    """The Latin name's first vowel is among the first syllable's (Jon 乔 qiao, Gina 吉 ji, Mel 梅 mei)."""
    first = _first_vowel(latin)
    return bool(first) and first in _first_vowel(chinese)


# capitalised words that are not names: "When" has the skeleton of 埃文 (Evan), "June" of 乔恩 (Jon)
_NOT_NAMES = EN_STOPWORDS | {
    n.lower() for n in (*calendar.month_name, *calendar.month_abbr, *calendar.day_name) if n
}
_CJK_RUN_RE = re.compile(r"[\u4e00-\u9fff]{2,}")
_LATIN_WORD_RE = re.compile(r"(?<![A-Za-z])[A-Z][a-z]+(?=['’]s(?![A-Za-z])|(?![A-Za-z'’]))")


def _spelled(text: str) -> list[str]:
    """The name candidates of `text` in each script: capitalised Latin words, and every 2-6 character
    piece of its Chinese runs, longest first."""
    found = [w for w in _LATIN_WORD_RE.findall(text) if w.lower() not in _NOT_NAMES]
    for run in _CJK_RUN_RE.findall(text):
        for size in range(min(len(run), 6), 1, -1):  # longest first: 梅兰妮 before 梅兰
            found += [run[i : i + size] for i in range(len(run) - size + 1)]
    return found


_SPELLINGS = 3


def names_across_scripts(known: list[str] | frozenset[str] | set[str], text: str) -> list[tuple[str, str]]:
    """(as `text` spells it, the known name) for each known name (a user's speakers) that `text` names
    in the other script: ("卡罗琳", "Caroline") in "卡罗琳去哪了？", ("Caroline", "卡罗琳") in "Where did
    Caroline go?". Skeletons must be equal; when two known names share one (Jon 乔恩, Gina 吉娜: J-N), the
    first vowel decides; names it cannot tell apart (梅兰妮, 梅拉妮) are one name's spellings, at most
    three."""
    keys = {k: latin_key(k) if k[:1].isascii() else chinese_key(k) for k in known if k}
    keys = {k: key for k, key in keys.items() if key is not None}  # each known name's key, once
    if not keys:
        return []
    candidates = _spelled(text)
    latin = {c: latin_key(c) for c in candidates if c[:1].isascii()}
    chinese = {c: chinese_key(c) for c in candidates if not c[:1].isascii()}
    found: list[tuple[str, str]] = []
    for spelled, key in [*latin.items(), *chinese.items()]:
        if key is None:
            continue
        other_script = [k for k, kk in keys.items() if kk == key and k[:1].isascii() != spelled[:1].isascii()]
        if len(other_script) > 1:
            other_script = [
                k
                for k in other_script
                if (_vowels_agree(spelled, k) if spelled[:1].isascii() else _vowels_agree(k, spelled))
            ]
        # several left agree in skeleton and first vowel: one name spelled two ways (梅兰妮 and 梅拉妮
        # for Melanie, as a translation or a user writes it), each of them named
        taken = {k for _, k in found}
        found += [(spelled, k) for k in sorted(other_script)[:_SPELLINGS] if k not in taken]
    return found
