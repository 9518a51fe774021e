"""Word lists and patterns (Chinese and English) behind importance scoring, the write gate (small talk,
health, requests, the "remember" anchor), topics, negation, stopwords and canonical words. Data only: the
functions that use them live in scoring.py and query.py. Time words are in time_words.py, occupations,
schools, organisations and the attribute and category questions in profile_words.py."""

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
