"""Profile words and patterns (Chinese and English): occupations, fields of work, schools, organisations,
businesses and dwellings (read by the write path's change claims, memory/write/claim_rules.py, and by
relation memory), and the questions and statements about an attribute or a category of the user's life
(recall: memory/recall/query.py, relevance.py, validity.py). Data only."""

from __future__ import annotations

import re

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
