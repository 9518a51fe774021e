"""The small zh/en lexicons of relation memory: places in both languages, the user's family, English
nicknames, and the core relation names. Each entry is one identity: every spelling maps to one key."""

from __future__ import annotations

# place key -> its spellings (Chinese and English, lower case for English)
PLACES: dict[str, tuple[str, ...]] = {
    "beijing": ("北京", "beijing", "peking"),
    "shanghai": ("上海", "shanghai"),
    "guangzhou": ("广州", "guangzhou", "canton"),
    "shenzhen": ("深圳", "shenzhen"),
    "hangzhou": ("杭州", "hangzhou"),
    "nanjing": ("南京", "nanjing"),
    "suzhou": ("苏州", "suzhou"),
    "chengdu": ("成都", "chengdu"),
    "chongqing": ("重庆", "chongqing"),
    "wuhan": ("武汉", "wuhan"),
    "xian": ("西安", "xi'an", "xian"),
    "tianjin": ("天津", "tianjin"),
    "qingdao": ("青岛", "qingdao"),
    "xiamen": ("厦门", "xiamen"),
    "hong-kong": ("香港", "hong kong"),
    "macau": ("澳门", "macau", "macao"),
    "taipei": ("台北", "taipei"),
    "tokyo": ("东京", "tokyo"),
    "osaka": ("大阪", "osaka"),
    "kyoto": ("京都", "kyoto"),
    "seoul": ("首尔", "seoul"),
    "singapore": ("新加坡", "singapore"),
    "bangkok": ("曼谷", "bangkok"),
    "new-york": ("纽约", "new york"),
    "london": ("伦敦", "london"),
    "paris": ("巴黎", "paris"),
    "sydney": ("悉尼", "sydney"),
    "los-angeles": ("洛杉矶", "los angeles"),
    "san-francisco": ("旧金山", "san francisco"),
    "berlin": ("柏林", "berlin"),
    "rome": ("罗马", "rome"),
    "dubai": ("迪拜", "dubai"),
    "lisbon": ("里斯本", "lisbon"),
    "madrid": ("马德里", "madrid"),
    "barcelona": ("巴塞罗那", "barcelona"),
    "vienna": ("维也纳", "vienna"),
    "amsterdam": ("阿姆斯特丹", "amsterdam"),
    "toronto": ("多伦多", "toronto"),
    "vancouver": ("温哥华", "vancouver"),
    "melbourne": ("墨尔本", "melbourne"),
    "boston": ("波士顿", "boston"),
    "seattle": ("西雅图", "seattle"),
    "chicago": ("芝加哥", "chicago"),
}
PLACE_OF: dict[str, str] = {spelling: key for key, spellings in PLACES.items() for spelling in spellings}

# the user's family: role key -> Chinese words, English words (after "my")
KIN: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "mother": (("妈妈", "母亲", "老妈", "我妈", "妈"), ("mom", "mum", "mother", "mommy", "mama")),
    "father": (("爸爸", "父亲", "老爸", "我爸", "爸"), ("dad", "father", "daddy", "papa")),
    # Chinese says which sister or brother; English "my sister" is whichever one the user named (graph.py)
    "elder_sister": (("姐姐", "姐"), ("older sister", "elder sister", "big sister")),
    "younger_sister": (("妹妹", "妹"), ("younger sister", "little sister", "kid sister")),
    "sister": ((), ("sister", "sis")),
    "elder_brother": (("哥哥", "哥"), ("older brother", "elder brother", "big brother")),
    "younger_brother": (("弟弟", "弟"), ("younger brother", "little brother", "kid brother")),
    "brother": ((), ("brother", "bro")),
    "wife": (("老婆", "妻子", "太太", "爱人"), ("wife",)),
    "husband": (("老公", "丈夫", "先生"), ("husband",)),
    "son": (("儿子",), ("son",)),
    "daughter": (("女儿",), ("daughter",)),
    "grandmother": (("奶奶", "外婆", "姥姥"), ("grandma", "grandmother", "granny")),
    "grandfather": (("爷爷", "外公", "姥爷"), ("grandpa", "grandfather")),
    "boyfriend": (("男朋友", "男友"), ("boyfriend",)),
    "girlfriend": (("女朋友", "女友"), ("girlfriend",)),
}
# friends and colleagues: roles several people can have (never an alias of one person)
SOCIAL: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "friend_of": (("朋友", "好友", "闺蜜", "哥们"), ("friend", "best friend", "buddy")),
    "colleague_of": (("同事",), ("colleague", "coworker", "co-worker")),
    "boss_of": (("老板", "领导", "上司"), ("boss", "manager")),
}

# English nicknames -> the full names they shorten (Mel = Melanie); a prefix of ≥ 3 letters also links
NICKNAMES: dict[str, tuple[str, ...]] = {
    "mel": ("melanie", "melissa"),
    "bob": ("robert",),
    "rob": ("robert",),
    "bill": ("william",),
    "will": ("william",),
    "liz": ("elizabeth",),
    "beth": ("elizabeth",),
    "kate": ("katherine", "catherine", "kathryn"),
    "katie": ("katherine", "catherine"),
    "tom": ("thomas",),
    "mike": ("michael",),
    "jim": ("james",),
    "jimmy": ("james",),
    "dave": ("david",),
    "alex": ("alexander", "alexandra"),
    "sam": ("samantha", "samuel"),
    "jen": ("jennifer",),
    "jenny": ("jennifer",),
    "chris": ("christopher", "christina"),
    "nick": ("nicholas",),
    "dan": ("daniel",),
    "ben": ("benjamin",),
    "joe": ("joseph",),
    "tony": ("anthony",),
    "andy": ("andrew",),
    "matt": ("matthew",),
    "steve": ("steven", "stephen"),
    "sue": ("susan",),
    "jess": ("jessica",),
    "vicky": ("victoria",),
}

# a document type's spellings (memory.text.lexicons.DOC_TYPE_ALIASES holds the recall side)
DOC_KINDS: dict[str, tuple[str, ...]] = {
    "quote": ("报价单", "报价", "quote", "quotation"),
    "contract": ("合同", "协议", "contract", "agreement"),
    "order": ("订单", "order"),
    "invoice": ("发票", "账单", "invoice", "bill"),
    "ticket": ("工单", "ticket"),
    "application": ("申请", "申请单", "application"),
}

# The documented core of relation names (the set is open: rules may add more).
CORE_RELATIONS: dict[str, str] = {
    "submitted": "the user submitted a document (提交/递交/交了; submitted/sent in/filed)",
    "approved": "a document was approved (审批通过/批准/批了; approved/signed off)",
    "rejected": "a document was rejected (驳回/被拒/没通过; rejected/declined/turned down)",
    "pending": "a document awaits a decision (审批中/待审批/还在审; pending/under review)",
    "signed": "the user signed a document (签了; signed)",
    "lives_in": "the user lives in a place (住在; live in)",
    "works_at": "the user works at an organisation (在…工作/上班; work at/for)",
    "friend_of": "a person is the user's friend (朋友; friend)",
    "colleague_of": "a person is the user's colleague (同事; colleague)",
    "family": "a person is the user's relative; the role is the entity's alias (妹妹 Anna; my sister Anna)",
    "met": "the user met a person, optionally in a place (认识/遇到; met)",
    "recommended": "someone recommended a product or place (推荐; recommended)",
    "bought": "the user bought a product (买了; bought)",
    "visited": "the user went to a place (去了; visited/went to)",
}
# relations of which only the newest is current, per subject (a newer `approved` ends `pending`)
EXCLUSIVE: dict[str, str] = {
    "pending": "status",
    "approved": "status",
    "rejected": "status",
    "lives_in": "home",
    "works_at": "work",
}
