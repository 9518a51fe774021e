"""The small zh/en lexicons of relation memory: places in both languages, the user's family, English
nicknames, the core relation names, and what tells a person's name from other capitalised words (given
names; demonyms, numbers, place and organisation words, brands). Each place or role entry is one
identity: every spelling maps to one key."""

from __future__ import annotations

import functools
import importlib.resources
import re

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
    # more cities and countries people say they live in or travel to (a capitalised place is no person)
    "oslo": ("奥斯陆", "oslo"),
    "reykjavik": ("雷克雅未克", "reykjavik"),
    "helsinki": ("赫尔辛基", "helsinki"),
    "stockholm": ("斯德哥尔摩", "stockholm"),
    "copenhagen": ("哥本哈根", "copenhagen"),
    "munich": ("慕尼黑", "munich"),
    "frankfurt": ("法兰克福", "frankfurt"),
    "zurich": ("苏黎世", "zurich"),
    "geneva": ("日内瓦", "geneva"),
    "prague": ("布拉格", "prague"),
    "budapest": ("布达佩斯", "budapest"),
    "warsaw": ("华沙", "warsaw"),
    "athens": ("雅典", "athens"),
    "istanbul": ("伊斯坦布尔", "istanbul"),
    "moscow": ("莫斯科", "moscow"),
    "dublin": ("都柏林", "dublin"),
    "edinburgh": ("爱丁堡", "edinburgh"),
    "manchester": ("曼彻斯特", "manchester"),
    "leeds": ("利兹", "leeds"),
    "brussels": ("布鲁塞尔", "brussels"),
    "milan": ("米兰", "milan"),
    "venice": ("威尼斯", "venice"),
    "florence": ("佛罗伦萨", "florence"),
    "porto": ("波尔图", "porto"),
    "montreal": ("蒙特利尔", "montreal"),
    "miami": ("迈阿密", "miami"),
    "denver": ("丹佛", "denver"),
    "atlanta": ("亚特兰大", "atlanta"),
    "houston": ("休斯敦", "houston"),
    "philadelphia": ("费城", "philadelphia"),
    "las-vegas": ("拉斯维加斯", "las vegas"),
    "honolulu": ("檀香山", "honolulu"),
    "mexico-city": ("墨西哥城", "mexico city"),
    "sao-paulo": ("圣保罗", "sao paulo", "são paulo"),
    "buenos-aires": ("布宜诺斯艾利斯", "buenos aires"),
    "cape-town": ("开普敦", "cape town"),
    "cairo": ("开罗", "cairo"),
    "mumbai": ("孟买", "mumbai"),
    "delhi": ("德里", "delhi", "new delhi"),
    "bangalore": ("班加罗尔", "bangalore", "bengaluru"),
    "hanoi": ("河内", "hanoi"),
    "kuala-lumpur": ("吉隆坡", "kuala lumpur"),
    "jakarta": ("雅加达", "jakarta"),
    "manila": ("马尼拉", "manila"),
    "auckland": ("奥克兰", "auckland"),
    "perth": ("珀斯", "perth"),
    "brisbane": ("布里斯班", "brisbane"),
    "kunming": ("昆明", "kunming"),
    "dali": ("大理", "dali"),
    "lijiang": ("丽江", "lijiang"),
    "sanya": ("三亚", "sanya"),
    "harbin": ("哈尔滨", "harbin"),
    "changsha": ("长沙", "changsha"),
    "zhengzhou": ("郑州", "zhengzhou"),
    "hefei": ("合肥", "hefei"),
    "fuzhou": ("福州", "fuzhou"),
    "jinan": ("济南", "jinan"),
    "shenyang": ("沈阳", "shenyang"),
    "dalian": ("大连", "dalian"),
    "ningbo": ("宁波", "ningbo"),
    "wuxi": ("无锡", "wuxi"),
    "zhuhai": ("珠海", "zhuhai"),
    "dongguan": ("东莞", "dongguan"),
    "foshan": ("佛山", "foshan"),
    "guiyang": ("贵阳", "guiyang"),
    "nanning": ("南宁", "nanning"),
    "lhasa": ("拉萨", "lhasa"),
    "lanzhou": ("兰州", "lanzhou"),
    "nanchang": ("南昌", "nanchang"),
    "changchun": ("长春", "changchun"),
    "haikou": ("海口", "haikou"),
    "guilin": ("桂林", "guilin"),
    "wenzhou": ("温州", "wenzhou"),
    "shaoxing": ("绍兴", "shaoxing"),
    "yangzhou": ("扬州", "yangzhou"),
    "china": ("中国", "china"),
    "japan": ("日本", "japan"),
    "korea": ("韩国", "korea", "south korea"),
    "france": ("法国", "france"),
    "germany": ("德国", "germany"),
    "italy": ("意大利", "italy"),
    "spain": ("西班牙", "spain"),
    "uk": ("英国", "uk", "britain", "england", "united kingdom"),
    "usa": ("美国", "usa", "united states", "america"),
    "canada": ("加拿大", "canada"),
    "australia": ("澳大利亚", "australia"),
    "norway": ("挪威", "norway"),
    "iceland": ("冰岛", "iceland"),
    "sweden": ("瑞典", "sweden"),
    "finland": ("芬兰", "finland"),
    "denmark": ("丹麦", "denmark"),
    "netherlands": ("荷兰", "netherlands", "holland"),
    "switzerland": ("瑞士", "switzerland"),
    "thailand": ("泰国", "thailand"),
    "vietnam": ("越南", "vietnam"),
    "malaysia": ("马来西亚", "malaysia"),
    "india": ("印度", "india"),
    "new-zealand": ("新西兰", "new zealand"),
    "ireland": ("爱尔兰", "ireland"),
    "portugal": ("葡萄牙", "portugal"),
    "greece": ("希腊", "greece"),
    "mexico": ("墨西哥", "mexico"),
    "brazil": ("巴西", "brazil"),
}
PLACE_OF: dict[str, str] = {spelling: key for key, spellings in PLACES.items() for spelling in spellings}
# a Chinese place name the lexicon lacks still ends like one ("昆山市", "余杭区", "涠洲岛")
ZH_PLACE_SUFFIX = re.compile(r"(?:市|省|县|区|镇|村|州|岛|乡)$")

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
    "wife": (("老婆", "妻子", "媳妇", "太太", "爱人"), ("wife",)),
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
    "lives_in": "the user, or someone they name, lives in a place (住在; live in)",
    "works_at": "the user, or someone they name, works at an organisation (在…工作/上班; work at/for)",
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


def word_set(text: str) -> frozenset[str]:
    """The words of a space-separated list (a long word list reads better so than as 300 quoted strings)."""
    return frozenset(text.split())


# --- people's names and the capitalised words that are none (extract.py's proper names, speech.py) ---
# Chinese surnames: a name is two or three characters led by one ("我朋友李雷", "王芳是护士")
SURNAMES = (
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈"
    "姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
    # the rest of 百家姓's first line and common ones that are rarely a word's first character
    "褚卫施尤乔赖庞樊殷翟颜倪俞葛聂岳邢祝詹凌靳童甄裴霍翁柯阮闵瞿戚滕邬臧娄窦卞鞠岑蔺洪"
)


@functools.lru_cache(maxsize=1)
def zh_words_led_by_surname() -> frozenset[str]:
    """Chinese words of two or three characters that start like a name (a surname, 小, 老, 阿) but are
    common words, not names (周末, 高兴, 马上, 小时候, 石头): from the word list in the `jieba` package
    (MIT; its dict.txt, "word count part-of-speech" per line, read as data like memory/recall/bilingual.py
    reads it). About 3,400 words, read once per process (0.15 s)."""
    first = set(SURNAMES) | set("小老阿")
    out: set[str] = set()
    path = importlib.resources.files("jieba") / "dict.txt"
    with path.open("r", encoding="utf-8") as lines:
        for line in lines:
            parts = line.split()
            if (
                len(parts) >= 3
                and 2 <= len(parts[0]) <= 3
                and parts[0][0] in first
                and not parts[2].startswith("nr")
                and parts[1].isdigit()
                and int(parts[1]) >= 5
            ):
                out.add(parts[0])
    return frozenset(out)


# Given names (English and other names zh/en users write in Latin letters): a capitalised word that is
# one names a person without a verb after it ("dinner with Jane")
GIVEN_NAMES = word_set(
    """
    aaron abby abigail adam adrian aisha alan albert alex alexa alexander alexandra alice alicia alisha alison
    amanda amelia amy ana andrea andrew andy angela anita ann anna anne annie anthony antonio arjun arthur ashley
    aurora ava barbara beatrice bella ben benjamin beth betty bianca bob bonnie brad brandon brenda brian bruce
    bruno caleb camila carl carla carlos carmen carol caroline cassie catherine cecilia charles charlie
    charlotte chen chloe chris christian christina christine christopher claire clara claudia colin connor
    craig cynthia daisy dan daniel daniela danny david dean debbie deborah denise diana diego dmitri dominic
    donna doris dylan edward eleanor elena eli elias elijah elizabeth ella ellie emily emma eric erik erin
    ethan eva evan evelyn fatima felix fiona francesca francis freya gabriel gary gemma george gina giulia
    greg gregory greta hana hannah hans harper harry heather helen henry hiroshi holly hugo ian ingrid iris isaac
    isabel isabella ivan jack jacob jake james jamie jane janet jasmine jason javier jeff jennifer jenny
    jeremy jessica jill jim jimmy jin joan joe joel john johnny jonathan jordan jose joseph josh joshua joy
    juan judy julia julian julie justin karen karl kate katherine kathy katie keith kelly ken kenji kevin kim
    kit klaus kyle lara lars laura lauren leah lee lena leo leon liam lily linda lisa liz lucas lucia lucy
    luis luke lydia maggie maria marco marcus margaret maria mariana marie marina mario martin mary mateo
    matt matthew max maya megan mei mel melanie melissa mia michael michelle miguel mike mila min ming
    miranda molly monica nadia naomi natalie nathan nick nicholas nicole nina noah nora olga oliver olivia
    omar oscar owen pablo pam patrick paul paula pedro peter philip pierre priya rachel rafael raj ralph
    rebecca richard rick rita rob robert robin rosa rose ruby ryan sally sam samantha samuel sandra sara
    sarah scott sean sebastian sergei simon sofia sophia sophie stella stephanie stephen steve steven sue
    susan sven tanya taylor ted teresa thomas tim timothy tina tom tommy tony tyler valentina vanessa
    victor victoria vincent wei wendy william yan yuki yusuf zach zoe
    """
) | {n for short, full in NICKNAMES.items() for n in (short, *full)}
# given names that are also words: a person at a sentence's start only with a verb or a role beside them
NAME_WORDS = word_set(
    "will mark grace hope faith joy rose lily ruby amber jade dawn summer autumn sky bill rob sue pat jack "
    "frank art max sunny angel chase hunter mason carter miles drew ray guy rich don kit min jordan "
    "victoria lee kim may june april august chris nick dan sam"
)
# capitalised words that are no one: demonyms and languages, numbers, months and days, and the heads of
# place and organisation names (a run holding one is that place or organisation: "West Lake", "Berlin
# Philharmonic", "One Hundred Years of Solitude")
NOT_PERSON_WORDS = word_set(
    """
    british english american chinese french german japanese korean italian spanish russian indian thai
    vietnamese mexican canadian australian irish scottish welsh dutch swedish norwegian danish finnish
    greek turkish polish portuguese brazilian european asian african western eastern northern southern
    swiss austrian belgian icelandic arabic hindi cantonese mandarin latin christian muslim buddhist
    one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred
    thousand million billion first second third fourth fifth last
    """
)
PLACE_WORDS = word_set(
    """
    lake lakes river mount mountain mountains mt sea ocean bay beach island islands park street st road rd
    avenue ave lane boulevard square bridge tower palace temple garden gardens valley falls peak harbour
    harbor canyon desert forest station airport port gate castle cathedral church abbey village town
    city county province district west east north south central downtown
    """
)
ORG_WORDS = word_set(
    """
    museum gallery theatre theater opera philharmonic orchestra symphony hall center centre hospital clinic
    university college school academy institute library hotel inn cafe café restaurant bar club stadium
    arena store shop mall market airlines airways bank group inc ltd corp company co times post news journal
    daily cross teams office studio studios labs foundation agency technologies tech motors partners
    capital holdings solutions systems software games media press records pictures network channel
    council ministry department committee association society union
    """
)
# companies and brands: a capitalised word that is one names no person ("Alibaba is hiring")
BRANDS = word_set(
    """
    apple google microsoft amazon alibaba tencent baidu huawei xiaomi samsung sony siemens bosch toyota honda
    tesla volvo bmw ford nike adidas ikea starbucks spotify netflix uber airbnb facebook meta instagram
    whatsapp wechat weibo tiktok douyin youtube twitter linkedin reddit zoom slack pixel iphone ipad macbook
    thinkpad kindle switch nintendo playstation xbox galaxy surface lenovo dell intel nvidia deloitte ibm
    shopify eurostar disney pixar marvel lego costco walmart mcdonald's kfc oppo vivo oneplus honor garmin
    fitbit airpods android windows chrome firefox gmail paypal visa mastercard jd taobao alipay meituan didi
    bytedance shein audi mercedes porsche lexus nissan hyundai kia jeep boeing airbus ryanair lufthansa
    emirates ups fedex dhl accenture mckinsey pwc kpmg oracle cisco adobe salesforce twitch steam sephora
    zara uniqlo gucci prada chanel hermes rolex canon nikon fujifilm gopro dyson philips panasonic lg
    """
)
