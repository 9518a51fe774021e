"""Word lists and patterns (Chinese and English) behind scoring, topics, negation and query expansion.
Data only: the functions that use them live in scoring.py and query.py."""

from __future__ import annotations

import re

# --- importance (seed 001): preference, task, entity ------------------------------------------------
PREFERENCE_RE = re.compile(
    r"我(很|最|更|比较|特别|超|真的|一直|从来)?(喜欢|爱吃|爱喝|爱看|爱玩|讨厌|不喜欢|受不了|偏好|习惯|不吃|不喝|过敏)|"
    r"最(喜欢|爱|讨厌)|以后(都|请|就|别|不要)|从现在(开始|起)|请(一直|总是|始终|不要)|别再|不要再|我是(素食|吃素)|"
    r"\bi (really |truly |absolutely )?(like|love|adore|enjoy|prefer|hate|dislike|can't stand|don't like|"
    r"am allergic|never eat|always)\b|\bfrom now on\b|\bplease (always|never|don't)\b|\bmy (favou?rite|preference)\b|"
    r"\bi'?m (a )?(vegetarian|vegan|allergic)\b",
    re.IGNORECASE,
)
TASK_RE = re.compile(
    r"帮我(查|找|订|买|约|安排|预约|预订|记|看|发|写)|提醒我|记得(要|去|帮)|预订|预约|订(一?张|个|机票|酒店|餐)|"
    r"安排|截止|待办|别忘了(帮|提醒)|需要(在|去)|要在.{0,6}(之前|前)|"
    r"\bremind me\b|\b(book|reserve|schedule|order|buy|cancel|reschedule)\b|\bdeadline\b|\bto-?do\b|"
    r"\b(i|we) (need|have|must|should) to\b|\bdue (on|by)\b|\bappointment\b",
    re.IGNORECASE,
)
REMEMBER_RE = re.compile(
    r"记住|别忘了|不要忘|记一下|\bremember (this|that|it)\b|\bdon'?t forget\b|\bkeep in mind\b|\bnote that\b",
    re.I,
)
CONFIRMATION_RE = re.compile(
    r"^\s*(好的|好|行|可以|确认|已收到|收到|没问题|就这样|就这么办|ok(ay)?|confirmed?|sounds good|got it|"
    r"yes,? (please|do it|that works)|perfect|deal|great,? thanks?)[\s,.!，。！~]*(谢谢|thanks?|thank you)?[\s,.!，。！~]*$",
    re.IGNORECASE,
)
DOC_NUMBER_RE = re.compile(
    r"(订单|合同|报价单?|发票|工单|快递单|身份证|护照)(编号|号码|号)|"
    r"\b(order|contract|quote|quotation|invoice|ticket|tracking|booking|confirmation|passport|id)\s*(no\.?|number|#|id)\b",
    re.IGNORECASE,
)

# --- the write policy's gate (memory/text/turns.py, issue 24) ---------------------------------------
# One clause (lower case, no surrounding punctuation) made only of acknowledgements, thanks, greetings,
# laughter or filler, in either language, possibly several in a row ("ok thanks", "嗯嗯好的", "got it,
# I'll remember that"). "我记住了" / "I'll keep that in mind" belong here: said back by the assistant
# they confirm and state nothing (the user's "记住…" is an anchor, REMEMBER_RE).
_ZH_PARTICLES = "[的呢哦呀啦吧哈嘛滴咯喔噢啊~]*"
_SMALL_TALK_ZH = (
    r"好|好的|好滴|好嘞|好吧|好呀|行|行吧|可以|嗯+|噢+|哦+|喔+|啊+|呃+|哈+|呵+|嘿+|嘻+|对|是|是的|对的|没错|没问题|"
    r"不客气|不用谢|别客气|谢谢|谢谢你|谢谢您|谢了|多谢|感谢|感谢你|感谢您|辛苦了|辛苦|收到|明白|明白了|知道了|"
    r"了解|懂了|懂|ok|okay|(?:我|我已经|已经)?(?:帮你|给你|替你)?(?:记住|记下|记好|记录|存)(?:了|啦|下来了|下了|好了)?|"
    r"我会记住|我会记得|我记得了|没事|没事儿|太好了|真棒|棒|厉害|不错|很好|挺好|你好|您好|早上好|早安|午安|晚安|"
    r"晚上好|拜拜|再见|回头见|下次聊|好久不见|哈喽|嗨|随时|乐意效劳|很高兴能?帮到你|很高兴为你服务|那就好|真的|"
    r"好开心|开心|笑死|笑死我了|绝了|牛|666+"
)
_SMALL_TALK_EN = (
    r"ok(?:ay)?|k+|sure(?: thing)?|yes|yeah|yep|yup|ya|right|alright|all right|fine|cool|nice|great|awesome|"
    r"perfect|excellent|wonderful|lovely|sweet|neat|wow|oh|ah|aha|hmm+|um+|uh+|lol|lmao|rofl|(?:ha)+h?|(?:he)+|"
    r"thanks?(?: you)?(?: so much| a lot| very much| again)?|thank u|thx|ty|cheers|much appreciated|appreciate it|"
    r"no (?:problem|worries)|np|(?:you're|you are) (?:very )?welcome|anytime|my pleasure|happy to help|"
    r"glad (?:i could|to) help|got it|gotcha|understood|noted|will do|of course|sounds good|makes sense|i see|"
    r"(?:hi|hello|hey|hiya)(?: there)?|good (?:morning|afternoon|evening|night)|bye|goodbye|bye bye|"
    r"see (?:you|ya)(?: later| soon| tomorrow)?|talk (?:to you )?(?:later|soon)|take care|have a (?:good|nice) (?:day|one|night)|"
    r"(?:i'll|i will|i'm going to|will) (?:remember|keep|note) (?:that|this|it)(?: in mind| down)?|"
    r"(?:i've|i have) (?:noted|saved|remembered|got|written down) (?:that|this|it)(?: down)?|"
    r"(?:that's|that is|it's|it is) (?:great|good|nice|cool|fine|awesome|ok|okay|perfect|all|it)|"
    r"(?:i|we) appreciate it|done|exactly|indeed|true|totally|definitely|absolutely|haha yeah"
)
SMALL_TALK_RE = re.compile(
    rf"(?:(?:{_SMALL_TALK_ZH}){_ZH_PARTICLES}|(?:{_SMALL_TALK_EN})\b)(?:\s*(?:(?:{_SMALL_TALK_ZH}){_ZH_PARTICLES}|(?:{_SMALL_TALK_EN})\b))*",
    re.IGNORECASE,
)
# Discourse fillers that may stand before a question without stating anything ("by the way, …?").
FILLER_RE = re.compile(
    r"(?:对了|请问|顺便问一下|顺便问下|我想问一下|我想问下|问一下|问下|那个|还有|另外|话说|所以|那|"
    r"by the way|btw|quick question|just wondering|just curious|so|also|and|one more thing|question|"
    r"(?:i )?(?:was|am) wondering|hey(?: there)?|remind me|tell me|can you tell me)",
    re.IGNORECASE,
)
# Recall questions that name remembering ("do you remember…?", "你还记得…吗"): they ask, they anchor nothing.
REMEMBER_QUESTION_RE = re.compile(
    r"\b(?:do|did|can|could|would|will) you (?:still |even )?remember\b|你(?:还|都)?记(?:得|住了?)[^。！!]*[吗没么]|还记得",
    re.IGNORECASE,
)
# Health and safety facts: allergies, medication, conditions, dietary restrictions, pregnancy, disability,
# blood type, emergency contacts. Searched in what a message states (not in its questions).
_CONDITIONS_ZH = (
    "糖尿病|高血压|低血压|哮喘|心脏病|冠心病|癫痫|抑郁症|焦虑症|双相|甲亢|甲减|痛风|贫血|胃溃疡|胃病|肾病|肝炎|乙肝|"
    "偏头痛|关节炎|帕金森|阿尔茨海默|老年痴呆|自闭症|多动症|过敏性鼻炎|湿疹|癌|肿瘤|中风|心律不齐|血友病|"
    "乳糖不耐受?|麸质不耐受|蚕豆病|色盲|近视|高度近视|听力|失眠症"
)
_CONDITIONS_EN = (
    "diabet\\w*|hypertension|high blood pressure|low blood pressure|asthma\\w*|heart (?:condition|disease|problem)s?|"
    "epilep\\w*|seizures?|depression|anxiety(?: disorder)?|bipolar|adhd|autis\\w*|celiac|coeliac|crohn'?s|"
    "arthritis|migraines?|anemi\\w*|anaemi\\w*|cancer|tumou?r|gout|lupus|thyroid|hypothyroid\\w*|"
    "hyperthyroid\\w*|copd|hemophilia|haemophilia|g6pd|colou?r ?blind\\w*|lactose intoleran\\w*|"
    "gluten intoleran\\w*|(?:a )?pacemaker|sleep apnea|eczema|kidney disease|liver disease|hepatitis|hiv|"
    "a stroke|parkinson'?s|alzheimer'?s|dementia|ptsd|ocd|insomnia"
)
HEALTH_RE = re.compile(
    # allergies
    r"过敏|\ballerg\w*|anaphyla\w*|\bepipen\b|"
    # medication
    r"(?:在|每天|按时|长期|一直)(?:吃|服用|打)\S{0,8}?(?:药|针|胰岛素)|服用|吃药|降压药|降糖药|胰岛素|抗凝|处方药|"
    r"\b(?:i|we)\s+(?:take|am taking|'m taking|have to take|need to take|must take|am on|'m on|use)\s+"
    r"(?:\w+\s+){0,3}?(?:medication|medicine|meds|pills?|tablets?|insulin|inhaler|antidepressants?|"
    r"blood thinners?|warfarin|metformin|statins?|birth control)\b|\bprescri(?:bed|ption)\b|"
    # conditions
    rf"(?:我|我们|俺)(?:有|患有|得了|得过|确诊了?|被诊断出?)\S{{0,4}}?(?:{_CONDITIONS_ZH})|患有|确诊|诊断出|"
    rf"\b(?:i|we)\s*(?:have|'ve got|have got|suffer from|was diagnosed with|got diagnosed with|live with|"
    rf"am living with|'m living with)\s+(?:\w+\s+){{0,2}}?(?:{_CONDITIONS_EN})|\bdiagnosed with\b|"
    r"\bi(?:'m| am)\s+(?:a\s+)?(?:diabetic|epileptic|asthmatic|anemic|anaemic|pregnant|celiac|coeliac|"
    r"lactose intolerant|gluten intolerant|hard of hearing|deaf|blind|colou?r ?blind|immunocompromised)\b|"
    # pregnancy and disability
    r"怀孕|孕期|备孕|轮椅|残疾|视障|听障|助听器|\bwheelchair\b|\bhearing aids?\b|"
    # dietary restrictions
    r"(?:不能|不可以|不敢|不宜|不准)(?:吃|喝|碰)|忌口|清真|(?:我|我们)(?:一直|现在|只)?(?:吃素|是素食者?|吃纯素)|"
    r"不吃(?:猪肉|牛肉|肉|海鲜|辣|鸡蛋|乳制品|含麸质)|"
    r"\bi\s+(?:can't|cannot|can not|mustn't|must not|am not allowed to|'m not allowed to)\s+(?:eat|drink|have)\b|"
    r"\b(?:i|we)\s*(?:only\s+)?(?:eat|keep|need|follow|am on|'m on|are on|'re on)\s+(?:a\s+)?(?:strict(?:ly)?\s+)?"
    r"(?:gluten-free|dairy-free|nut-free|halal|kosher|low-sodium|low-salt|low-sugar|vegan|vegetarian)\b|"
    r"\bi(?:'m| am)\s+(?:a\s+)?(?:strict\s+)?(?:vegetarian|vegan)\b|"
    # blood type and emergency contacts
    r"血型|\bblood type\b|紧急联系人|\bemergency contacts?\b|\bin case of (?:an )?emergency\b|\bICE contact\b",
    re.IGNORECASE,
)

# --- topics ------------------------------------------------------------------------------------------
# fmt: off
TOPICS: dict[str, tuple[str, ...]] = {
    'work': tuple(w.replace("_", " ") for w in '工作 上班 公司 同事 老板 项目 会议 加班 面试 跳槽 辞职 客户 合同 报价 work job office colleague boss manager project meeting interview career promotion client contract quote salary company coworker'.split()),
    'family': tuple(w.replace("_", " ") for w in '家人 爸爸 妈妈 父母 孩子 儿子 女儿 老公 老婆 丈夫 妻子 哥哥 姐姐 弟弟 妹妹 奶奶 爷爷 外婆 婚礼 family mom dad mother father parents kids kid children son daughter husband wife brother sister grandma grandpa wedding baby'.split()),
    'travel': tuple(w.replace("_", " ") for w in '旅行 旅游 出差 机票 航班 酒店 签证 行程 度假 机场 高铁 景点 出国 travel trip flight hotel visa vacation holiday airport itinerary journey tour road_trip camping beach'.split()),
    'food': tuple(w.replace("_", " ") for w in '吃 餐厅 饭 菜 火锅 咖啡 茶 早餐 午餐 晚餐 做饭 烘焙 甜点 素食 food eat restaurant dinner lunch breakfast cook cooking recipe coffee tea bake baking dessert vegetarian pizza sushi'.split()),
    'health': tuple(w.replace("_", " ") for w in '健康 医院 医生 生病 感冒 发烧 药 体检 过敏 健身 跑步 睡眠 减肥 health hospital doctor sick ill flu fever medicine allergy allergic gym workout run running sleep diet therapy injury yoga'.split()),
    'study': tuple(w.replace("_", " ") for w in '学习 考试 课程 学校 大学 论文 作业 老师 毕业 读书 复习 培训 考研 study exam course class school university college thesis homework teacher graduate degree learn learning lecture'.split()),
    'tech': tuple(w.replace("_", " ") for w in '代码 编程 程序 函数 电脑 手机 软件 服务器 数据库 算法 bug python java sql code coding program programming function computer laptop software server database algorithm api app javascript deploy'.split()),
    'finance': tuple(w.replace("_", " ") for w in '钱 工资 存款 投资 股票 基金 理财 贷款 房贷 信用卡 账单 发票 报销 预算 money salary savings invest investment stock fund loan mortgage credit_card bill invoice budget tax bank payment refund'.split()),
    'shopping': tuple(w.replace("_", " ") for w in '买 购物 订单 快递 下单 退货 网购 商场 打折 优惠 淘宝 京东 buy bought shopping order delivery package return refund discount sale store shop purchase amazon'.split()),
    'entertainment': tuple(w.replace("_", " ") for w in '电影 电视剧 音乐 演唱会 游戏 小说 综艺 动漫 画画 绘画 唱歌 movie film series show music concert game gaming novel book painting paint art song guitar piano dance festival museum'.split()),
    'pets': tuple(w.replace("_", " ") for w in '宠物 猫 狗 小猫 小狗 猫咪 狗狗 养猫 养狗 pet pets cat dog puppy kitten vet'.split()),
    'sports': tuple(w.replace("_", " ") for w in '运动 足球 篮球 网球 游泳 比赛 骑车 爬山 徒步 滑雪 sport sports football soccer basketball tennis swim swimming match cycling hiking hike skiing marathon'.split()),
    'home': tuple(w.replace("_", " ") for w in '家里 房子 搬家 租房 装修 家具 房东 邻居 home house apartment move moved moving rent landlord furniture neighbor renovation'.split()),
}
# fmt: on

# --- query understanding -----------------------------------------------------------------------------
NEGATION_RE = re.compile(
    r"(?:不要|别|不想|不需要|不用|不必|除了|排除|不再)(?:再)?(?:给我)?(?:推荐|建议|提|说|要|买|看|介绍)?(?P<zh>[\u4e00-\u9fffA-Za-z0-9]{1,12})|"
    r"\b(?:don'?t|do not|never|no more|stop|avoid|without|except|not)\s+(?:(?:suggest|recommend|show|give|mention|"
    r"want|need|like|buy|use)(?:ing)?\s+(?:me\s+)?)?(?:any\s+|more\s+|the\s+|a\s+|an\s+)?(?P<en>[a-z][a-z -]{1,40}?)"
    r"(?=[.,;!?]|$| and | or | but | please)",
    re.IGNORECASE,
)
DOC_TYPE_ALIASES: dict[str, tuple[str, ...]] = {
    "bill": ("账单", "发票", "invoice", "bill", "receipt", "收据", "单据"),
    "quote": ("报价单", "报价", "quote", "quotation", "estimate"),
    "contract": ("合同", "协议", "contract", "agreement"),
    "order": ("订单", "order", "purchase"),
    "ticket": ("机票", "车票", "门票", "ticket", "boarding pass"),
    "report": ("报告", "周报", "月报", "report"),
}

EN_STOPWORDS = frozenset(
    "a an the and or but if then so of to in on at by for with from about as into over after before is are was "
    "were be been being am do does did doing have has had having i me my mine myself you your yours he him his "
    "she her hers it its we us our they them their what which who whom whose when where why how this that these "
    "those there here can could would should will shall may might must not no yes just very too also than up "
    "down out off again once all any both each few more most other some such only own same s t don now ever "
    "really tell told say said think know get got like go going went one let".split()
)
ZH_STOPWORDS = frozenset(
    "的 了 吗 呢 吧 啊 呀 哦 嗯 是 在 有 和 与 就 也 都 还 很 我 你 他 她 它 们 这 那 个 么 什么 怎么 哪 谁".split()
)
# Characters of Chinese question words (什么 哪里 谁 多少 几 吗 呢 怎么 为什么): never useful as keywords.
ZH_QUESTION_CHARS = frozenset("什么哪谁几吗呢怎为啥")
ZH_QUESTION_WORDS = frozenset("多少 是否 有没 是不 打算 分别 请问 一下 知道 记得".split())

# Everyday synonyms folded to one form before keyword indexing, so "我爸" matches "爸爸" and "dad" matches
# "father". General kinship and household words only: no topic-specific tuning.
ZH_CANONICAL: dict[str, tuple[str, ...]] = {
    "爸爸": ("父亲", "老爸", "我爸", "俺爸", "老爹", "爸"),
    "妈妈": ("母亲", "老妈", "我妈", "俺妈", "妈"),
    "丈夫": ("老公", "先生", "爱人"),
    "妻子": ("老婆", "媳妇", "太太"),
    "孩子": ("小孩", "娃娃", "孩儿"),
    "男友": ("男朋友",),
    "女友": ("女朋友",),
    "猫咪": ("猫猫", "小猫", "猫"),
    "狗狗": ("小狗", "狗子", "狗"),
    "工作": ("上班", "职位", "岗位"),
    "公司": ("单位", "东家"),
}
EN_CANONICAL: dict[str, tuple[str, ...]] = {
    "father": ("dad", "daddy", "papa", "pa"),
    "mother": ("mom", "mum", "mommy", "mummy", "mama", "ma"),
    "husband": ("hubby",),
    "child": ("kid", "kids", "children", "child", "kiddo"),
    "cat": ("kitty", "kitten", "kittens"),
    "dog": ("puppy", "puppies", "pup", "doggo"),
    "job": ("work", "career", "employment"),
}

# A query that asks about the present or the latest state: only then does recency weigh in ranking.
RECENCY_RE = re.compile(
    r"最近|最新|现在|目前|如今|刚刚|刚才|这几天|近期|近来|还在|仍然|眼下|"
    r"\b(recent|recently|latest|lately|now|currently|current|these days|nowadays|still|anymore|newest|last time)\b",
    re.IGNORECASE,
)

# A time relative to another event the user told of: "before I moved", "after we got married", "since
# my son was born", "搬家之前", "我结婚以后" (memory/recall/retrieval.py dates it by the memory that tells
# of the event). The clause is the event's words; a clause that is itself a time (三年以前, 5月之前, 上次) or
# speaks of the conversation ("你还记得我之前说过什么", "what I told you before") is none.
EVENT_ANCHOR_RES = (
    re.compile(
        r"\b(?P<rel>before|after|since) (?P<clause>(?:i|we|my \w+|our \w+)\s+\w+(?:\s+\w+){0,3})",
        re.IGNORECASE,
    ),
    re.compile(r"(?P<clause>[\u4e00-\u9fff]{2,8}?)(?P<rel>之前|以前|之后|以后)"),
)
EVENT_ANCHOR_NOT_CLAUSE_RE = re.compile(
    r"[0-9０-９年月日号天周点]|星期|礼拜|小时|分钟|时候|上次|刚才|记得|记住|告诉|[说提聊问讲][过了的到]"
    r"|\b(?:said|told|asked|mentioned|talked|remember|last time)\b",
    re.IGNORECASE,
)
# A named time left open on one side (issue 28): "before 2020", "2020年以前", "since May", "5月以来",
# "从2020年起", "after March", "2023年以后". Read around the month or period the question names: the
# words after it (Chinese) or before it (English, also inside the slot's own words: "since 2020").
TIME_BOUND_AFTER_ZH_RE = re.compile(
    r"^\s*的?(?P<rel>以前|之前|以后|之后|以来|起|开始|前(?![天日年月周个后])|后(?![来天日年月周个]))"
)
LAST_WEEK_RE = re.compile(r"上个?(?:周|星期|礼拜)|last week", re.IGNORECASE)  # a week, not a day
TIME_BOUND_SINCE_ZH_RE = re.compile(r"(?:自从?|从)\s*$")
_TIME_BOUND_EN = r"(?P<rel>before|until|till|prior to|up to|after|since|from|starting(?: in| from)?)\s+"
TIME_BOUND_EN_RE = re.compile(rf"\b{_TIME_BOUND_EN}$", re.IGNORECASE)  # the words before the time
TIME_BOUND_EN_LEAD_RE = re.compile(_TIME_BOUND_EN, re.IGNORECASE)  # the time's own first word ("since 2020")
TIME_BOUNDS = {
    "before": "before",
    "until": "before",
    "till": "before",
    "prior to": "before",
    "up to": "before",
    "以前": "before",
    "之前": "before",
    "前": "before",
    "after": "after",
    "以后": "after",
    "之后": "after",
    "后": "after",
    "since": "since",
    "from": "since",
    "starting": "since",
    "starting in": "since",
    "starting from": "since",
    "以来": "since",
    "起": "since",
    "开始": "since",
}
EVENT_ANCHOR_SUBJECT_RE = re.compile(r"^(?:在|当|等|我们|咱们|我|你)+")

# What kind of answer a question wants, and what a memory holding such an answer contains (zh + en).
_ZH_NUM = "[0-9０-９一二两三四五六七八九十百千万几]"
ANSWER_TYPES: dict[str, tuple[re.Pattern[str], re.Pattern[str]]] = {
    "quantity": (
        re.compile(r"多少|几[个只次天年岁桌位口家件本回]|\bhow (many|much|long|old|often|far)\b", re.I),
        re.compile(
            rf"{_ZH_NUM}+\s*[个只次天年岁桌位口家件本回元块万%]|\d|\b(one|two|three|four|five|six|seven|eight|nine|ten|dozen|hundred)\b",
            re.I,
        ),
    ),
    "time": (
        re.compile(
            r"什么时候|哪天|几号|几点|哪一年|哪年|哪个月|\bwhen\b|\bwhat (time|date|day|year|month)\b", re.I
        ),
        re.compile(
            r"[0-9一二三四五六七八九十]+[月号日点]|今天|明天|昨天|前天|后天|上周|下周|周[一二三四五六日末]|去年|今年|明年|"
            r"\b(yesterday|today|tomorrow|tonight|last|next|ago|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
            r"january|february|march|april|may|june|july|august|september|october|november|december|\d{4})\b",
            re.I,
        ),
    ),
    "organisation": (
        re.compile(
            r"哪家(公司|单位|医院|银行|餐厅|店)|什么公司|\b(which|what) (company|firm|employer|store|shop|bank)\b|\bwork(s|ed)? (at|for)\b",
            re.I,
        ),
        re.compile(
            r"[\u4e00-\u9fff]{2,6}(科技|公司|集团|银行|游戏|工作室|医院|大学|餐厅|酒店)|\b[A-Z][a-z]+ (Inc|Ltd|Corp|Company|Bank|Studio|Labs?)\b|\boffer\b",
            re.I,
        ),
    ),
}

# A query about the past of a fact that changed: superseded memories are not pushed down for it.
PAST_RE = re.compile(
    r"以前|之前|从前|原来|过去|曾经|早先|当初|当时|先前|搬家前|什么时候搬|哪年搬|几月搬|什么时候换|什么时候辞|"
    r"什么时候开始|什么时候离|还没搬|老地址|旧号码|原先|"
    r"\b(before|previously|used to|formerly|former|earlier|in the past|previous|originally|at first|"
    r"old (address|job|number|place|car|school|phone)|when did i (move|start|quit|leave|switch|change|stop|get|buy|sell|join)|"
    r"how long did i|did i (use|ever)|back when|history of)\b",
    re.IGNORECASE,
)

# Negations that ask for something to be left out ("don't recommend X") vs. ones that state or check a
# fact about the user ("I don't like X, right?"). Only the former demote what they name.
REQUEST_VERB_RE = re.compile(
    r"推荐|建议|提到?|介绍|给我|推送|安排|列出|显示|展示|发给?我|告诉我|"
    r"\b(suggest|recommend|show|give|mention|list|include|offer|propose|remind|send|tell me about|bring up)\b",
    re.IGNORECASE,
)
FIRST_PERSON_NEGATION_RE = re.compile(
    r"(?:我|我们|俺)(?:其实|并|从来|一直|根本|真的|本来|也|都|就|确实|平时|现在)*$|"
    r"\b(?:i|we|i'm|i am|we're|we are)(?:\s+(?:really|just|actually|honestly|truly|also|still|usually))*\s*$|"
    r"\b(?:is|was|are|were|isn't|wasn't|aren't)\s*$",
    re.IGNORECASE,
)
VERIFICATION_RE = re.compile(
    r"对吗|对吧|是吧|是吗|对不对|是不是|没错吧|没错吗|吧[？?]|我说过|我是不是说过|我记得我|"
    r"\b(right|correct|isn't it|is it|am i right|is that right|is that true|didn't i (say|tell|mention)|"
    r"did i (say|tell|mention)|true or false|do i remember|have i told you)\b\s*[?？]?",
    re.IGNORECASE,
)
# What a statement or check is about: "I don't like watching comedy movies" → "watching comedy movies"
CHECKED_RE = re.compile(
    r"(?:我|我们)(?:其实|并|从来|一直|根本|真的|本来|也|都|平时)*(?:不|没|从不|不太|不怎么|讨厌|受不了|不再)"
    r"(?:喜欢|爱|想|会|要|吃|喝|看|玩|听|用|去|是|养|抽)?(?P<zh>[\u4e00-\u9fffA-Za-z0-9]{1,12})|"
    r"\bI(?:'m| am)?\s+(?:really |just |actually |honestly )?(?:don'?t|do not|never|didn'?t|did not|am not|not|hate|dislike|"
    r"can'?t stand|no longer)\s+(?:(?:like|love|enjoy|eat|drink|watch|want|play|use|listen to|go to|have|own|"
    r"drive|know|speak|smoke)(?:ing)?\s+)?(?P<en>[a-z][a-z -]{1,40}?)(?=[.,;!?]|$| and | or | but | right| anymore)|"
    r"(?P<subject>[\w -]{2,30}?)\s+(?:is|was|are|were)(?: not|n't)\s+(?P<object>my [a-z -]{2,30}?)(?=[.,;!?]|$| right)",
    re.IGNORECASE,
)

# --- facts that change, said as a change (memory/write/supersession.py CHANGE_RULES, issue 24) -------
# Regex alternations (longest first where one is a prefix of another). Occupations are heads of a job
# title: "I'm a (high school) librarian", "我是一名(小学语文)老师".
EN_OCCUPATIONS = (
    r"stay-at-home (?:dad|mom|mum|parent)|sous-chef|police officer|social worker|civil servant|sales rep|"
    r"real estate agent|data scientist|product manager|software engineer|ux researcher|qa lead|team lead|"
    r"graduate student|grad student|phd student|mail carrier|nurse|doctor|physician|surgeon|dentist|"
    r"pharmacist|veterinarian|vet|teacher|tutor|professor|lecturer|librarian|lawyer|attorney|solicitor|"
    r"paralegal|judge|accountant|bookkeeper|auditor|engineer|developer|programmer|designer|architect|"
    r"analyst|scientist|researcher|tester|manager|director|lead|consultant|advisor|adviser|recruiter|agent|"
    r"broker|banker|trader|clerk|cashier|barista|chef|cook|baker|waiter|waitress|bartender|driver|pilot|"
    r"mechanic|electrician|plumber|carpenter|builder|farmer|firefighter|officer|soldier|paramedic|"
    r"therapist|psychologist|counsell?or|journalist|reporter|editor|writer|author|photographer|artist|"
    r"musician|actor|actress|model|instructor|coach|trainer|receptionist|secretary|assistant|intern|"
    r"student|salesperson|representative|technician|operator|cleaner|nanny|caregiver|housewife|homemaker|"
    r"freelancer|entrepreneur|founder|ceo|cto|cfo|translator|interpreter|courier|postman|midwife|"
    r"dietitian|nutritionist|youtuber|streamer|retiree|pensioner|surveyor|optician|welder|miner|sailor"
)
EN_WORK_FIELDS = (
    r"delivery driving|driving for (?:the |an? )?[\w-]+|real estate|social work|the restaurant business|"
    r"the army|the military|the police|the navy|teaching|nursing|accounting|freelancing|law|retail|"
    r"medicine|sales|marketing|finance|banking|consulting|journalism|design|engineering|tech|academia|"
    r"politics|insurance|hospitality|catering|publishing|advertising|tutoring|bartending|waitressing|"
    r"modell?ing|acting|coaching|farming|programming|photography|construction|my job|my career"
)
EN_SCHOOL_WORDS = (
    r"high school|middle school|business school|law school|medical school|school|high|college|university|"
    r"academy|institute|polytechnic|conservatory|seminary|uni"
)
EN_ORG_WORDS = (
    r"media|inc|ltd|llc|corp|corporation|company|co|bank|labs?|systems|group|consulting|analytics|logistics|"
    r"energy|insurance|foods|pharmacy|clinic|hospital|robotics|travel|steel|technologies|tech|studios?|"
    r"partners|capital|holdings|solutions|software|games|airlines|motors|agency"
)
EN_BUSINESSES = (
    r"coffee shop|food truck|bakery|cafe|café|restaurant|shop|store|business|company|firm|startup|studio|"
    r"salon|bar|pub|agency|clinic|practice|gym|bookshop|bookstore|farm"
)
EN_DWELLINGS = r"room|flat|apartment|house|place|studio|condo|home|cottage|loft"
ZH_OCCUPATIONS = (
    r"心理咨询师|全职妈妈|全职爸爸|家庭主妇|自由职业者?|律师助理|工程师|设计师|分析师|摄影师|咖啡师|药剂师|"
    r"建筑师|理发师|营养师|会计师|程序员|研究员|销售员|收银员|快递员|外卖员|服务员|管理员|公务员|技术员|"
    r"研究生|博士生|实习生|创业者|合伙人|创始人|老师|教师|医生|护士|司机|骑手|歌手|选手|会计|律师|柜员|"
    r"店员|职员|员工|教练|顾问|经理|总监|主管|助理|秘书|记者|编辑|作家|画家|厨师|电工|木工|焊工|中介|老板|"
    r"店主|店长|组长|主任|校长|院长|工人|农民|警察|军人|演员|模特|主播|博主|翻译|导游|保安|保姆|学生|导演|"
    r"专员|代表|教授|讲师|社工|护工|月嫂"
)
ZH_WORK_FIELDS = (
    r"数据分析|房产中介|自媒体|销售|市场|运营|设计|开发|财务|人事|行政|客服|分析|产品|研发|测试|编程|翻译|"
    r"咨询|外贸|电商|物流|审计|法务|保险|直播|金融|投资|投行|新闻|出版|广告|公关|采购|后端|前端|算法|剪辑|"
    r"餐饮|培训|家教|代购|装修"
)
ZH_SCHOOL_SUFFIXES = r"职业技术学院|商学院|研究院|研究所|幼儿园|大学|学院|中学|小学|学校|高中|初中|夜校|附中|一中|二中|三中|职高|技校"
ZH_BUSINESSES = r"工作室|面包店|咖啡馆|餐厅|诊所|超市|公司|店|馆|厂"

# Questions about an attribute that supersession tracks (memory/write/supersession.py keys): the
# memories stating it are candidates and rank higher ("我以前开什么车？" finds "我开的是一辆丰田卡罗拉").
ATTRIBUTE_QUESTIONS: dict[str, re.Pattern[str]] = {
    key: re.compile(pattern, re.IGNORECASE)
    for key, pattern in {
        "residence": r"住在?哪|住哪|住在什么|住的城市|哪个城市|搬到?哪|搬家|家在哪|常驻哪|在哪个城市生活|\b(where|which city|what city|what town)\b.*\b(live|lived|living|moved?|home|based)\b|\bwhere is (?:my )?home\b|\bwhere am i based\b|\bmove[ds]?\b.*\bwhen\b|\bwhen did i move\b",
        "employer": r"哪家公司|什么公司|哪个公司|在哪(?:里|儿)?(工作|上班)|东家|单位|\b(which|what) (company|firm|employer)\b|\bwhere do i work\b|\bwhere did i work\b|\bwork(ed)? for\b|\bwho (?:employs|is my employer)|\bemploys me\b|\bmy employer\b",
        "job": r"什么工作|做什么工作|干什么工作|做什么的|干什么的|职业|职位|谋生|还在当|\bwhat(?:'s| is| was) my (?:job|role|profession|occupation)\b|\bmy (?:current )?(?:job|profession|occupation)\b|\bwhat do i do (?:for (?:a )?(?:living|work)|these days|now)\b|\bstill working as\b",
        "school": r"哪个学校|什么学校|哪所|在哪(?:里|儿)?(读书|上学|念书)|\b(which|what) (school|college|university)\b|\bwhere (?:am i studying|do i study)\b|\bschool do i\b|\buniversity am i\b",
        "relationship": r"单身|对象|感情|男朋友|女朋友|结婚|订婚|已婚|交往|伴侣|\b(single|relationship|married|engaged|girlfriend|boyfriend|partner|seeing anyone|dating)\b",
        "children": r"几个孩子|孩子|儿子|女儿|\b(kids?|children|child|sons?|daughters?)\b",
        "pet": r"猫|狗|宠物|\b(cats?|dogs?|pets?)\b",
        "diet": r"饮食|吃素|吃肉|素食|\b(diet|vegetarian|vegan|eat meat)\b",
        "allergy": r"过敏|\ballerg",
        "phone": r"手机号|电话|号码|\b(phone|number|mobile|cell)\b",
        "email": r"邮箱|邮件地址|\be-?mail\b",
        "car": r"开什么车|什么车|哪款车|车型|\bcar\b|\bdrive\b",
        "favourite": r"最喜欢|\bfavou?rite\b",
    }.items()
}

# Questions about a category of the user's life (issue 40): "我有什么爱好？", "What are my hobbies?", "我教
# 什么科目？", "tell me about my family". No word of the question need be in the memory that answers it
# ("I play the cello on weekends"): recall (memory/recall/retrieval.py) takes the user's memories stating a
# value of the category as candidates, and their relevance reaches CATEGORY_RELEVANCE
# (memory/recall/relevance.py). `CATEGORY_FACTS`: the supersession keys (memory/write/supersession.py)
# whose memories state the category; `CATEGORY_STATEMENTS`: the words of a statement of it, said by the
# user of themself (see `states_category`). Forget never selects by category: these are no
# ATTRIBUTE_QUESTIONS, which forget reads (memory/recall/relevance.py `forget_terms`).
_ZH_NOT_ME = (
    r"(?!们|的?(?:女儿|儿子|孩子|老公|老婆|丈夫|妻子|爱人|爸|妈|父母|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|朋友|同事|"
    r"同学|室友|邻居|男朋友|女朋友|对象|老板))"
)
_HOBBIES_ZH = (
    r"大提琴|小提琴|钢琴|吉他|古筝|二胡|琵琶|笛子|尤克里里|架子鼓|萨克斯|游泳|跑步|夜跑|晨跑|慢跑|钓鱼|爬山|徒步|骑行|骑车|"
    r"滑雪|滑冰|瑜伽|健身|摄影|拍照|画画|绘画|书法|下棋|象棋|围棋|羽毛球|乒乓球|篮球|足球|网球|排球|高尔夫|露营|烘焙|"
    r"园艺|种花|跳舞|广场舞|唱歌|编织|攀岩|冲浪|潜水|看书|读书|阅读|看电影|追剧|打游戏|玩游戏|桌游|拼图|集邮|手工|"
    r"做饭|烹饪|旅行|旅游|写作|练字|太极|马拉松"
)
_INSTRUMENTS_EN = (
    r"cello|violin|viola|piano|keyboard|guitar|bass|drums|flute|clarinet|saxophone|sax|trumpet|ukulele|harp|"
    r"chess|tennis|golf|basketball|football|soccer|badminton|volleyball|baseball|hockey|squash|"
    r"table tennis|ping pong|board games|video games|games|cards|poker|pickleball"
)
_HOBBY_VERBS_EN = (
    r"swim|jog|hike|fish|paint|draw|knit|sew|bake|garden|cycle|bike|climb|boulder|surf|ski|skate|dance|sing|"
    r"row|sail|dive|camp|read|write|cook|crochet|meditate"
)
_HOBBY_ING_EN = (
    r"swimming|running|jogging|hiking|fishing|painting|drawing|knitting|sewing|baking|gardening|cycling|"
    r"biking|climbing|bouldering|surfing|skiing|skating|dancing|singing|rowing|sailing|diving|camping|"
    r"reading|writing|cooking|crocheting|yoga|photography|pottery|woodworking|birdwatching|bowling|"
    r"meditation|karaoke|calligraphy|chess|tennis|golf"
)
_FAMILY_ZH = (
    r"女儿|儿子|孩子|老公|老婆|丈夫|妻子|爱人|爸爸|妈妈|父母|爸妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|"
    r"宝宝|家人|兄弟姐妹"
)
_FAMILY_EN = (
    r"wife|husband|partner|sons?|daughters?|kids?|children|child|baby|mom|mum|dad|mother|father|parents|"
    r"brothers?|sisters?|siblings?|grandma|grandpa|grandmother|grandfather|family"
)
CATEGORY_QUESTIONS: dict[str, re.Pattern[str]] = {
    key: re.compile(pattern, re.IGNORECASE)
    for key, pattern in {
        "hobby": r"爱好|兴趣|业余|消遣|闲暇|空闲时间|(?:平时|周末|有空|没事)(?:都|一般|喜欢|爱)*(?:做|干|玩)(?:些|点)?什么|"
        r"喜欢(?:做|干|玩)(?:些|点)?什么|\bhobb(?:y|ies)\b|\binterests\b|\bpastimes?\b|\b(?:free|spare) time\b|"
        r"\bfor fun\b|\bwhat do i (?:like|love|enjoy) (?:to do|doing)\b|\bwhat (?:activities|sports)\b",
        "likes": r"我(?:都|平时|一般)?(?:喜欢|爱)(?:些)?什么|\bwhat (?:do|things do) i (?:like|love|enjoy)\b|\bwhat am i into\b",
        "teaching": r"教(?:的是)?(?:什么|哪)|什么(?:科目|学科|课)|哪(?:个|门)(?:科目|学科|课)|"
        r"\bwhat (?:subjects?|classes|courses|grades?|level)\b.*\bteach|\bwhat do i teach\b|\bwhere do i teach\b",
        "job": r"什么工作|做什么的|干什么的|职业|\bwhat do i do\b(?! (?:on|at|in|with|about|when|if|to|for (?:fun|lunch|dinner)))|"
        r"\bmy (?:job|career|profession|occupation)\b|\bwhat(?:'s| is) my (?:job|work)\b",
        "work": r"在哪(?:里|儿|家)?(?:工作|上班)|哪家公司|什么公司|单位|\bwhere do i work\b|\bwho do i work for\b|"
        r"\bmy (?:employer|workplace|company)\b",
        "family": r"家人|家里(?:有|人)|家庭(?:成员|情况)?|亲人|\bmy family\b|\bfamily members?\b|\bmy relatives\b|"
        r"\bwho(?:'s| is) in my family\b",
        "pet": r"宠物|养了?什么(?:动物)?|\bpets?\b|\bwhat animals?\b",
        "diet": r"饮食|忌口|吃素|素食|(?:能|可以|不)吃什么|\bdiet(?:ary)?\b|\beating habits\b|\bwhat (?:can't|can|don't) i eat\b|"
        r"\bvegetarian\b|\bvegan\b",
        "home": r"住在?哪|住在什么|家在哪|\bwhere do i live\b|\bwhere(?:'s| is) (?:my )?home\b|\bwhere am i based\b",
        "car": r"开什么车|什么车|哪款车|\bwhat (?:car|vehicle)\b|\bwhat do i drive\b|\bmy car\b",
    }.items()
}
# a question about a relative's or friend's life ("我女儿有什么爱好？", "what are my wife's hobbies"): of the
# categories, only the family is the user's own
CATEGORY_OTHER_PERSON_RE = re.compile(
    r"我的?(?:女儿|儿子|孩子|老公|老婆|丈夫|妻子|爱人|爸爸|妈妈|父母|爸妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|朋友|同事|"
    r"同学|室友|邻居|男朋友|女朋友|对象|老板)|my (?:wife|husband|partner|sons?|daughters?|kids?|children|child|baby|"
    r"mom|mum|dad|mother|father|parents|brothers?|sisters?|grandma|grandpa|friends?|boss|colleagues?|"
    r"roommates?|neighbou?rs?|boyfriend|girlfriend)",
    re.IGNORECASE,
)
CATEGORY_FACTS: dict[str, tuple[str, ...]] = {
    "hobby": (),
    "likes": ("favourite",),
    "teaching": ("job",),
    "job": ("job", "employer"),
    "work": ("employer",),
    "family": ("relationship", "children"),
    "pet": ("pet",),
    "diet": ("diet", "allergy"),
    "home": ("residence",),
    "car": ("car",),
}
_HOBBY_STATEMENT = (
    rf"(?<![他她它])我{_ZH_NOT_ME}[^，。！？；,.!?;\n]{{0,12}}?(?:{_HOBBIES_ZH})|"
    rf"\b(?:I|I'm|I've)\s+(?:[\w']+\s+){{0,3}}?(?:play(?:s|ing)?|practi[cs](?:e|ing))\s+(?:the\s+|a\s+|some\s+)?"
    rf"(?:{_INSTRUMENTS_EN})\b|"
    rf"\bI\s+(?:(?:also|often|usually|sometimes|regularly|still|like to|love to|enjoy|go|do)\s+){{0,2}}"
    rf"(?:{_HOBBY_VERBS_EN})(?:s)?\b(?!\s+(?:to|for)\s)|"
    rf"\bI\s+(?:(?:also|often|usually|really|just|still)\s+)?(?:go|love|enjoy|like|do|am into|'m into)\s+"
    rf"(?:(?:some|a lot of|lots of)\s+)?(?:{_HOBBY_ING_EN})\b"
)
_LIKING_STATEMENT = (
    rf"(?<![他她它])我{_ZH_NOT_ME}(?:也|很|最|特别|超|还|一直|真的|非常|都)*(?:喜欢|爱(?:吃|喝|看|玩|听)|热爱|迷上)|"
    r"\bI\s+(?:(?:really|also|just|still|totally|absolutely)\s+)?(?:like|love|enjoy|adore)\b(?!\s+(?:you|it when))|"
    r"\bmy favou?rite\b"
)
CATEGORY_STATEMENTS: dict[str, re.Pattern[str]] = {
    key: re.compile(pattern, re.IGNORECASE)
    for key, pattern in {
        "hobby": _HOBBY_STATEMENT,
        "likes": f"{_HOBBY_STATEMENT}|{_LIKING_STATEMENT}",
        "teaching": rf"(?<![他她它])我{_ZH_NOT_ME}[^，。！？；,.!?;\n]{{0,12}}?(?:老师|教师|教授|讲师|助教|家教|教)|"
        r"\bI\s+(?:(?:also|still|now|currently)\s+)?(?:teach|tutor|lecture)\b|"
        r"\bI(?:'m| am|'ve been| have been)\s+(?:a|an)\s+(?:[\w-]+\s+){0,3}?(?:teacher|tutor|professor|lecturer)\b",
        "job": rf"(?<![他她它])我{_ZH_NOT_ME}(?:现在|目前|也|还)?(?:是|当)(?:一名|一个|一位|个|名)?[\u4e00-\u9fff]{{0,8}}?"
        rf"(?:{ZH_OCCUPATIONS})|"
        rf"\bI(?:'m| am|'ve been| have been| work as)\s+(?:a|an)\s+(?:[\w-]+\s+){{0,3}}?(?:{EN_OCCUPATIONS})\b",
        "work": rf"(?<![他她它])我{_ZH_NOT_ME}(?:现在|目前|也|还)?在[^，。！？；,.!?;\n]{{1,16}}?(?:工作|上班|任职|实习)|"
        r"\bI\s+(?:(?:now|currently|still)\s+)?work\s+(?:at|for|in)\b",
        "family": rf"(?<![他她它])我(?:的|们家|家)?(?:有)?[^，。！？；,.!?;\n]{{0,6}}?(?:{_FAMILY_ZH})|"
        rf"\b(?:my|our)\s+(?:[\w-]+\s+)?(?:{_FAMILY_EN})\b|\bI\s+have\s+(?:\w+\s+){{0,2}}?(?:{_FAMILY_EN})\b",
        "pet": r"(?<![他她它])我(?:家|们家)?(?:里)?(?:有|养了?|的)[^，。！？；,.!?;\n]{0,6}?(?:狗|猫|兔子|仓鼠|鹦鹉|乌龟|金鱼|宠物)|"
        r"\b(?:my|our)\s+(?:[\w-]+\s+)?(?:dog|cat|puppy|kitten|rabbit|bunny|hamster|parrot|turtle|tortoise|"
        r"goldfish|pet)s?\b|\bI\s+(?:have|own|adopted|got)\s+(?:a|an|two|three)\s+(?:[\w-]+\s+){0,2}?"
        r"(?:dog|cat|puppy|kitten|rabbit|bunny|hamster|parrot|turtle|beagle|poodle|labrador|retriever|"
        r"terrier|corgi|husky|bulldog|spaniel|tabby)s?\b",
        "diet": r"吃素|素食|不吃(?:肉|猪肉|牛肉|海鲜|辣|鱼|鸡蛋)|忌口|清真|过敏|"
        r"\bI(?:'m| am|'ve been| have been)\s+(?:a\s+)?(?:strict\s+)?(?:vegetarian|vegan|pescatarian)\b|"
        r"\bI\s+(?:don't|do not|can't|cannot|never)\s+eat\b|\b(?:gluten|dairy|nut)-free\b|\ballergic to\b",
        "home": rf"(?<![他她它])我{_ZH_NOT_ME}(?:现在|目前|一直|也)?住在|\bI\s+(?:(?:now|currently|still)\s+)?live\s+in\b",
        "car": r"(?<![他她它])我(?:现在|目前)?开(?:的是)?(?:一辆)?|我的车|"
        r"\bI\s+(?:(?:now|still)\s+)?drive\s+(?:a|an)\b|\bmy\s+(?:new\s+|old\s+)?car\b",
    }.items()
}


# A message that speaks of the speaker's own life (chat recall's gate, memory/chat/recall_gate.py):
# first-person words, one's family as Chinese names it without a pronoun ("妈妈每天吃什么药", "女儿在学
# 什么"), and what was said before ("do you remember", "上次说的"). "me" and "我" as the object of a request
# ("give me three tips", "帮我写一首诗", "告诉我…") do not count: `SELF_REQUEST_RE` is removed first.
SELF_RE = re.compile(
    r"我|咱|俺|自己|"
    r"(?:^|[^\u4e00-\u9fff])(?:老公|老婆|爱人|女儿|儿子|孩子|爸爸|妈妈|爸妈|父母|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|"
    r"男朋友|女朋友|对象|家里|家人|上次|之前说|你还记得|记不记得)|"
    r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|we'd|our|ours|ourselves|us|"
    r"remember|last time|you said|i told you)\b",
    re.IGNORECASE,
)
SELF_REQUEST_RE = re.compile(
    r"(?:帮|给|告诉|教|替|跟|为|陪)我|让我(?:们)?(?:看看|想想|知道)|"
    # asking how to do something: the speaker only asks ("我该怎么跟新同事打招呼", "how do I bake bread");
    # "how do I get to my office" still speaks of self through "my"
    r"^\W*我(?:们)?(?:该|应该|要|可以)?(?:怎么|怎样|如何)(?:才能|才可以)?|"
    r"\bhow\s+(?:do|should|can|could|would|might)\s+(?:i|we)\b|"
    r"\b(?:give|tell|help|show|teach|let|get|send|make|find|write|bring)\s+(?:me|us)\b|\blet'?s\b",
    re.IGNORECASE,
)

# --- write hygiene for chat turns (issue 40): requests, and the "remember" anchor kept out of the text --
# One clause (memory/text/turns.py `clauses`: no surrounding punctuation) that only asks to remember: the
# anchor of the message, never part of what is stored ("记住：我的车牌号是…", "my locker is 42, remember
# that", "Please remember: …", "请记住哦"). A clause that starts with one keeps what follows
# (REMEMBER_LEAD_RE): "remember that I moved to Berlin", "记住我的车位是B2-117", "别忘了我对花生过敏";
# "don't forget my sister's birthday" and "别忘了帮我订票" say what to do, they keep their words.
_REMEMBER_POLITE_EN = r"(?:(?:please|pls|plz|and|oh|also|so|just|now|but)\s*,?\s+)*"
_REMEMBER_VERB_EN = (
    r"(?:remember|don'?t forget|do not forget|never forget|keep in mind|bear in mind|please note|take note|"
    r"make a note|note|memori[sz]e|i (?:want|need) you to remember|make sure (?:you|to) remember)"
)
_REMEMBER_POLITE_ZH = r"(?:请你?|你要|你得|帮我|一定要|千万|麻烦你?|务必)?"
_REMEMBER_VERB_ZH = r"(?:记住|记好|记着|记下来?|记一下|别忘了|别忘记|不要忘了|不要忘记|不要忘|千万别忘了?)"
_ZH_PARTICLES_REMEMBER = r"(?:哦|啊|喔|哈|呀|吧|啦|了|哟|噢|嘛|好吗|好不好|行吗|可以吗)*"
REMEMBER_CLAUSE_RE = re.compile(
    rf"{_REMEMBER_POLITE_EN}{_REMEMBER_VERB_EN}(?:\s+(?:this|that|it|these|the following))?"
    rf"(?:\s+(?:for me|for later|please|ok|okay|for the future))*|"
    rf"{_REMEMBER_POLITE_ZH}{_REMEMBER_VERB_ZH}(?:这个|这件事|这点|这些|以下|下面的?|一下)?{_ZH_PARTICLES_REMEMBER}",
    re.IGNORECASE,
)
REMEMBER_LEAD_RE = re.compile(
    rf"^{_REMEMBER_POLITE_EN}(?:{_REMEMBER_VERB_EN})\s+that\s+(?=\S)|"
    rf"^{_REMEMBER_POLITE_ZH}(?:记住|记好|记着|记一下)(?:这个|这件事|这点|这些)?(?:\s*[:：/]\s*)?(?=\S)(?![了哦啊喔哈呀吧啦哟噢嘛吗么没]*$)|"
    rf"^{_REMEMBER_POLITE_ZH}(?:别忘了|别忘记|不要忘了|不要忘记|千万别忘了?)(?=我|咱|俺)",
    re.IGNORECASE,
)
# "…, ok?", "…好吗？" after a "remember" lead: a tag the stored text does not keep
REMEMBER_TAG_RE = re.compile(
    r"\s*(?:好吗|好不好|行吗|可以吗|好嘛|ok|okay|please|thanks|谢谢)$", re.IGNORECASE
)

# A clause that asks the assistant to do something for the moment (tell, write, translate, explain,
# suggest...): its words are the request, not a fact about the user. Matched at the clause's start,
# after politeness and ability forms ("please", "can you", "麻烦你", "你能不能帮我").
_REQUEST_PREFIX_EN = (
    r"(?:(?:please|pls|plz|kindly|hey|hi|hello|ok|okay|so|now|and|also|then|just|quick(?:ly)?|ok so)\s*,?\s+)*"
    r"(?:(?:can|could|would|will|won't)\s+you(?:\s+(?:please|kindly|just|quickly|maybe))*\s+|"
    r"i(?:'d| would)? (?:want|need|like|love) you to\s+|i(?:'d| would) like you to\s+|"
    r"help me(?:\s+to)?\s+|let'?s\s+|let us\s+)?"
    r"(?:please\s+|just\s+)?"
)
_REQUEST_VERB_EN = (
    r"tell (?:me|us)|give (?:me|us)|show (?:me|us)|teach (?:me|us)|read (?:me|us)|find (?:me|us)|"
    r"make (?:me|us)|get (?:me|us)|send (?:me|us)|quiz (?:me|us)|explain|write|draft|compose|translate|"
    r"summari[sz]e|describe|define|list|suggest|recommend|generate|create|come up with|brainstorm|rewrite|"
    r"rephrase|paraphrase|proofread|correct (?:this|that|these|it|the|my)|calculate|compute|convert|solve|look up|search(?: for)?|"
    r"sing|recite|guess|pretend|imagine|draw|outline|compare|analy[sz]e|make up|think of|name (?:a|an|some|\d+|three|five|ten)|"
    r"play (?:a|some) (?:game|song|trivia)|share (?:a|an|some)|say something|spell|give (?:a|an|some)"
)
_REQUEST_PREFIX_ZH = (
    r"(?:请问|请|麻烦你?|劳驾|那|那你|好|嗯|你|您|再|现在|快)?"
    r"(?:能不能|能否|可不可以|可以|能|帮忙|帮帮我|帮我|给我|为我|替我|跟我|和我|再|来)*"
)
_REQUEST_VERB_ZH = (
    r"讲(?:个|一个|几个|一下|讲|一段|一则|些)|说(?:个|一个|几个|一段|一则|些)|写(?:一|个|首|篇|段|封|份|点|几)|"
    r"翻译|解释|总结|概括|介绍(?:一下)?|推荐|列(?:出|举|一下|个|一个|张|一张|份|一份)|告诉我|教(?:我|我们)|生成|编(?:个|一个|一首|一段|一个故事)|"
    r"计算|换算|转换|改写|润色|校对|画(?:个|一个|一张|一幅)|唱(?:个|一首|首)|猜(?:个|一个|一下)|"
    r"出(?:个|几道|一道|几个|一些|些)|想(?:个|几个|一个|些)|起(?:个|一个|几个)名|查(?:一下|查|个)|搜(?:一下|索)|"
    r"找(?:个|一个|几个|些|点)|讲讲|说说|算(?:一下|算)|来(?:个|一个|一首|一段|点)|分析(?:一下)?|"
    r"比较(?:一下)?|举(?:个|几个)例"
)
REQUEST_RE = re.compile(
    # a Chinese verb followed by 了/过/着/说/得/的 tells of what was done ("解释说他们的哥哥会没事的")
    rf"{_REQUEST_PREFIX_EN}(?:{_REQUEST_VERB_EN})\b|{_REQUEST_PREFIX_ZH}(?:[把用][^，。！？,.!?]{{1,20}}?)?(?:{_REQUEST_VERB_ZH})(?![了过着说得的])|"
    r"(?:我想|我要|我想要)(?:听|看)(?:个|一个|一首|一段|些|点)|i(?:'d| would)? (?:want|like|love) (?:a|an|some) "
    r"(?:joke|poem|story|fun fact|fact|riddle|song|haiku|limerick|recipe|summary|translation)s?\b",
    re.IGNORECASE,
)
# How to do something (of anyone): "how do I boil an egg?", "怎么煮鸡蛋？", "我该怎么把…". Not "how do you…"
# (asked of the other speaker, it presupposes something about them) nor "怎么样"/"怎么了" (how is it).
HOW_TO_RE = re.compile(
    r"^(?:(?:so|and|hey|hi|hello|ok|okay|quick question|question)\s*,?\s+)*"
    r"(?:how (?:do|can|should|could|would|might|shall) (?:i|one|we)|how to|how would i go about|"
    r"what(?:'s| is) the (?:best|easiest|fastest|quickest|right|proper|simplest) way to|"
    r"is there (?:a|an|any) (?:way|trick) to|any (?:tips|advice|ideas) (?:on|for|about))\b|"
    r"^(?:请问|那|所以|对了|话说)?(?:我|我们)?(?:该|应该|要|得|能|可以)?(?:怎么|怎样|如何|咋)(?:才能|能|可以|才|去|把|做|弄)?"
    r"(?!样|了|回事|啦|办)",
    re.IGNORECASE,
)
# The request's own forms, removed before asking whether a request tells of the user ("I'd like you to…",
# "…for me", "我想听…"): "me" and "我" as the request's object ("give me", "帮我") are SELF_REQUEST_RE's.
REQUEST_FORM_RE = re.compile(
    r"\bi(?:'d| would)? (?:want|need|like|love) you to\b|\bi(?:'d| would) like\b|\bi want\b|\b(?:for|to) (?:me|us)\b|"
    r"我想(?:听|看|要|让你|请你|知道)|我要(?:听|看)|我想要",
    re.IGNORECASE,
)
# A request the assistant should act on later or that books something: a to-do, which is a memory
# (TASK_RE without its "帮我查/找/看/写/发", which ask for something now).
TODO_RE = re.compile(
    r"提醒我|记得(?:要|去|帮)|帮我(?:订|买|约|安排|预约|预订|记)|预订|预约|订(?:一?张|个|机票|酒店|餐|票)|安排|截止|待办|"
    r"\bremind (?:me|us)\b|\b(?:book|reserve|schedule|reschedule|cancel)\b|\bdeadline\b|\bto-?do\b|"
    r"\bdue (?:on|by)\b|\bappointment\b|\bset (?:a|an) (?:reminder|alarm|timer)\b|设(?:个|一个)?(?:提醒|闹钟)",
    re.IGNORECASE,
)
# What a request asks about, when it asks a question ("tell me where I live", "告诉我太阳系有几颗行星"):
# read like a question, whose "I" and "my" ask about the user rather than tell of them.
EMBEDDED_QUESTION_RE = re.compile(
    r"^\s*(?:what|where|when|who|whom|whose|why|how|which|if|whether)\b|什么|哪|谁|几|多少|怎么|怎样|为什么|是否|有没有",
    re.IGNORECASE,
)
# A clause that asks the other speaker to tell of themself: "tell me about your trip", "说说你的新工作".
SECOND_PERSON_RE = re.compile(r"你|您|\byou\b|\byour\b|\byou're\b|\byou've\b|\byourself\b", re.IGNORECASE)
