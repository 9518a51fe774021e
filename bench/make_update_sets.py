"""Writes the knowledge-update and negation sets (bench/data/knowledge_update.json, negation.json).

Also the held-out knowledge updates (knowledge_update_held_out.json) and the change set (changes.json).

    .venv/bin/python bench/make_update_sets.py

Deterministic (no randomness): templates in Chinese and English filled with each simulated user's
values. Knowledge updates: per user a year of messages (June 2025 to June 2026, one session a month)
where attributes change (where they live, employer, school, relationship, children, pets, diet,
allergy, phone, e-mail, car, favourite things, "I no longer …"), with distractors (other people's
facts, plans that are not facts, small talk, the user's own questions); for every change one question
about the present and one about the past. Negation: stated dislikes and facts checked by a question
("I don't like X, right?") and requests to leave something out ("don't recommend X"). Changes (issue
24): 64 English and 64 Chinese changes of job, employer, home, school and relationship, each pair
written by hand in its own wording (not templated), one question about the present each.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data"
START = datetime(2025, 6, 1, 9, 0, tzinfo=UTC).timestamp()
MONTH = 30 * 86400.0
AS_OF = START + 12.5 * MONTH

# (attribute, old statement, new statement(s), present question, past question); {a} {b} {c} values
EN: list[tuple[str, str, list[str], str, str]] = [
    (
        "residence",
        "I live in {a}.",
        ["I moved to {b} last week, the new flat is great.", "We moved again, I live in {c} now."],
        "Where do I live now?",
        "Where did I live before?",
    ),
    (
        "employer",
        "I work at {a} as a data analyst.",
        ["I just joined {b}, my first week there was intense."],
        "Which company do I work for now?",
        "Which company did I work for before?",
    ),
    (
        "school",
        "I study at {a}.",
        ["I transferred to {b} this semester."],
        "Which school do I go to now?",
        "Which school did I attend previously?",
    ),
    (
        "relationship",
        "I'm single and honestly enjoying it.",
        ["I got engaged to {a} on Saturday!"],
        "Am I single or in a relationship now?",
        "What was my relationship status before?",
    ),
    (
        "children",
        "I have one kid, a little daughter.",
        ["We had our second baby, so now I have two kids."],
        "How many kids do I have?",
        "How many children did I have before?",
    ),
    (
        "pet",
        "I have one cat called {a}.",
        ["Now I have two cats since we adopted {b}."],
        "How many cats do I have now?",
        "How many cats did I used to have?",
    ),
    (
        "diet",
        "I'm vegetarian, no meat for me.",
        ["I eat meat again after five years, steak tonight."],
        "What is my diet now, do I eat meat?",
        "What was my diet before?",
    ),
    (
        "allergy",
        "I'm allergic to {a}.",
        ["I'm no longer allergic to {a}, the treatment worked."],
        "Am I allergic to {a} now?",
        "What was I allergic to in the past?",
    ),
    (
        "phone",
        "My phone number is {a}.",
        ["I changed my number, my new phone number is {b}."],
        "What is my current phone number?",
        "What was my old phone number?",
    ),
    (
        "car",
        "I drive a {a}.",
        ["My new car is a {b}, it's so quiet."],
        "What car do I drive now?",
        "What car did I drive before?",
    ),
    (
        "favourite",
        "My favorite color is {a}.",
        ["My favorite color is {b} now."],
        "What is my favorite color now?",
        "What was my favorite color before?",
    ),
    (
        "habit",
        "I play {a} every Sunday morning.",
        ["I no longer play {a}, my knee can't take it."],
        "Do I still play {a} now?",
        "What sport did I use to play on Sundays?",
    ),
]
ZH: list[tuple[str, str, list[str], str, str]] = [
    (
        "residence",
        "我住在{a}。",
        ["我上个月搬到{b}了，新房子很好。", "我们又搬家了，现在住在{c}。"],
        "我现在住在哪？",
        "我以前住在哪？",
    ),
    (
        "employer",
        "我在{a}工作，做数据分析。",
        ["我跳槽到{b}了，第一周很忙。"],
        "我现在在哪家公司上班？",
        "我之前在哪家公司工作？",
    ),
    (
        "school",
        "我在{a}读书。",
        ["我这学期转学到{b}了。"],
        "我现在在哪个学校读书？",
        "我以前在哪个学校读书？",
    ),
    (
        "relationship",
        "我现在单身，过得挺自在。",
        ["我订婚了，未婚夫叫{a}。"],
        "我现在是单身还是有对象？",
        "我以前的感情状况是什么？",
    ),
    (
        "children",
        "我有一个女儿。",
        ["我们生了二胎，现在我有两个孩子了。"],
        "我有几个孩子？",
        "我以前有几个孩子？",
    ),
    (
        "pet",
        "我养了一只猫，叫{a}。",
        ["我现在养了两只猫，新来的叫{b}。"],
        "我现在养了几只猫？",
        "我以前养了几只猫？",
    ),
    (
        "diet",
        "我吃素，不吃肉。",
        ["我又开始吃肉了，今晚吃牛排。"],
        "我现在的饮食习惯是什么，吃肉吗？",
        "我以前的饮食习惯是什么？",
    ),
    (
        "allergy",
        "我对{a}过敏。",
        ["我对{a}已经不过敏了，脱敏治疗很成功。"],
        "我现在对{a}过敏吗？",
        "我以前对什么过敏？",
    ),
    (
        "phone",
        "我的手机号是{a}。",
        ["我换了手机号，新的手机号是{b}。"],
        "我现在的手机号是多少？",
        "我以前的手机号是多少？",
    ),
    ("car", "我开的是一辆{a}。", ["我的新车是一辆{b}，特别安静。"], "我现在开什么车？", "我以前开什么车？"),
    (
        "favourite",
        "我最喜欢的颜色是{a}。",
        ["我最喜欢的颜色现在是{b}。"],
        "我现在最喜欢什么颜色？",
        "我以前最喜欢什么颜色？",
    ),
    (
        "habit",
        "我每天早上都喝{a}。",
        ["我不再喝{a}了，改喝热水。"],
        "我现在每天早上还喝{a}吗？",
        "我以前每天早上喝什么？",
    ),
]
# Held out: other wordings of the same kinds of change, written after the rules and weights were set and
# never used to change them (bench/knowledge_update.py reports them apart).
HELD_OUT_EN: list[tuple[str, str, list[str], str, str]] = [
    (
        "residence",
        "Home for me is {a} these days.",
        ["I've relocated to {b}, settling in nicely."],
        "Which city am I living in?",
        "Which city was I living in previously?",
    ),
    (
        "employer",
        "I'm a data analyst at {a}.",
        ["Started a new position at {b} on Monday."],
        "Who is my employer these days?",
        "Who did I use to work for?",
    ),
    (
        "school",
        "I'm a sophomore at {a}.",
        ["I got into {b} and start in the fall."],
        "What university am I at?",
        "What university was I at earlier?",
    ),
    (
        "relationship",
        "I'm not seeing anyone right now.",
        ["{a} proposed and I said yes!"],
        "Am I seeing someone?",
        "Was I single before?",
    ),
    (
        "children",
        "We have a son who just turned four.",
        ["Our twins were born in May, so three kids now."],
        "How many children do I have now?",
        "How many children did I have at first?",
    ),
    (
        "pet",
        "Our dog {a} sleeps on my bed.",
        ["{a} passed away last month, we miss him."],
        "Do I have a dog?",
        "What was my dog called?",
    ),
    (
        "diet",
        "No meat for me, I've been vegan for years.",
        ["I started eating fish and chicken again."],
        "Am I vegan now?",
        "What did I eat before?",
    ),
    (
        "phone",
        "You can reach me at {a}.",
        ["My number changed, it's {b} now."],
        "What number can people reach me at?",
        "What was my previous number?",
    ),
    (
        "car",
        "I get around in my old {a}.",
        ["Traded in the {a} for a {b}."],
        "What car do I have now?",
        "What car did I have earlier?",
    ),
    (
        "favourite",
        "Blue has always been my favorite color.",
        ["These days my favorite color is {b}."],
        "What color do I like best now?",
        "Which color did I like best before?",
    ),
]
HELD_OUT_ZH: list[tuple[str, str, list[str], str, str]] = [
    (
        "residence",
        "我家在{a}，离西湖不远。",
        ["我已经搬去{b}住了，还在适应。"],
        "我现在在哪个城市生活？",
        "我之前在哪个城市生活？",
    ),
    (
        "employer",
        "我是{a}的数据分析师。",
        ["下周一我就去{b}报到了。"],
        "我现在的东家是哪家？",
        "我原来在哪家单位？",
    ),
    ("school", "我是{a}大二的学生。", ["我考上了{b}的研究生。"], "我现在在哪所学校？", "我以前在哪所学校？"),
    (
        "relationship",
        "我目前没有对象。",
        ["{a}向我求婚了，我答应了！"],
        "我现在有对象吗？",
        "我以前是单身吗？",
    ),
    (
        "children",
        "我们家有一个四岁的儿子。",
        ["五月双胞胎出生了，现在有三个孩子了。"],
        "我现在有几个孩子？",
        "我原来有几个孩子？",
    ),
    (
        "pet",
        "我家的狗叫{a}，每天睡我床上。",
        ["{a}上个月走了，我们很想它。"],
        "我现在还养狗吗？",
        "我以前的狗叫什么？",
    ),
    (
        "diet",
        "我好几年都是纯素了。",
        ["我最近又开始吃鱼和鸡肉了。"],
        "我现在还吃纯素吗？",
        "我以前的饮食是什么样的？",
    ),
    (
        "phone",
        "有事打我电话{a}。",
        ["我号码换了，现在是{b}。"],
        "我现在的电话是多少？",
        "我以前的电话是多少？",
    ),
    (
        "car",
        "我平时开我那辆旧{a}。",
        ["我把{a}卖了，换了一辆{b}。"],
        "我现在开什么车？",
        "我以前开的是什么车？",
    ),
    (
        "favourite",
        "我一直最喜欢蓝色。",
        ["我现在最喜欢{b}了。"],
        "我现在最喜欢哪种颜色？",
        "我以前最喜欢哪种颜色？",
    ),
]
HELD_OUT_VALUES = {
    "en": {
        "residence": ("Hangzhou", "Suzhou"),
        "employer": ("Acme Bank", "Northwind Labs"),
        "school": ("Riverside College", "Hillcrest University"),
        "relationship": ("Daniel",),
        "pet": ("Biscuit",),
        "phone": ("+44 20 7946 0958", "+44 20 7946 0123"),
        "car": ("Honda Civic", "Volvo XC40"),
        "favourite": ("blue", "green"),
    },
    "zh": {
        "residence": ("杭州", "苏州"),
        "employer": ("星河银行", "蓝鲸科技"),
        "school": ("江南大学", "东湖大学"),
        "relationship": ("王磊",),
        "pet": ("旺财",),
        "phone": ("13812345678", "13987654321"),
        "car": ("丰田卡罗拉", "比亚迪汉"),
        "favourite": ("蓝色", "绿色"),
    },
}
VALUES = {
    "en": [
        {
            "residence": ("Hangzhou", "Suzhou", "Nanjing"),
            "employer": ("Acme Bank", "Northwind Labs"),
            "school": ("Riverside College", "Hillcrest University"),
            "relationship": ("Daniel",),
            "pet": ("Mochi", "Tofu"),
            "allergy": ("peanuts",),
            "phone": ("+44 20 7946 0958", "+44 20 7946 0123"),
            "car": ("Toyota Corolla", "Tesla Model 3"),
            "favourite": ("blue", "green"),
            "habit": ("tennis",),
        },
        {
            "residence": ("Lisbon", "Porto"),
            "employer": ("Globex", "Initech"),
            "school": ("Lakeside Academy", "Westbrook College"),
            "relationship": ("Maria",),
            "pet": ("Pepper", "Ziggy"),
            "allergy": ("shellfish",),
            "phone": ("+1 415 555 0100", "+1 415 555 0199"),
            "car": ("Honda Civic", "Volvo XC40"),
            "favourite": ("red", "purple"),
            "habit": ("squash",),
        },
    ],
    "zh": [
        {
            "residence": ("杭州", "苏州", "南京"),
            "employer": ("星河银行", "蓝鲸科技"),
            "school": ("江南大学", "东湖大学"),
            "relationship": ("王磊",),
            "pet": ("年糕", "豆腐"),
            "allergy": ("花生",),
            "phone": ("13812345678", "13987654321"),
            "car": ("丰田卡罗拉", "比亚迪汉"),
            "favourite": ("蓝色", "绿色"),
            "habit": ("咖啡",),
        },
        {
            "residence": ("成都", "重庆"),
            "employer": ("云帆集团", "青松游戏"),
            "school": ("西山中学", "南岭大学"),
            "relationship": ("李娜",),
            "pet": ("球球", "花卷"),
            "allergy": ("海鲜",),
            "phone": ("13700001111", "13655556666"),
            "car": ("大众帕萨特", "理想L6"),
            "favourite": ("红色", "紫色"),
            "habit": ("奶茶",),
        },
    ],
}
DISTRACTORS = {
    "en": [
        "My sister lives in {other_city} with her husband.",
        "My friend Tom works at {other_company}.",
        "I want to move to {dream_city} someday, maybe when I retire.",
        "Where do I keep my passport again?",
        "The weather was awful today, rain all afternoon.",
        "My colleague just bought a {other_car}.",
        "I watched a documentary about whales last night.",
        "My neighbour has three dogs that bark at night.",
        "Can you recommend a good pasta recipe?",
        "My mom's favorite color is {other_color}.",
        "I went hiking with friends on the weekend.",
        "My brother is allergic to cats.",
        "The train to work was late again this morning.",
        "I read an article about electric cars.",
        "We celebrated my dad's birthday at a noodle place.",
        "My cousin studies at {other_school}.",
    ],
    "zh": [
        "我姐姐住在{other_city}，离我挺远的。",
        "我朋友小张在{other_company}上班。",
        "我以后想搬到{dream_city}养老。",
        "我的护照放在哪里了？",
        "今天下了一下午的雨，真烦。",
        "我同事刚买了一辆{other_car}。",
        "昨晚看了一部关于鲸鱼的纪录片。",
        "我邻居养了三条狗，晚上老叫。",
        "能推荐一个好做的意面菜谱吗？",
        "我妈妈最喜欢的颜色是{other_color}。",
        "周末和朋友去爬山了。",
        "我哥哥对猫过敏。",
        "今天早上地铁又晚点了。",
        "看了一篇关于电动车的文章。",
        "我们在面馆给爸爸过了生日。",
        "我表妹在{other_school}读书。",
    ],
}
OTHER = {
    "en": {"other_city": "Boston", "other_company": "Umbrella Corp", "dream_city": "Vancouver", "other_car": "Ford Focus", "other_color": "yellow", "other_school": "Oakwood High"},
    "zh": {"other_city": "北京", "other_company": "长风物流", "dream_city": "大理", "other_car": "本田雅阁", "other_color": "黄色", "other_school": "北山中学"},
}  # fmt: skip


def knowledge_update(held_out: bool = False) -> dict[str, Any]:
    users = []
    sets = (
        (("en", HELD_OUT_EN, [HELD_OUT_VALUES["en"]]), ("zh", HELD_OUT_ZH, [HELD_OUT_VALUES["zh"]]))
        if held_out
        else (("en", EN, VALUES["en"]), ("zh", ZH, VALUES["zh"]))
    )
    for language, templates, value_sets in sets:
        for n, values in enumerate(value_sets):
            user = f"ku{'h' if held_out else ''}-{language}-{n}"
            messages: list[dict[str, Any]] = []
            questions: list[dict[str, Any]] = []
            for k, (attribute, old, new, present, past) in enumerate(templates):
                vals = values.get(attribute, ())
                fill = dict(zip("abc", vals, strict=False))
                steps = [old, *new][: max(2, len(vals))] if attribute == "residence" else [old, *new[:1]]
                ids = []
                for step, template in enumerate(steps):
                    month = (k % 6) + step * 5 if step < 2 else 11
                    mid = f"{user}-{attribute}-{step}"
                    ids.append(mid)
                    messages.append(
                        {
                            "id": mid,
                            "content": template.format(**fill),
                            "timestamp": START + month * MONTH + k * 3600.0,
                            "session": f"m{month:02d}",
                        }
                    )
                questions.append(
                    {"kind": "present", "query": present.format(**fill), "current": ids[-1], "old": ids[:-1]}
                )
                questions.append(
                    {"kind": "past", "query": past.format(**fill), "current": ids[-1], "old": ids[:-1]}
                )
            for j, template in enumerate(DISTRACTORS[language]):
                month = j % 12
                messages.append(
                    {
                        "id": f"{user}-d{j}",
                        "content": template.format(**OTHER[language]),
                        "timestamp": START + month * MONTH + 7200.0 + j * 60.0,
                        "session": f"m{month:02d}",
                    }
                )
            messages.sort(key=lambda m: m["timestamp"])
            changes = sum(len(q["old"]) for q in questions if q["kind"] == "present")
            users.append(
                {
                    "user": user,
                    "language": language,
                    "as_of": AS_OF,
                    "changes": changes,
                    "messages": messages,
                    "questions": questions,
                }
            )
    return {"about": __doc__.splitlines()[0], "users": users}


# (stated memory, verification question); (memory naming the excluded thing, exclusion request)
NEG_VERIFY = {
    "en": [
        ("I don't like watching comedy movies.", "I don't like watching comedy movies, right?"),
        ("I never eat cilantro, it tastes like soap to me.", "I never eat cilantro, right?"),
        ("My birthday is on March 3.", "March 5 is not my birthday, right?"),
        ("I don't drink alcohol at all.", "I don't drink alcohol, correct?"),
        ("I hate flying, I always take the train.", "I hate flying, right?"),
        ("I don't have a driver's license.", "I don't have a driver's license, right?"),
        ("I can't stand horror films.", "I can't stand horror films, right?"),
        ("I don't eat spicy food, my stomach can't handle it.", "I don't eat spicy food, is that right?"),
        ("I'm not a morning person, I wake up at ten.", "I'm not a morning person, right?"),
        ("I don't like jazz music much.", "I don't like jazz music, right?"),
        ("I never use social media.", "I never use social media, right?"),
        ("I don't own a car, I cycle everywhere.", "I don't own a car, right?"),
        ("I don't play video games anymore.", "I don't play video games, right?"),
        ("I dislike crowded shopping malls.", "I dislike crowded shopping malls, right?"),
        ("I don't speak French, only English and Spanish.", "I don't speak French, right?"),
        ("I never drink coffee after noon.", "I never drink coffee after noon, right?"),
        ("I don't like cats, I'm more of a dog person.", "I don't like cats, right?"),
        ("I don't watch football.", "I don't watch football, do I remember that right?"),
        ("I don't enjoy camping, I prefer hotels.", "I don't enjoy camping, right?"),
        ("I never eat fast food.", "I never eat fast food, is that true?"),
        ("My wedding anniversary is on June 12.", "June 20 is not my wedding anniversary, right?"),
        ("I don't like sushi.", "I don't like sushi, right?"),
    ],
    "zh": [
        ("我不喜欢看喜剧片。", "我不喜欢看喜剧片，对吗？"),
        ("我从来不吃香菜，一股肥皂味。", "我不吃香菜，对吧？"),
        ("我的生日是3月3日。", "3月5日不是我的生日，对吗？"),
        ("我不喝酒，一滴都不喝。", "我不喝酒，对吗？"),
        ("我讨厌坐飞机，出门都坐高铁。", "我讨厌坐飞机，是吧？"),
        ("我没有驾照。", "我没有驾照，对吗？"),
        ("我受不了恐怖片。", "我受不了恐怖片，对吧？"),
        ("我不吃辣，胃受不了。", "我不吃辣，对不对？"),
        ("我不是早起的人，一般十点才起。", "我不是早起的人，对吗？"),
        ("我不太喜欢爵士乐。", "我不喜欢爵士乐，对吗？"),
        ("我从来不用社交软件。", "我不用社交软件，对吧？"),
        ("我没有车，到哪都骑自行车。", "我没有车，对吗？"),
        ("我已经不玩电子游戏了。", "我不玩电子游戏了，对吧？"),
        ("我讨厌人多的商场。", "我讨厌人多的商场，是吧？"),
        ("我不会说法语，只会英语和西班牙语。", "我不会说法语，对吗？"),
        ("我下午从来不喝咖啡。", "我下午不喝咖啡，对吧？"),
        ("我不喜欢猫，更喜欢狗。", "我不喜欢猫，对吗？"),
        ("我不看足球比赛。", "我不看足球比赛，我没记错吧？"),
        ("我不喜欢露营，更喜欢住酒店。", "我不喜欢露营，对吗？"),
        ("我从来不吃快餐。", "我不吃快餐，对不对？"),
        ("我的结婚纪念日是6月12日。", "6月20日不是我的结婚纪念日，对吗？"),
        ("我不喜欢吃寿司。", "我不喜欢吃寿司，对吧？"),
    ],
}
NEG_EXCLUDE = {
    "en": [
        (
            "I bought a coffee machine last year and barely use it.",
            "Don't recommend coffee machines, what kitchen gadget should I buy?",
        ),
        (
            "I read a thriller novel on the plane.",
            "Don't suggest thriller novels, what book should I read next?",
        ),
        ("We had sushi for dinner at the harbour.", "Don't recommend sushi, where should we eat tonight?"),
        (
            "I went to a jazz concert downtown.",
            "Please don't suggest jazz concerts, what show can I see this weekend?",
        ),
        ("I tried a yoga class at the gym.", "Don't recommend yoga, what exercise should I try?"),
        ("I stayed at a beach resort in Bali.", "Don't suggest beach resorts, where should I travel?"),
        (
            "I watched a horror movie with friends.",
            "Don't recommend horror movies, what should I watch tonight?",
        ),
        ("I bought running shoes online.", "Don't show me running shoes, what gift can I get my brother?"),
        ("My dad likes red wine with dinner.", "Don't recommend red wine, what gift can I bring my dad?"),
        ("I played chess with my nephew.", "Don't suggest chess, what game can I play with my nephew?"),
        ("I ordered pizza on Friday.", "Don't recommend pizza, what should I order for lunch?"),
        ("I visited an art museum in Paris.", "Don't suggest art museums, what can I do in Paris?"),
        ("I got a smartwatch for my birthday.", "Don't recommend smartwatches, what gadget should I buy?"),
        ("I planted tomatoes in the garden.", "Don't suggest tomatoes, what should I plant in the garden?"),
        ("I took a cooking class on pasta.", "Don't recommend cooking classes, what hobby should I pick up?"),
        (
            "I listened to a true crime podcast.",
            "Don't suggest true crime podcasts, what podcast should I try?",
        ),
        (
            "I drank green tea every afternoon.",
            "Don't recommend green tea, what should I drink in the afternoon?",
        ),
        ("I went skiing in the Alps.", "Don't suggest skiing, what winter activity should we do?"),
        ("I rented a scooter to get around.", "Don't recommend scooters, how should I get around the city?"),
        (
            "I bought a scented candle for my mom.",
            "Don't suggest scented candles, what present should I give my mom?",
        ),
        ("I tried a spicy ramen place near work.", "Don't recommend ramen, where can I eat near work?"),
        ("I used a meditation app before bed.", "Don't suggest meditation apps, what helps me sleep?"),
    ],
    "zh": [
        ("去年买了一台咖啡机，几乎没用过。", "不要推荐咖啡机，我该买什么厨房小电器？"),
        ("在飞机上看了一本悬疑小说。", "别给我推荐悬疑小说，下一本看什么书？"),
        ("我们晚上在港口吃了寿司。", "不要推荐寿司，今晚去哪吃？"),
        ("我去市中心听了一场爵士音乐会。", "别推荐爵士音乐会，这周末看什么演出？"),
        ("我在健身房上了一节瑜伽课。", "不要推荐瑜伽，我该试试什么运动？"),
        ("我在巴厘岛住了海滨度假村。", "别给我推荐海滨度假村，去哪旅行好？"),
        ("和朋友看了一部恐怖片。", "不要推荐恐怖片，今晚看什么？"),
        ("我在网上买了一双跑鞋。", "不要推荐跑鞋，给我哥买什么礼物？"),
        ("我爸吃饭喜欢配红酒。", "别推荐红酒，给我爸带什么礼物？"),
        ("我和侄子下了国际象棋。", "不要推荐国际象棋，和侄子玩什么游戏？"),
        ("周五点了披萨外卖。", "不要推荐披萨，午饭点什么？"),
        ("我在巴黎参观了艺术博物馆。", "别推荐艺术博物馆，在巴黎还能做什么？"),
        ("生日收到了一块智能手表。", "不要推荐智能手表，我该买什么数码产品？"),
        ("我在花园里种了西红柿。", "别推荐西红柿，花园里种什么好？"),
        ("我上了一节意面烹饪课。", "不要推荐烹饪课，我该培养什么爱好？"),
        ("我听了一个真实犯罪播客。", "别给我推荐真实犯罪播客，听什么播客好？"),
        ("我每天下午喝绿茶。", "不要推荐绿茶，下午喝点什么？"),
        ("我去阿尔卑斯山滑雪了。", "别推荐滑雪，冬天我们做什么活动？"),
        ("我租了一辆电动滑板车代步。", "不要推荐滑板车，在城里怎么出行？"),
        ("给妈妈买了一支香薰蜡烛。", "别推荐香薰蜡烛，送妈妈什么礼物？"),
        ("我去了公司附近一家拉面店。", "不要推荐拉面，公司附近吃什么？"),
        ("睡前用过一个冥想软件。", "别推荐冥想软件，什么能帮我睡觉？"),
    ],
}


def negation() -> dict[str, Any]:
    users = []
    for language in ("en", "zh"):
        messages: list[dict[str, Any]] = []
        questions: list[dict[str, Any]] = []
        for n, (stated, query) in enumerate(NEG_VERIFY[language]):
            mid = f"neg-{language}-v{n}"
            messages.append(
                {"id": mid, "content": stated, "timestamp": START + n * 86400.0, "session": f"v{n // 8}"}
            )
            questions.append({"kind": "verify", "query": query, "target": mid})
        for n, (named, query) in enumerate(NEG_EXCLUDE[language]):
            mid = f"neg-{language}-x{n}"
            messages.append(
                {
                    "id": mid,
                    "content": named,
                    "timestamp": START + (30 + n) * 86400.0,
                    "session": f"x{n // 8}",
                }
            )
            questions.append({"kind": "exclude", "query": query, "target": mid})
        for j, template in enumerate(DISTRACTORS[language]):
            messages.append(
                {
                    "id": f"neg-{language}-d{j}",
                    "content": template.format(**OTHER[language]),
                    "timestamp": START + (60 + j) * 86400.0,
                    "session": "d",
                }
            )
        users.append(
            {
                "user": f"neg-{language}",
                "language": language,
                "as_of": START + 120 * 86400.0,
                "messages": messages,
                "questions": questions,
            }
        )
    return {"about": "Negation: verification questions and exclusion requests (zh + en)", "users": users}


# --- Changes of job, employer, home, school and relationship (issue 24) -------------------------------
# Hand-written pairs (attribute, older statement, the change, a question about the present), each a
# different wording: the change is said as a change ("I quit X; now I Y", "不…了，现在…", "moved to",
# "现在在…做…"). Written before the rules for them, in one go; see bench/data/README.md.
CHANGES_EN: list[tuple[str, str, str, str]] = [
    (
        "job",
        "I teach chemistry at a middle school.",
        "I quit teaching last spring; now I write software for a logistics firm.",
        "What do I do for work these days?",
    ),
    (
        "job",
        "I'm a nurse on the night shift.",
        "I gave up nursing, now I run a small bakery.",
        "What's my job now?",
    ),
    (
        "job",
        "I work as a graphic designer.",
        "I'm not a designer anymore, I switched to product management.",
        "What is my current job?",
    ),
    (
        "job",
        "My job is driving a delivery van.",
        "No more delivery driving for me, I'm a bus driver now.",
        "What do I do for a living now?",
    ),
    (
        "job",
        "I'm an accountant.",
        "I stopped doing accounting and became a yoga instructor.",
        "What's my profession now?",
    ),
    (
        "job",
        "I work as a barista downtown.",
        "These days I work as a sous-chef instead of making coffee.",
        "What is my job these days?",
    ),
    ("job", "I'm a software tester.", "I got promoted, I'm a QA lead now.", "What's my role at work now?"),
    (
        "job",
        "I'm a full-time student.",
        "I finished my degree and now I work as a civil engineer.",
        "What do I do for a living?",
    ),
    (
        "job",
        "I work as an electrician.",
        "I retired from electrical work in March.",
        "Am I still working as an electrician?",
    ),
    (
        "job",
        "I'm a freelance photographer.",
        "I dropped freelancing and took a staff job as a photo editor.",
        "What's my job now?",
    ),
    (
        "job",
        "I'm a high school librarian.",
        "I'm no longer a librarian; I'm a data analyst now.",
        "What do I do for work?",
    ),
    (
        "job",
        "I drive for a ride-share app.",
        "I quit driving for the app, now I'm a real estate agent.",
        "What do I do for work now?",
    ),
    (
        "job",
        "I'm a junior lawyer.",
        "I left law for good and now teach history.",
        "What is my occupation now?",
    ),
    (
        "job",
        "My day job is retail sales.",
        "Moved out of retail, I'm a recruiter now.",
        "What's my current job?",
    ),
    (
        "job",
        "I work as a pharmacist.",
        "I changed careers: I'm a UX researcher now.",
        "What do I do these days?",
    ),
    ("job", "I'm a stay-at-home dad.", "I went back to work, I'm a mechanic again.", "What is my job now?"),
    (
        "employer",
        "I work at Contoso as a sales rep.",
        "I left Contoso and joined Fabrikam in May.",
        "Which company am I with now?",
    ),
    (
        "employer",
        "I've been at Redwood Insurance for six years.",
        "After six years I resigned from Redwood Insurance; I'm at Bluepeak Energy now.",
        "Who do I work for now?",
    ),
    (
        "employer",
        "My employer is the city council.",
        "I now work for a private hospital instead of the council.",
        "Who employs me now?",
    ),
    (
        "employer",
        "I'm on the payments team at Zeller.",
        "I switched companies, now I'm at Orbitly.",
        "What company do I work at?",
    ),
    (
        "employer",
        "I work for Harbor Foods in the finance department.",
        "I got hired by Lumen Bank last month.",
        "Where do I work now?",
    ),
    (
        "employer",
        "I'm an engineer at Tallow Systems.",
        "Tallow Systems laid me off, and I've since started at Quill Robotics.",
        "Which company do I work for these days?",
    ),
    (
        "employer",
        "I work at a bookstore called Paper Lantern.",
        "I'm not at Paper Lantern anymore, I work at the public library now.",
        "Where do I work now?",
    ),
    (
        "employer",
        "I do marketing at Brightside Media.",
        "I moved from Brightside Media to Nimbus Travel.",
        "Which company employs me now?",
    ),
    (
        "employer",
        "I'm employed by Ferro Steel.",
        "I took a new job at Vanta Logistics.",
        "Who is my employer now?",
    ),
    (
        "employer",
        "I work for Greenleaf Pharmacy.",
        "Started working at Pinecrest Clinic this week, goodbye Greenleaf.",
        "Where do I work these days?",
    ),
    (
        "employer",
        "I work at Maple Consulting.",
        "I quit Maple Consulting. Now I'm with Cobalt Analytics.",
        "Which firm do I work for?",
    ),
    (
        "employer",
        "I'm a cashier at FreshMart.",
        "I don't work at FreshMart anymore; I'm at a pet shop now.",
        "Where do I work now?",
    ),
    ("residence", "I live in Leeds.", "We moved to Bristol over the summer.", "Where do I live now?"),
    (
        "residence",
        "My apartment is in Brooklyn.",
        "I packed up and relocated to Denver.",
        "Which city do I live in these days?",
    ),
    (
        "residence",
        "I've lived in Austin my whole life.",
        "I finally left Austin, I live in Seattle now.",
        "Where am I living now?",
    ),
    (
        "residence",
        "Home is a small flat in Glasgow.",
        "I now live in Edinburgh after the move.",
        "Where is my home now?",
    ),
    (
        "residence",
        "I rent a room in Toronto.",
        "I moved back to my parents' place in Ottawa.",
        "Where do I live these days?",
    ),
    (
        "residence",
        "I live in the city centre of Madrid.",
        "We left Madrid and settled in Valencia.",
        "What city am I based in now?",
    ),
    (
        "residence",
        "I'm based in Singapore.",
        "I've been living in Kuala Lumpur since the relocation in April.",
        "Where am I based now?",
    ),
    (
        "residence",
        "I live in a studio in Chicago.",
        "Just signed a lease in Milwaukee and moved in on Friday.",
        "Where do I live now?",
    ),
    (
        "residence",
        "Our family home is in Perth.",
        "We sold the Perth house; home is Adelaide now.",
        "Where is home for me now?",
    ),
    (
        "residence",
        "I live near the beach in San Diego.",
        "Moved inland to Phoenix, no more beach.",
        "Which city do I live in?",
    ),
    (
        "residence",
        "I live in Munich.",
        "I don't live in Munich anymore, I'm in Berlin now.",
        "Where do I live now?",
    ),
    (
        "residence",
        "I share a house in Cardiff.",
        "I've relocated to Swansea for work.",
        "Where am I living these days?",
    ),
    ("residence", "I'm living in Dublin.", "Since March my address is in Cork.", "Where do I live now?"),
    (
        "residence",
        "We live in a suburb of Boston.",
        "We now live in Providence, closer to my wife's family.",
        "Where do I live these days?",
    ),
    (
        "school",
        "I study nursing at Riverbend College.",
        "I transferred to Northgate University this term.",
        "Which school do I attend now?",
    ),
    (
        "school",
        "I'm a freshman at Lakeview High.",
        "I switched schools, I go to Central High now.",
        "What school do I go to now?",
    ),
    (
        "school",
        "I take evening classes at the community college.",
        "I dropped out of the community college; now I'm enrolled at Westfield Polytechnic.",
        "Where am I studying now?",
    ),
    (
        "school",
        "I'm doing my master's at Kingsley University.",
        "I finished my master's and started a PhD at Ashford Institute.",
        "Where am I studying now?",
    ),
    (
        "school",
        "My school is Hillside Academy.",
        "I changed schools and now attend Brookfield School.",
        "What school am I at these days?",
    ),
    (
        "school",
        "I'm studying law at Carrow University.",
        "I left Carrow and I'm studying medicine at Elmstead University now.",
        "Which university do I attend now?",
    ),
    (
        "school",
        "I go to night school at Dalton Institute.",
        "I graduated from Dalton Institute, and now I'm at Pemberton Business School.",
        "Which school do I go to now?",
    ),
    (
        "school",
        "I'm a sophomore at Oakridge College.",
        "I got accepted to Marlow University and started there in September.",
        "What university am I at now?",
    ),
    (
        "school",
        "I study at the art academy in Florence.",
        "I now study architecture at Delft instead.",
        "Where do I study now?",
    ),
    (
        "school",
        "I attend Greenfield Middle School.",
        "We moved, so I go to Parkside Middle School now.",
        "Which school do I attend?",
    ),
    (
        "relationship",
        "I'm dating a guy named Marco.",
        "Marco and I split up in June; I'm single now.",
        "Am I in a relationship now?",
    ),
    ("relationship", "I'm single.", "I've been seeing someone named Priya since spring.", "Am I single now?"),
    (
        "relationship",
        "My girlfriend is Chloe.",
        "Chloe and I got married last weekend!",
        "What is my relationship status now?",
    ),
    (
        "relationship",
        "I'm engaged to Sam.",
        "We called off the engagement, Sam and I are just friends now.",
        "Am I still engaged?",
    ),
    ("relationship", "I'm married to Ben.", "Ben and I are divorced now.", "Am I married?"),
    (
        "relationship",
        "My boyfriend is called Luke.",
        "I broke up with Luke and I'm dating Omar now.",
        "Who is my boyfriend now?",
    ),
    (
        "relationship",
        "I've been single for two years.",
        "I have a girlfriend now, her name is Aisha.",
        "Do I have a girlfriend?",
    ),
    (
        "relationship",
        "My partner is Jordan.",
        "Jordan and I separated last month.",
        "Am I still with my partner?",
    ),
    (
        "relationship",
        "I'm in a long-distance relationship with Elena.",
        "Elena moved here and we got engaged.",
        "What is my relationship status?",
    ),
    ("relationship", "I'm a widower.", "I remarried this year, my wife's name is Rosa.", "Am I married now?"),
    (
        "relationship",
        "My fiancé is Daniel.",
        "Daniel and I married in October, so he's my husband now.",
        "Am I married or engaged?",
    ),
    (
        "relationship",
        "I'm seeing a woman called Hannah.",
        "Hannah and I ended things, I'm on my own again.",
        "Am I seeing anyone now?",
    ),
]
CHANGES_ZH: list[tuple[str, str, str, str]] = [
    ("job", "我是一名小学语文老师。", "我不当老师了，现在在银行做柜员。", "我现在做什么工作？"),
    ("job", "我在医院当护士。", "我辞掉了护士的工作，现在开了一家花店。", "我现在的工作是什么？"),
    ("job", "我的职业是平面设计师。", "我转行了，现在做产品经理。", "我现在是做什么的？"),
    ("job", "我每天开出租车。", "我不开出租了，改行做外卖骑手。", "我现在干什么工作？"),
    ("job", "我是会计。", "会计我不干了，现在当瑜伽教练。", "我现在的职业是什么？"),
    ("job", "我在咖啡馆做咖啡师。", "我现在在餐厅做厨师，不做咖啡了。", "我现在做什么工作？"),
    ("job", "我是软件测试工程师。", "我升职了，现在是测试组长。", "我现在在公司是什么职位？"),
    ("job", "我还在读大学，是个学生。", "我毕业了，现在是一名土木工程师。", "我现在做什么工作？"),
    ("job", "我是一名电工。", "我今年三月退休了。", "我现在还在当电工吗？"),
    ("job", "我是自由摄影师。", "我不再接散活了，现在在杂志社当图片编辑。", "我现在的工作是什么？"),
    ("job", "我在图书馆当管理员。", "我已经不在图书馆上班了，现在做数据分析。", "我现在做什么工作？"),
    ("job", "我是网约车司机。", "我不跑网约车了，现在做房产中介。", "我现在靠什么谋生？"),
    ("job", "我是一名律师助理。", "我离开了律师行业，现在教历史。", "我现在的职业是什么？"),
    ("job", "我在商场做销售。", "销售我不做了，现在在猎头公司当顾问。", "我现在做什么工作？"),
    ("job", "我是药剂师。", "我换了职业，现在是用户研究员。", "我现在是做什么的？"),
    ("job", "我在家带孩子，是全职妈妈。", "我重新上班了，现在是一名会计。", "我现在做什么工作？"),
    ("employer", "我在华信科技做销售。", "我从华信科技离职了，五月加入了远航物流。", "我现在在哪家公司？"),
    (
        "employer",
        "我在红杉保险干了六年。",
        "干了六年，我从红杉保险辞职了，现在在蓝峰能源上班。",
        "我现在在哪家公司工作？",
    ),
    ("employer", "我在市政府上班。", "我现在在一家私立医院工作，不在市政府了。", "我现在在哪上班？"),
    ("employer", "我在泽乐支付的支付团队。", "我换了公司，现在在轨道科技。", "我现在在什么公司？"),
    ("employer", "我在海港食品的财务部工作。", "上个月我被明光银行录用了。", "我现在在哪家公司上班？"),
    (
        "employer",
        "我是塔罗系统的工程师。",
        "塔罗系统把我裁了，后来我去了羽毛机器人。",
        "我现在在哪家公司工作？",
    ),
    (
        "employer",
        "我在一家叫纸灯笼的书店上班。",
        "我不在纸灯笼干了，现在在市图书馆工作。",
        "我现在在哪里上班？",
    ),
    ("employer", "我在明日传媒做市场。", "我从明日传媒跳到了云游旅行。", "我现在在哪个公司？"),
    ("employer", "我在铁峰钢铁上班。", "我在万达物流找了份新工作。", "我现在的东家是谁？"),
    ("employer", "我在绿叶药房工作。", "这周开始我在松林诊所上班了，告别绿叶药房。", "我现在在哪上班？"),
    ("employer", "我在枫叶咨询工作。", "我离开枫叶咨询了，现在在钴蓝数据做分析。", "我现在在哪家公司？"),
    (
        "employer",
        "我在鲜多多超市当收银员。",
        "我已经不在鲜多多上班了，现在在宠物店打工。",
        "我现在在哪里工作？",
    ),
    ("residence", "我住在济南。", "夏天我们搬到了青岛。", "我现在住在哪里？"),
    ("residence", "我的公寓在北京朝阳区。", "我收拾东西搬去了成都。", "我现在住在哪个城市？"),
    ("residence", "我从小到大一直住在武汉。", "我终于离开武汉了，现在在长沙定居。", "我现在住哪儿？"),
    ("residence", "我家在大连。", "搬家以后我现在住在沈阳。", "我现在的家在哪？"),
    ("residence", "我在深圳租房住。", "我搬回了广州父母家。", "我现在住在哪？"),
    ("residence", "我住在西安市中心。", "我们离开西安，在昆明安家了。", "我现在在哪个城市生活？"),
    ("residence", "我常驻新加坡。", "四月调动之后我一直住在吉隆坡。", "我现在常驻哪里？"),
    ("residence", "我在天津住一个单间。", "我在石家庄签了租房合同，周五就搬进去了。", "我现在住在哪？"),
    ("residence", "我们家的房子在厦门。", "厦门的房子卖了，我们现在的家在福州。", "我现在的家在哪里？"),
    ("residence", "我住在三亚海边。", "我搬到内陆的贵阳了，再也看不到海了。", "我现在住在哪个城市？"),
    ("residence", "我住在苏州。", "我不住苏州了，现在在上海。", "我现在住在哪里？"),
    ("residence", "我和朋友在合肥合租。", "因为工作我调到南昌去住了。", "我现在住在哪？"),
    ("residence", "我现在住在宁波。", "三月起我的地址改到绍兴了。", "我现在住在哪里？"),
    ("residence", "我们住在郑州郊区。", "我们现在住在洛阳，离我老婆家近。", "我现在住在哪个城市？"),
    ("school", "我在江城学院学护理。", "这学期我转到了北辰大学。", "我现在在哪个学校上学？"),
    ("school", "我在湖景中学读初一。", "我转学了，现在在第一中学上学。", "我现在在哪所学校？"),
    ("school", "我在社区大学上夜校。", "社区大学我不读了，现在在西田职业技术学院上学。", "我现在在哪读书？"),
    ("school", "我在金石大学读硕士。", "硕士毕业后我去了白山研究院读博。", "我现在在哪里读书？"),
    ("school", "我的学校是山坡实验学校。", "我换学校了，现在上的是溪田学校。", "我现在在哪个学校？"),
    ("school", "我在长河大学学法律。", "我离开了长河大学，现在在榆树大学学医。", "我现在在哪所大学？"),
    (
        "school",
        "我在达通夜校学会计。",
        "我从达通夜校毕业了，现在在彭城商学院读MBA。",
        "我现在在哪个学校读书？",
    ),
    ("school", "我是橡树学院的大二学生。", "我被马洛大学录取了，九月已经开学。", "我现在在哪所大学？"),
    ("school", "我在佛罗伦萨的美术学院读书。", "我改去代尔夫特读建筑了。", "我现在在哪里读书？"),
    ("school", "我在绿原小学上学。", "搬家以后我在公园路小学上学了。", "我现在在哪个学校？"),
    ("relationship", "我在和一个叫马可的男生约会。", "我和马可六月分手了，现在单身。", "我现在有对象吗？"),
    ("relationship", "我现在单身。", "从春天开始我在和普丽雅交往。", "我现在还是单身吗？"),
    ("relationship", "我女朋友叫小雪。", "我和小雪上周末结婚了！", "我现在的感情状况是什么？"),
    ("relationship", "我和阿森订婚了。", "我们取消了婚约，我和阿森现在只是朋友。", "我现在还订着婚吗？"),
    ("relationship", "我和老陈结婚十年了。", "我和老陈已经离婚了。", "我现在是已婚吗？"),
    ("relationship", "我男朋友叫刘洋。", "我和刘洋分了，现在的男朋友是周凯。", "我现在的男朋友是谁？"),
    ("relationship", "我单身两年了。", "我现在有女朋友了，她叫艾莎。", "我有女朋友吗？"),
    ("relationship", "我的伴侣是乔丹。", "我和乔丹上个月分开了。", "我现在还和伴侣在一起吗？"),
    ("relationship", "我和伊莲娜在谈异地恋。", "伊莲娜搬过来了，我们订婚了。", "我现在的感情状况是什么？"),
    ("relationship", "我老伴几年前去世了，我一个人过。", "今年我再婚了，老婆叫罗莎。", "我现在结婚了吗？"),
    ("relationship", "我的未婚夫是丹尼。", "我和丹尼十月结婚了，他现在是我老公。", "我是已婚还是订婚？"),
    (
        "relationship",
        "我在和一个叫韩娜的女生交往。",
        "我和韩娜结束了，又是一个人了。",
        "我现在有在交往的人吗？",
    ),
]
# Written after the change rules were set (never used to change them): the held-out check of the rules.
CHANGES_HELD_OUT_EN: list[tuple[str, str, str, str]] = [
    (
        "job",
        "I'm a flight attendant with a budget airline.",
        "I stopped flying last year and now I'm a travel agent.",
        "What is my job now?",
    ),
    (
        "job",
        "I work as a dental hygienist.",
        "I left dentistry; these days I'm a florist.",
        "What do I do for a living these days?",
    ),
    (
        "residence",
        "I live in Lyon.",
        "We relocated to Marseille in the spring.",
        "Which city do I live in now?",
    ),
    ("residence", "My flat is in Bath.", "I moved into a cottage in Wells.", "Where do I live now?"),
    (
        "school",
        "I'm a junior at Fairview High.",
        "I transferred to Summit High School in January.",
        "Which school do I go to now?",
    ),
    ("relationship", "I'm engaged to Tom.", "Tom and I got married in June.", "Am I engaged or married?"),
    ("relationship", "I'm married to Kate.", "Kate and I split up last year.", "Am I still married?"),
    (
        "employer",
        "I work for Acme Corp in accounts.",
        "I got hired by Zenith Labs as an analyst.",
        "Which company do I work for now?",
    ),
    (
        "school",
        "I study history at Brampton University.",
        "I dropped out and I'm now studying design at Kestrel College.",
        "Where do I study now?",
    ),
    (
        "job",
        "I'm a bartender at a hotel.",
        "No more bartending for me, I'm a sommelier now.",
        "What's my job these days?",
    ),
    ("relationship", "I'm single.", "I'm dating a woman named Ines now.", "Am I single?"),
    ("residence", "I'm based in Oslo.", "I moved to Bergen for a new job.", "Where am I based now?"),
]
CHANGES_HELD_OUT_ZH: list[tuple[str, str, str, str]] = [
    ("job", "我是一名出租车司机。", "我不开出租车了，现在当保安。", "我现在做什么工作？"),
    ("job", "我在超市当理货员。", "我辞职了，现在在工厂做质检员。", "我现在的工作是什么？"),
    ("residence", "我住在南宁。", "今年我们搬到了桂林。", "我现在住在哪个城市？"),
    ("residence", "我家在兰州。", "我们全家搬去了西宁。", "我现在的家在哪？"),
    ("school", "我在师范大学读本科。", "我考上了复旦大学的研究生。", "我现在在哪所学校？"),
    ("relationship", "我和小刘在谈恋爱。", "我和小刘分手了。", "我现在有对象吗？"),
    ("relationship", "我单身。", "我和阿杰订婚了！", "我现在还单身吗？"),
    ("employer", "我在星光传媒做编辑。", "我跳槽到了晨曦出版社。", "我现在在哪家公司？"),
    ("job", "我是小学数学老师。", "我不教书了，现在做数据分析师。", "我现在是做什么的？"),
    ("residence", "我在长沙租房住。", "我现在住在株洲了。", "我现在住在哪？"),
    ("school", "我在第二中学上高一。", "我转学到了实验中学。", "我现在在哪个学校上学？"),
    ("job", "我是一名护士。", "我转行当了程序员。", "我现在的职业是什么？"),
]
# Other people's changes, plans, the user's questions and small talk: none of them is the user's change.
CHANGE_DISTRACTORS = {
    "en": [
        "My brother quit his job at the bank and moved to Leeds.",
        "I might move to Lisbon one day.",
        "I'm thinking about quitting to open a bakery.",
        "My friend got divorced last year.",
        "What should I cook tonight?",
        "The weather was lovely this morning.",
        "My sister just started at a new school.",
        "Haha, that's funny.",
        "My colleague relocated to Dubai.",
    ],
    "zh": [
        "我哥辞掉了银行的工作，搬去了上海。",
        "我以后可能会搬到大理。",
        "我在考虑辞职开个面包店。",
        "我朋友去年离婚了。",
        "今晚做什么菜好呢？",
        "今天早上天气真好。",
        "我妹妹刚转到新学校。",
        "哈哈，太好笑了。",
        "我同事调去迪拜了。",
    ],
}
CHANGES_PER_USER = 4


def changes(held_out: bool = False) -> dict[str, Any]:
    """One user per 4 changes (each of another attribute: change i goes to user i mod 16; the held-out
    set one change per user), the older statements in months 0-3, the changes in months 6-9, the distractors
    across the year, one present question per change (as of month 12.5)."""
    users = []
    sets = (
        (("en", CHANGES_HELD_OUT_EN), ("zh", CHANGES_HELD_OUT_ZH))
        if held_out
        else (("en", CHANGES_EN), ("zh", CHANGES_ZH))
    )
    for language, items in sets:
        # the held-out set repeats attributes (two residence changes among 12): one change per user, or
        # one user's two homes would make either gold answer wrong
        n_users = len(items) if held_out else len(items) // CHANGES_PER_USER
        for u in range(n_users):
            user = f"chg{'h' if held_out else ''}-{language}-{u:02d}"
            messages: list[dict[str, Any]] = []
            questions: list[dict[str, Any]] = []
            for slot, i in enumerate(range(u, len(items), n_users)):
                attribute, old, new, present = items[i]
                ids = [f"{user}-{i:02d}-old", f"{user}-{i:02d}-new"]
                for step, (mid, text) in enumerate(zip(ids, (old, new), strict=True)):
                    month = slot + step * 6
                    messages.append(
                        {
                            "id": mid,
                            "content": text,
                            "timestamp": START + month * MONTH + slot * 3600.0,
                            "session": f"m{month:02d}",
                        }
                    )
                questions.append(
                    {
                        "kind": "present",
                        "attribute": attribute,
                        "query": present,
                        "current": ids[1],
                        "old": ids[:1],
                    }
                )
            for j, text in enumerate(CHANGE_DISTRACTORS[language]):
                month = (j + u) % 12
                messages.append(
                    {
                        "id": f"{user}-d{j}",
                        "content": text,
                        "timestamp": START + month * MONTH + 7200.0 + j * 60.0,
                        "session": f"m{month:02d}",
                    }
                )
            messages.sort(key=lambda m: m["timestamp"])
            users.append(
                {
                    "user": user,
                    "language": language,
                    "as_of": AS_OF,
                    "changes": len(questions),
                    "messages": messages,
                    "questions": questions,
                }
            )
    return {
        "about": "Changes of job, employer, home, school and relationship (issue 24), zh + en",
        "users": users,
    }


def main() -> None:
    for name, data in (
        ("knowledge_update.json", knowledge_update()),
        ("knowledge_update_held_out.json", knowledge_update(held_out=True)),
        ("negation.json", negation()),
        ("changes.json", changes()),
        ("changes_held_out.json", changes(held_out=True)),
    ):
        (OUT / name).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
