"""The profile's vocabulary (split from profile.py, issue 43): its categories, the known values of each
in Chinese and English (one key for both spellings), and the `#category_value` tags list and search
filter by. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from memory.relations.lexicon import KIN, PLACE_OF, PLACES

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
        "architect": ("建筑师", "architect", ("建筑师", "architect")),
        "dentist": ("牙医", "dentist", ("牙医", "dentist")),
        "photographer": ("摄影师", "photographer", ("摄影师", "photographer")),
        "barista": ("咖啡师", "barista", ("咖啡师", "barista")),
        "electrician": ("电工", "electrician", ("电工", "electrician")),
        "pilot": ("飞行员", "pilot", ("飞行员", "pilot")),
        "police_officer": ("警察", "police-officer", ("警察", "police officer", "policeman", "policewoman")),
        "firefighter": ("消防员", "firefighter", ("消防员", "firefighter")),
        "vet": ("兽医", "vet", ("兽医", "vet", "veterinarian")),
        "pharmacist": ("药剂师", "pharmacist", ("药剂师", "pharmacist")),
        "civil_servant": ("公务员", "civil-servant", ("公务员", "civil servant")),
        "salesperson": ("销售", "salesperson", ("销售员", "salesperson", "sales rep")),
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
        "board_games": ("桌游", "board-games", ("桌游", "board games", "board game")),
        "jazz": ("爵士乐", "jazz", ("爵士", "jazz")),
        "music": ("音乐", "music", ("听歌", "音乐", "music")),
        "hotpot": ("火锅", "hotpot", ("火锅", "hotpot", "hot pot")),
        "sushi": ("寿司", "sushi", ("寿司", "sushi")),
        "dumplings": ("饺子", "dumplings", ("饺子", "dumplings")),
        "spicy_food": ("吃辣", "spicy-food", ("吃辣", "spicy food")),
        "chocolate": ("巧克力", "chocolate", ("巧克力", "chocolate")),
        "wine": ("葡萄酒", "wine", ("红酒", "葡萄酒", "wine")),
        "beer": ("啤酒", "beer", ("啤酒", "beer")),
        "cycling": ("骑行", "cycling", ("骑行", "骑车", "cycling", "biking")),
        "skiing": ("滑雪", "skiing", ("滑雪", "skiing")),
        "painting": ("画画", "painting", ("画画", "绘画", "painting", "drawing")),
        "fishing": ("钓鱼", "fishing", ("钓鱼", "fishing")),
        "camping": ("露营", "camping", ("露营", "camping")),
        "tennis": ("网球", "tennis", ("网球", "tennis")),
        "football": ("足球", "football", ("足球", "football", "soccer")),
        "badminton": ("羽毛球", "badminton", ("羽毛球", "badminton")),
        "table_tennis": ("乒乓球", "table-tennis", ("乒乓球", "table tennis", "ping pong")),
        "dancing": ("跳舞", "dancing", ("跳舞", "舞蹈", "dancing")),
        "singing": ("唱歌", "singing", ("唱歌", "singing", "karaoke")),
        "guitar": ("吉他", "guitar", ("吉他", "guitar")),
        "piano": ("钢琴", "piano", ("钢琴", "piano")),
        "chess": ("下棋", "chess", ("下棋", "象棋", "chess")),
        "anime": ("动漫", "anime", ("动漫", "anime", "manga")),
        "baking": ("烘焙", "baking", ("烘焙", "baking")),
        "gardening": ("园艺", "gardening", ("园艺", "种花", "gardening")),
        "climbing": ("攀岩", "climbing", ("攀岩", "climbing", "bouldering")),
        "surfing": ("冲浪", "surfing", ("冲浪", "surfing")),
        "golf": ("高尔夫", "golf", ("高尔夫", "golf")),
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
        "samsung": ("三星手机", "samsung", ("三星", "samsung", "galaxy")),
        "oneplus": ("一加手机", "oneplus", ("一加", "oneplus")),
        "oppo": ("OPPO手机", "oppo", ("oppo",)),
        "vivo": ("vivo手机", "vivo", ("vivo",)),
        "honor": ("荣耀手机", "honor", ("荣耀手机",)),
        "surface": ("Surface", "surface", ("surface pro", "surface laptop")),
        "playstation": ("PlayStation", "playstation", ("playstation", "ps5", "ps4")),
        "xbox": ("Xbox", "xbox", ("xbox",)),
        "airpods": ("AirPods", "airpods", ("airpods",)),
        "lenovo": ("联想电脑", "lenovo", ("联想", "lenovo")),
        "dell": ("戴尔电脑", "dell", ("戴尔", "dell")),
        "garmin": ("佳明手表", "garmin", ("佳明", "garmin")),
    },
    "diet": {
        "vegetarian": ("素食", "vegetarian", ("素食", "吃素", "vegetarian")),
        "vegan": ("纯素", "vegan", ("vegan",)),
        "pescatarian": ("鱼素", "pescatarian", ("pescatarian",)),
        "no_meat": ("不吃肉", "no-meat", ("no meat", "no 肉", "不吃肉")),
        "no_pork": ("不吃猪肉", "no-pork", ("no pork", "no 猪肉", "不吃猪肉")),
        "no_beef": ("不吃牛肉", "no-beef", ("no beef", "no 牛肉", "不吃牛肉")),
        "no_seafood": ("不吃海鲜", "no-seafood", ("no seafood", "no 海鲜", "不吃海鲜")),
        "no_fish": ("不吃鱼", "no-fish", ("no fish", "no 鱼", "不吃鱼")),
        "no_dairy": ("不吃奶制品", "no-dairy", ("no dairy",)),
    },
    "pet": {
        "dog": ("狗", "dog", ("狗", "dog")),
        "cat": ("猫", "cat", ("猫", "cat")),
        "rabbit": ("兔子", "rabbit", ("兔子", "rabbit", "bunny")),
        "hamster": ("仓鼠", "hamster", ("仓鼠", "hamster")),
        "parrot": ("鹦鹉", "parrot", ("鹦鹉", "parrot")),
        "turtle": ("乌龟", "turtle", ("乌龟", "turtle", "tortoise")),
        "fish": ("鱼", "fish", ("金鱼", "fish")),
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
