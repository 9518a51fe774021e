"""Builds the long-history set (issue 29): chatbot users with a year of sessions, LongMemEval's shape.

    PYTHONPATH=. .venv/bin/python bench/make_long_history.py            # -> bench/results/long_history.json
    PYTHONPATH=. .venv/bin/python bench/make_long_history.py --users 8  # a smaller set, same generator
    PYTHONPATH=. .venv/bin/python bench/make_long_history.py --tokens 1000000  # one 1M-token user (issue 45)

Deterministic (`random.Random(SEED)` and the user's number): the set is built from the templates and
lexicons below, never fetched, so it is not committed (about 4 MB); `bench/long_history.py` builds it
in memory and prints its sha256. Half the users write English, half Chinese.

Each user: 40 sessions about a year apart in all (one every 5-13 days), 4-5 exchanges each (a user turn,
then the assistant's; most assistant answers are several hundred characters of advice on one of ten
topics), about 360 turns. Into that filler go six probes, one per LongMemEval question type, each with
its evidence turns marked (`has_answer`) and distractor turns that share its words without answering it:

- single-session-user: a fact the user said once ("we adopted a rabbit, we named her Mochi");
- single-session-assistant: a detail inside one of the assistant's long answers (a baking time, which
  suggested hotel has a rooftop pool);
- multi-session: facts spread over two or three sessions (three instruments bought at different times);
- knowledge-update: an attribute said, then changed sessions later (both turns are evidence);
- temporal-reasoning: which of two dated events came first, or what happened in a named month;
- single-session-preference: a stated preference, asked about by a request that does not repeat it
  ("can you suggest a dinner I could cook tonight?" after "I've gone vegetarian").

The filler draws on the same lexicons as the probes (other people's cars, other recipes' baking times,
hotel lists for other cities), so a question is rarely answered by its keywords alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SEED = 29
SESSIONS = 40
START = datetime(2025, 1, 6, 9, 0, tzinfo=UTC).timestamp()
DAY = 86400.0
TYPES = (
    "single-session-user",
    "single-session-assistant",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
    "single-session-preference",
)

# ---------------------------------------------------------------- lexicons
EN: dict[str, list[str]] = {
    "city": [
        "Lisbon",
        "Kyoto",
        "Vancouver",
        "Edinburgh",
        "Porto",
        "Seville",
        "Hanoi",
        "Melbourne",
        "Montreal",
        "Reykjavik",
        "Tbilisi",
        "Valencia",
        "Ljubljana",
        "Oaxaca",
    ],
    "dish": [
        "banana bread",
        "focaccia",
        "apple crumble",
        "lasagna",
        "shepherd's pie",
        "cornbread",
        "carrot cake",
        "quiche",
        "sourdough loaf",
        "granola bars",
    ],
    "name": [
        "Maya",
        "Jonah",
        "Priya",
        "Lucas",
        "Hannah",
        "Omar",
        "Greta",
        "Theo",
        "Nadia",
        "Felix",
        "Ines",
        "Ravi",
    ],
    "pet": ["rabbit", "kitten", "puppy", "parakeet", "guinea pig", "tortoise"],
    "pet_name": ["Mochi", "Biscuit", "Pepper", "Juniper", "Waffles", "Clementine", "Pickle", "Nori"],
    "instrument": [
        "ukulele",
        "cello",
        "digital piano",
        "banjo",
        "harmonica",
        "mandolin",
        "electric guitar",
        "trumpet",
        "violin",
    ],
    "company": [
        "Northwind Logistics",
        "Brightlane Health",
        "Copperleaf Studios",
        "Halcyon Bank",
        "Ridgeway Analytics",
        "Bluefin Robotics",
        "Marigold Foods",
        "Tessellate Games",
    ],
    "job": [
        "product designer",
        "data engineer",
        "account manager",
        "physiotherapist",
        "project coordinator",
        "copywriter",
        "QA lead",
        "sales engineer",
    ],
    "car": [
        "Subaru Outback",
        "Mazda CX-5",
        "Volvo V60",
        "Toyota Prius",
        "Kia Niro",
        "Skoda Octavia",
        "Honda Jazz",
        "Ford Focus",
    ],
    "book": [
        "The Salt Orchard",
        "Lanterns of Umber",
        "A Map for Quiet Rivers",
        "The Glass Cartographer",
        "Nine Winters North",
        "Small Gods of Harbor Street",
        "The Lighthouse Ledger",
        "Paper Birds over Lagos",
        "The Last Tram to Vesna",
    ],
    "author": [
        "Elena Marsh",
        "Tomas Varga",
        "Ruth Okafor",
        "Daniel Heald",
        "Ines Castell",
        "Kofi Mensah",
        "Sara Lindqvist",
    ],
    "hotel": [
        "Casa Aurora",
        "The Tidewater Inn",
        "Hotel Meridiana",
        "Lantern House",
        "The Copper Fern",
        "Villa Solstice",
        "The Alder Rooms",
        "Harbourlight Suites",
    ],
    "gift": [
        "silk scarf",
        "espresso machine",
        "orchid",
        "wool blanket",
        "pair of gardening gloves",
        "photo album",
        "fountain pen",
        "bread maker",
    ],
    "weekday": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "exercise": [
        "hill sprints",
        "a long easy run",
        "kettlebell swings",
        "a rowing session",
        "yoga",
        "interval cycling",
        "core and mobility work",
        "a swim of 40 lengths",
    ],
    "plant": ["fiddle-leaf fig", "monstera", "basil", "lemon tree", "snake plant", "orchid", "tomatoes"],
    "band": [
        "The Velvet Lanterns",
        "Nora Quill",
        "Glass Harbour",
        "The Amber Static",
        "Moss & Ivory",
        "Saint Juniper",
        "The Low Tides",
    ],
    "phone": [
        "Pixel 6",
        "iPhone 12",
        "Galaxy S21",
        "Fairphone 4",
        "Pixel 8",
        "iPhone 15",
        "Galaxy S24",
        "Nothing Phone 2",
    ],
    "allergen": ["shellfish", "sesame", "kiwi", "penicillin", "pollen from birch trees", "cashews"],
    "class": ["pottery", "salsa", "life drawing", "Spanish", "woodworking", "improv", "photography"],
}

ZH: dict[str, list[str]] = {
    "city": [
        "杭州",
        "成都",
        "大理",
        "厦门",
        "青岛",
        "西安",
        "苏州",
        "昆明",
        "南京",
        "长沙",
        "哈尔滨",
        "桂林",
    ],
    "dish": [
        "香蕉蛋糕",
        "蛋挞",
        "苹果派",
        "红豆面包",
        "戚风蛋糕",
        "披萨",
        "曲奇",
        "葱油饼",
        "芝士蛋糕",
        "肉松面包",
    ],
    "name": ["小雨", "阿杰", "思琪", "浩然", "婷婷", "子轩", "梦瑶", "俊杰", "佳怡", "宇航", "欣怡", "志强"],
    "pet": ["兔子", "小猫", "小狗", "鹦鹉", "仓鼠", "乌龟"],
    "pet_name": ["年糕", "豆包", "芝麻", "布丁", "可乐", "汤圆", "花卷", "奶茶"],
    "instrument": ["尤克里里", "大提琴", "电钢琴", "古筝", "口琴", "二胡", "电吉他", "小号", "小提琴"],
    "company": [
        "云帆物流",
        "启明医疗",
        "青橙设计",
        "汇通银行",
        "蓝鲸科技",
        "禾丰食品",
        "星河游戏",
        "远景数据",
    ],
    "job": [
        "产品设计师",
        "数据工程师",
        "客户经理",
        "康复治疗师",
        "项目专员",
        "文案策划",
        "测试组长",
        "售前工程师",
    ],
    "car": [
        "比亚迪秦",
        "特斯拉Model 3",
        "大众朗逸",
        "丰田卡罗拉",
        "理想L6",
        "本田思域",
        "蔚来ET5",
        "吉利星越",
    ],
    "book": [
        "《盐田果园》",
        "《琥珀灯笼》",
        "《安静河流的地图》",
        "《玻璃制图师》",
        "《北方九个冬天》",
        "《港口街的小神》",
        "《灯塔账簿》",
        "《纸鸟飞过拉各斯》",
        "《开往维斯纳的末班电车》",
    ],
    "author": ["林秋", "沈默", "许澄", "韩以安", "周叙", "陆遥", "苏清和"],
    "hotel": [
        "云栖客栈",
        "海潮旅馆",
        "子午酒店",
        "灯影小筑",
        "铜蕨精品酒店",
        "至日别墅",
        "桤木居",
        "港光套房",
    ],
    "gift": ["真丝围巾", "咖啡机", "蝴蝶兰", "羊毛毯", "园艺手套", "相册", "钢笔", "面包机"],
    "weekday": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
    "exercise": [
        "坡道冲刺",
        "慢跑一小时",
        "壶铃摆荡",
        "划船机训练",
        "瑜伽",
        "间歇骑行",
        "核心和拉伸",
        "游泳四十个来回",
    ],
    "plant": ["琴叶榕", "龟背竹", "罗勒", "柠檬树", "虎尾兰", "蝴蝶兰", "番茄"],
    "band": ["天鹅绒灯笼", "诺拉", "玻璃港", "琥珀杂音", "苔藓与象牙", "圣杜松", "低潮乐队"],
    "phone": [
        "小米12",
        "iPhone 12",
        "华为P50",
        "OPPO Find X5",
        "小米14",
        "iPhone 15",
        "华为Mate 60",
        "vivo X100",
    ],
    "allergen": ["虾蟹", "芝麻", "猕猴桃", "青霉素", "桦树花粉", "腰果"],
    "class": ["陶艺", "拉丁舞", "素描", "西班牙语", "木工", "即兴表演", "摄影"],
}

# ---------------------------------------------------------------- filler topics
# each topic: user prompts (questions to the assistant, or narrative), assistant sentences (an answer is
# several of them), in both languages; {slots} from the lexicons
FILLER_EN: dict[str, tuple[list[str], list[str]]] = {
    "travel": (
        [
            "I'm thinking about a few days in {city}, where should I stay?",
            "What's the best way to get around {city} without a car?",
            "My friend {name} is going to {city} next month, any tips I can pass on?",
            "We spent a weekend in {city} with {name}, the food was amazing.",
        ],
        [
            "In {city}, the old town is walkable and most sights are within twenty minutes of each other.",
            "{hotel} is a solid mid-range choice near the station, with a quiet courtyard.",
            "Book trains a few weeks ahead; prices usually double in the last days.",
            "Many hotels in {city} offer a rooftop terrace, but pools are rarer and often seasonal.",
            "Try to visit the markets early in the morning before the tour groups arrive.",
            "A travel card for public transport pays for itself after about four rides a day.",
            "If you rent a car, parking in the centre is expensive, so choose a hotel with a garage.",
            "The shoulder season, spring or late autumn, gives you mild weather and fewer crowds.",
            "Keep one day unplanned; the best memories often come from wandering without a list.",
            "Local bakeries are the cheapest breakfast, and the coffee is usually better than at the hotel.",
            "For a day trip, the coast is about an hour away and the views on the way are worth it.",
            "Check whether museums have a free evening; many do once a week.",
        ],
    ),
    "cooking": (
        [
            "Do you have a quick recipe for {dish}?",
            "My {dish} came out dry last time, what did I do wrong?",
            "{name} brought homemade {dish} to the party and everyone loved it.",
            "What can I bake for a weekend brunch with friends?",
        ],
        [
            "For {dish}, weigh your flour instead of using cups; it is the most common reason for dryness.",
            "Most loaf cakes bake at 175 degrees for about 50 minutes, but ovens vary, so start checking early.",
            "A skewer that comes out with a few moist crumbs means it is done.",
            "Let the batter rest for ten minutes so the flour hydrates evenly.",
            "Brown butter adds a nutty flavour that works well in almost any bake.",
            "Cover the top with foil halfway through if it browns too quickly.",
            "You can swap half the sugar for honey, but reduce the oven temperature by ten degrees.",
            "Room-temperature eggs mix in more smoothly and give a lighter crumb.",
            "Store it wrapped at room temperature for two days, or freeze slices for a month.",
            "A pinch of salt makes sweet bakes taste less flat.",
            "For a crisp crust, bake on the lowest shelf and leave the oven door closed for the first half.",
            "Serve it with yoghurt and fresh fruit to make it feel like a proper brunch.",
        ],
    ),
    "fitness": (
        [
            "How should I structure my week if I want to run a faster 5k?",
            "My legs are always sore after training, is that normal?",
            "{name} wants to start lifting weights, what should a beginner do?",
            "I went for a run along the river this morning, it felt great.",
        ],
        [
            "Two hard sessions a week are enough; the rest should be easy enough to hold a conversation.",
            "Hill sprints build power without the pounding of fast running on flat ground.",
            "Soreness a day or two after a new exercise is normal and fades as you adapt.",
            "Sleep is the most underrated part of recovery; aim for seven to nine hours.",
            "Increase your weekly distance by no more than about ten percent.",
            "Strength work twice a week protects your knees and hips.",
            "A 5k personal best usually comes after six to eight weeks of consistent training.",
            "Warm up for ten minutes before intervals, and cool down afterwards.",
            "Swimming and cycling are good low-impact ways to keep your fitness on rest days.",
            "Track how you feel, not only your pace; fatigue shows up in mood first.",
            "Eat some protein and carbohydrate within an hour after a long session.",
            "If a pain is sharp or gets worse during a run, stop and get it checked.",
        ],
    ),
    "tech": (
        [
            "My laptop has become really slow, what can I do?",
            "Which is better for backups, a cloud service or an external drive?",
            "{name} keeps getting phishing emails, how can they protect themselves?",
            "I finally cleaned up my photo library over the weekend.",
        ],
        [
            "Check which programs start automatically; disabling a few often helps more than anything else.",
            "A backup you never tested is not a backup; try restoring one file every few months.",
            "Use the 3-2-1 rule: three copies, on two kinds of media, one of them off site.",
            "A password manager makes it practical to use a different password everywhere.",
            "Turn on two-factor authentication for email first, because it resets every other account.",
            "If the disk is nearly full, the system slows down; keep at least fifteen percent free.",
            "Phishing messages usually create urgency; pause and check the sender's address.",
            "An external SSD is much faster than a spinning drive for photo libraries.",
            "Updates fix security holes, so install them even when they are inconvenient.",
            "Battery health drops faster when the phone is always kept at a full charge.",
            "Sort photos by year first; tagging people can come later.",
            "A factory reset is the last resort, after a full backup.",
        ],
    ),
    "garden": (
        [
            "How often should I water my {plant}?",
            "The leaves on my {plant} are turning yellow, help!",
            "{name} gave me a cutting from her garden, how do I make it root?",
            "I repotted all the plants on the balcony yesterday.",
        ],
        [
            "Overwatering kills more houseplants than underwatering; let the top few centimetres dry out.",
            "Yellow leaves at the bottom are often just old leaves, but many at once point to too much water.",
            "A pot without drainage holes will eventually rot the roots.",
            "Most plants like bright, indirect light; direct afternoon sun can scorch the leaves.",
            "Feed once a month in spring and summer and not at all in winter.",
            "Cuttings root well in a glass of water on a bright windowsill; change the water weekly.",
            "Repot in spring, into a pot only a few centimetres wider than the old one.",
            "Wipe large leaves with a damp cloth so they can take in light.",
            "Herbs like basil grow bushier if you pinch off the tips regularly.",
            "Group plants together to raise the humidity around them.",
            "Check under the leaves for pests when you water.",
            "Tomatoes need at least six hours of sun and steady watering to avoid split fruit.",
        ],
    ),
    "money": (
        [
            "How much of my salary should I be saving each month?",
            "Is it worth paying off my car loan early?",
            "{name} is asking me whether to rent or buy, what do you think?",
            "I finally set up a budget spreadsheet this weekend.",
        ],
        [
            "A common rule is to save about twenty percent of your take-home pay.",
            "Build an emergency fund of three to six months of expenses before investing.",
            "Paying off a loan early makes sense when its interest rate is higher than what savings earn.",
            "Automatic transfers on payday make saving easier than deciding each month.",
            "Low-cost index funds beat most actively managed funds over long periods.",
            "Track spending for one month before you set a budget; people underestimate small purchases.",
            "Renting is not wasted money; it buys flexibility and no maintenance costs.",
            "Buying usually pays off only if you stay in the same place for five years or more.",
            "Review subscriptions twice a year; many are forgotten.",
            "Keep your savings and your spending money in separate accounts.",
            "A large car purchase should not exceed about a third of your annual income.",
            "Insurance should cover the losses you cannot afford, not the small ones.",
        ],
    ),
    "music": (
        [
            "I want to learn an instrument as an adult, where should I start?",
            "How long should I practise each day?",
            "{name} just started playing the {instrument}, any advice for them?",
            "I went to a small gig at a bar downtown last night.",
        ],
        [
            "The ukulele and the keyboard are the friendliest instruments for adult beginners.",
            "Twenty focused minutes a day beat two hours once a week.",
            "Learn a few songs you love early on; motivation matters more than theory at first.",
            "A teacher for the first few months prevents habits that are hard to unlearn.",
            "Record yourself once a week; you will hear progress you do not notice while playing.",
            "A second-hand instrument is fine to start with, as long as it is set up properly.",
            "Use a metronome for a few minutes each session, even if you hate it.",
            "Playing with other people, even badly, teaches timing faster than practising alone.",
            "Stringed instruments hurt your fingertips for the first weeks; it passes.",
            "Small venues are the best way to discover bands before they get famous.",
            "Music theory makes more sense after you already play a bit.",
            "Keep the instrument out of its case so you pick it up more often.",
        ],
    ),
    "work": (
        [
            "How do I ask my manager for a raise?",
            "I have too many meetings, how can I protect time for focused work?",
            "{name} is starting a new job on Monday, what should they do in the first week?",
            "We shipped the big release at work today, finally.",
        ],
        [
            "Bring concrete results and what the role pays elsewhere, and ask in a one-to-one, not by email.",
            "Block two mornings a week for deep work and treat them like meetings.",
            "In a new job, listen more than you talk for the first weeks and write down who does what.",
            "Decline meetings without an agenda, politely, and ask for a summary instead.",
            "A weekly note to your manager about progress avoids surprises at review time.",
            "Learn the names of the people who keep things running; they will help you most.",
            "If you are always busy but never finishing, you have too many projects open.",
            "Negotiate the start date and the title too, not only the salary.",
            "Take real breaks; a walk at lunch helps the afternoon more than another coffee.",
            "Write down decisions in a shared place so nobody has to remember them.",
            "Ask for feedback on one specific thing rather than in general.",
            "Leave on good terms; industries are smaller than they look.",
        ],
    ),
}

FILLER_ZH: dict[str, tuple[list[str], list[str]]] = {
    "travel": (
        [
            "我想去{city}玩几天，住哪里比较好？",
            "在{city}不开车怎么出行最方便？",
            "我朋友{name}下个月去{city}，有什么建议我可以转告她？",
            "上周末和{name}去了趟{city}，吃得特别好。",
        ],
        [
            "{city}的老城区适合步行，大部分景点之间走路二十分钟以内。",
            "{hotel}离车站近，价格适中，院子很安静。",
            "高铁票最好提前几周买，临近出发经常买不到合适的车次。",
            "{city}很多酒店有屋顶露台，但有泳池的不多，而且往往只在夏天开放。",
            "早上去菜市场最好，旅行团还没到，能看到当地人的生活。",
            "如果每天坐四次以上公交地铁，办一张交通卡更划算。",
            "租车的话市中心停车很贵，最好选有停车场的酒店。",
            "春天或者深秋去人少，天气也舒服。",
            "留一天不做计划，随便走走往往是最难忘的。",
            "本地早餐铺又便宜又好吃，比酒店的自助早餐强。",
            "想一日游的话，海边大概一个小时车程，路上风景很好。",
            "很多博物馆每周有一天免费开放，出发前查一下。",
        ],
    ),
    "cooking": (
        [
            "有没有简单的{dish}做法？",
            "我上次做的{dish}太干了，是哪里出了问题？",
            "{name}带了自己做的{dish}来聚会，大家都说好吃。",
            "周末朋友来吃早午餐，烤点什么好？",
        ],
        [
            "做{dish}最好用秤称面粉，用杯子量很容易放多，这是发干最常见的原因。",
            "大多数磅蛋糕用175度烤五十分钟左右，但每个烤箱不一样，要早点开始检查。",
            "用竹签插一下，带出一点湿润的碎屑就说明熟了。",
            "面糊静置十分钟，面粉吸水更均匀。",
            "焦化黄油有坚果香，几乎放在什么烘焙里都好吃。",
            "如果表面上色太快，烤到一半盖一张锡纸。",
            "糖可以换一半成蜂蜜，但炉温要降十度。",
            "鸡蛋回到室温再用，更容易混匀，组织也更松软。",
            "包好放室温可以保存两天，切片冷冻能放一个月。",
            "甜点里加一小撮盐，味道不会发闷。",
            "想要底部酥脆就放最下层烤，前半段不要开烤箱门。",
            "配酸奶和新鲜水果，就很像一顿正式的早午餐。",
        ],
    ),
    "fitness": (
        [
            "想把五公里跑快一点，一周应该怎么安排？",
            "我每次训练完腿都很酸，正常吗？",
            "{name}想开始练力量，新手应该怎么做？",
            "今天早上沿着江边跑了一圈，感觉特别好。",
        ],
        [
            "一周两次高强度就够了，其余的跑步要轻松到能边跑边聊天。",
            "坡道冲刺能练爆发力，又不像平路快跑那样伤膝盖。",
            "新动作之后一两天肌肉酸痛是正常的，适应了就好。",
            "睡眠是恢复里最被低估的部分，最好睡七到九个小时。",
            "每周跑量增加不要超过百分之十。",
            "每周两次力量训练能保护膝盖和髋关节。",
            "坚持训练六到八周，五公里通常就能跑出个人最好成绩。",
            "间歇跑之前热身十分钟，结束后做放松。",
            "休息日可以游泳或者骑车，都是低冲击的有氧。",
            "记录自己的感觉，不只是配速，疲劳往往先体现在情绪上。",
            "长距离训练后一小时内吃点蛋白质和碳水。",
            "如果跑步时疼痛很尖锐或者越来越重，马上停下去检查。",
        ],
    ),
    "tech": (
        [
            "我的笔记本电脑越来越慢了，怎么办？",
            "备份用网盘好还是移动硬盘好？",
            "{name}老是收到钓鱼邮件，怎么防？",
            "周末终于把手机里的照片整理了一遍。",
        ],
        [
            "先看看哪些程序开机自启动，关掉几个往往比什么都管用。",
            "没试过恢复的备份不算备份，每隔几个月试着恢复一个文件。",
            "备份遵循3-2-1原则：三份拷贝，两种介质，一份放在别处。",
            "用密码管理器，才能做到每个网站一个不同的密码。",
            "先给邮箱开两步验证，因为其他账号都靠邮箱找回密码。",
            "硬盘快满的时候系统会变慢，至少留百分之十五的空间。",
            "钓鱼邮件通常制造紧迫感，先停一下，看看发件人地址。",
            "整理照片库用固态移动硬盘比机械硬盘快得多。",
            "系统更新会修补安全漏洞，再麻烦也要装。",
            "手机一直充满电放着，电池健康度掉得更快。",
            "照片先按年份分好，人物标签以后再说。",
            "恢复出厂设置是最后一步，之前一定要完整备份。",
        ],
    ),
    "garden": (
        [
            "{plant}应该多久浇一次水？",
            "我的{plant}叶子发黄了，怎么救？",
            "{name}从她花园里剪了一枝给我，怎么让它生根？",
            "昨天把阳台上的花全换了盆。",
        ],
        [
            "浇水过多比浇水太少更容易养死植物，等表层几厘米的土干了再浇。",
            "底部的老叶发黄很正常，但一下子黄很多通常是水浇多了。",
            "没有排水孔的花盆迟早会烂根。",
            "大多数植物喜欢明亮的散射光，下午的直射阳光会晒伤叶子。",
            "春夏每个月施一次肥，冬天不用施。",
            "枝条插在清水里放在明亮的窗台上就能生根，每周换一次水。",
            "春天换盆，新盆比旧盆大几厘米就够了。",
            "大叶子用湿布擦一擦，更好地接受光照。",
            "罗勒经常掐尖，会长得更茂密。",
            "把植物放在一起，可以提高周围的湿度。",
            "浇水的时候顺便看看叶子背面有没有虫。",
            "番茄每天至少要晒六个小时，浇水要均匀，不然果子会裂。",
        ],
    ),
    "money": (
        [
            "每个月工资应该存多少比较合适？",
            "车贷值得提前还吗？",
            "{name}问我该租房还是买房，你怎么看？",
            "这周末终于把记账表格做好了。",
        ],
        [
            "常见的建议是存下到手收入的百分之二十左右。",
            "先攒够三到六个月的生活费作为应急资金，再考虑投资。",
            "贷款利率比存款收益高的时候，提前还款才划算。",
            "发工资当天自动转账到储蓄账户，比每个月临时决定更容易存下钱。",
            "长期来看，低费率的指数基金跑赢大多数主动基金。",
            "先记一个月的账再做预算，大家总是低估小额开销。",
            "租房不是浪费钱，换来的是灵活和不用操心维修。",
            "买房一般要在同一个地方住五年以上才划算。",
            "每半年检查一次订阅服务，很多都是忘了取消的。",
            "储蓄和日常花销最好分成两个账户。",
            "买车的钱最好不要超过年收入的三分之一。",
            "保险是用来兜住你承受不起的损失，不是小钱。",
        ],
    ),
    "music": (
        [
            "成年人想学乐器，从哪里开始比较好？",
            "每天应该练多久？",
            "{name}刚开始学{instrument}，有什么建议给她？",
            "昨晚去市中心一个小酒吧听了场演出。",
        ],
        [
            "尤克里里和键盘对成年初学者最友好。",
            "每天专注练二十分钟，比一周练一次两小时效果好。",
            "早点学几首自己喜欢的歌，刚开始兴趣比乐理重要。",
            "头几个月最好跟老师学，免得养成难改的坏习惯。",
            "每周给自己录一次音，能听出练的时候察觉不到的进步。",
            "二手乐器入门完全可以，只要调校好。",
            "每次练习用几分钟节拍器，就算讨厌也要用。",
            "和别人一起玩，哪怕弹得不好，也比一个人练更快掌握节奏。",
            "弦乐器头几周指尖会疼，过去就好了。",
            "小场地是发现乐队的最好地方，趁他们还没出名。",
            "会弹一点之后再学乐理，更容易理解。",
            "乐器别收在琴盒里，放在外面才会经常拿起来。",
        ],
    ),
    "work": (
        [
            "怎么跟领导提加薪？",
            "会太多了，怎么保证有时间专心做事？",
            "{name}下周一入职新公司，第一周应该做什么？",
            "今天我们组终于把大版本发出去了。",
        ],
        [
            "带上具体的成绩和市场上这个岗位的薪资，约一对一面谈，不要发邮件提。",
            "每周留两个上午专门做深度工作，像开会一样写进日历。",
            "刚入职的几周多听少说，把谁负责什么记下来。",
            "没有议程的会可以礼貌地拒绝，请对方会后发个总结。",
            "每周给领导发一份进度小结，考核时就不会有意外。",
            "记住那些让事情运转起来的人的名字，他们帮你最多。",
            "总是很忙却什么都做不完，说明同时开的项目太多了。",
            "谈offer的时候入职时间和职级也可以谈，不只是工资。",
            "好好休息，午饭后散个步比再喝一杯咖啡更管用。",
            "把决定写在共享的地方，谁都不用靠记忆。",
            "请别人针对一件具体的事给反馈，而不是泛泛地问。",
            "离职时好聚好散，行业比看起来小得多。",
        ],
    ),
}

ACKS_EN = [
    "Thanks, that's really helpful!",
    "Got it, I'll try that.",
    "Makes sense, thank you.",
    "Good to know.",
    "Perfect, thanks a lot.",
]
ACKS_ZH = ["谢谢，很有帮助！", "明白了，我试试。", "有道理，谢谢。", "好的，知道了。", "太好了，多谢。"]
REPLIES_EN = ["That sounds lovely!", "Nice, enjoy it!", "Good for you!", "Sounds like a great time."]
REPLIES_ZH = ["听起来真不错！", "挺好的，好好享受！", "真为你高兴！", "听起来很开心。"]


# ---------------------------------------------------------------- probes
@dataclass
class Probe:
    """A question and the turns that answer it. `evidence`: (role, text) in the order they must appear,
    each in its own session; a `("user", q), ("assistant", a)` pair with `pair=True` stays together and
    only the assistant turn is evidence. `distractors`: turns that share its words, anywhere."""

    type: str
    question: str
    answer: str
    evidence: list[tuple[str, str]]
    distractors: list[tuple[str, str]] = field(default_factory=list)
    pair: bool = False
    months: bool = False  # temporal by month: the evidence's session month is in the question
    order: tuple[str, str] | None = None  # temporal by order: (first, second) labels for the answer


Pick = Callable[[str], str]


def _pick(rng: random.Random, lex: dict[str, list[str]]) -> tuple[Pick, Callable[[str, int], list[str]]]:
    def one(key: str) -> str:
        return rng.choice(lex[key])

    def some(key: str, n: int) -> list[str]:
        return rng.sample(lex[key], n)

    return one, some


def _long_answer(
    rng: random.Random, sentences: list[str], fill: Callable[[str], str], lo: int, hi: int
) -> str:
    chosen = rng.sample(sentences, rng.randint(lo, hi))
    joiner = "" if any("\u4e00" <= ch <= "\u9fff" for ch in sentences[0]) else " "
    return joiner.join(fill(s) for s in chosen)


def _filler(rng: random.Random, lex: dict[str, list[str]]) -> Callable[[str], str]:
    def fill(template: str) -> str:
        out = template
        for key, values in lex.items():
            token = "{" + key + "}"
            while token in out:
                out = out.replace(token, rng.choice(values), 1)
        return out

    return fill


def probes_en(rng: random.Random) -> dict[str, list[Callable[[], Probe]]]:
    one, some = _pick(rng, EN)
    topic = FILLER_EN

    def ssu_pet() -> Probe:
        pet, name, other = one("pet"), *some("pet_name", 2)
        return Probe(
            "single-session-user",
            "What did we call the animal we brought home from the shelter?",
            name,
            [
                (
                    "user",
                    f"Big news at home: we adopted a {pet} from the shelter on Saturday and named her {name}. "
                    "The kids haven't stopped giggling since.",
                )
            ],
            [
                ("user", f"My neighbour's {pet} {other} got out of the garden again this morning."),
                ("user", "We walked past the animal shelter on the way home and the kids begged to go in."),
            ],
        )

    def ssu_gift() -> Probe:
        gift, other = some("gift", 2)
        return Probe(
            "single-session-user",
            "What present did I give my mother on her birthday?",
            gift,
            [
                (
                    "user",
                    f"Mum turned sixty-five yesterday; I got her a {gift} and she was genuinely thrilled.",
                )
            ],
            [
                (
                    "user",
                    f"My brother is planning to buy Mum a {other} for Christmas, I think it's a bit dull.",
                ),
                ("user", "Birthdays in our family always turn into huge dinners."),
            ],
        )

    def ssu_class() -> Probe:
        cls, day, other = one("class"), *some("weekday", 2)
        return Probe(
            "single-session-user",
            f"On which evening of the week are my {cls} lessons?",
            day,
            [
                (
                    "user",
                    f"I finally enrolled in that {cls} course at the community centre, it runs every {day} "
                    "evening until summer.",
                )
            ],
            [
                (
                    "user",
                    f"{one('name')} goes to a {cls} workshop on {other} mornings, she says it's relaxing.",
                ),
                ("user", "The community centre is renovating its hall, so some courses moved."),
            ],
        )

    def ssu_car() -> Probe:
        car, other = some("car", 2)
        return Probe(
            "single-session-user",
            "Which vehicle did I end up buying?",
            car,
            [
                (
                    "user",
                    f"After months of test drives I picked up my {car} from the dealership today. "
                    "It smells brand new.",
                )
            ],
            [
                ("user", f"My colleague {one('name')} drives a {other} and keeps telling me to get one."),
                ("user", "Car prices are still ridiculous, I spent hours comparing dealerships."),
            ],
        )

    def ssu_allergy() -> Probe:
        allergen, other = some("allergen", 2)
        return Probe(
            "single-session-user",
            "What did the doctor find out I'm allergic to?",
            allergen,
            [
                (
                    "user",
                    f"Got the test results back: the doctor says I'm allergic to {allergen}, which explains "
                    "the rashes.",
                )
            ],
            [
                ("user", f"{one('name')} is allergic to {other}, so we always check menus when we eat out."),
                ("user", "I have another doctor's appointment next week for my back."),
            ],
        )

    def ssa_bake() -> Probe:
        dish, mins, temp = one("dish"), rng.choice([35, 42, 48, 55, 65]), rng.choice([160, 170, 180, 190])
        sentences = [s for s in topic["cooking"][1] if "minutes" not in s]
        fill = _filler(rng, EN)
        body = (
            _long_answer(rng, sentences, fill, 3, 4)
            + f" For this {dish}, bake it at {temp} degrees for {mins} minutes, then let it cool in the "
            "tin for a quarter of an hour. " + _long_answer(rng, sentences, fill, 2, 3)
        )
        return Probe(
            "single-session-assistant",
            f"How long did you say the {dish} needs in the oven?",
            f"{mins} minutes",
            [
                ("user", f"Could you walk me through baking a {dish}? I've never made one."),
                ("assistant", body),
            ],
            [
                (
                    "assistant",
                    f"A {one('dish')} is forgiving: bake it at {temp} degrees for "
                    f"{rng.choice([25, 30, 70])} minutes and check it with a skewer.",
                )
            ],
            pair=True,
        )

    def ssa_hotel() -> Probe:
        city, hotels = one("city"), some("hotel", 4)
        target = rng.randrange(4)
        features = ["a rooftop pool", "free bikes for guests", "a library bar", "a spa in the basement"]
        rng.shuffle(features)
        features[features.index("a rooftop pool")], features[target] = features[target], "a rooftop pool"
        lines = " ".join(
            f"{h} has {f}, and rooms from {rng.randint(80, 240)} euros a night."
            for h, f in zip(hotels, features, strict=True)
        )
        body = f"Here are four places to stay in {city} that fit your budget. {lines} " + _long_answer(
            rng, topic["travel"][1], _filler(rng, EN), 2, 3
        )
        return Probe(
            "single-session-assistant",
            f"Of the hotels you suggested for {city}, which one had the pool on the roof?",
            hotels[target],
            [
                ("user", f"I need somewhere to stay in {city} for four nights, any suggestions?"),
                ("assistant", body),
            ],
            [
                (
                    "assistant",
                    f"In {one('city')}, {one('hotel')} has a rooftop pool, but it is closed in winter.",
                )
            ],
            pair=True,
        )

    def ssa_plan() -> Probe:
        days = EN["weekday"][:]
        exercises = [rng.choice(EN["exercise"]) for _ in days]
        day = rng.choice(days[:6])
        body = (
            "Here is a week that builds towards your goal without overloading you. "
            + " ".join(f"On {d}, {e}." for d, e in zip(days, exercises, strict=True))
            + " "
            + _long_answer(rng, topic["fitness"][1], _filler(rng, EN), 2, 3)
        )
        return Probe(
            "single-session-assistant",
            f"What was I supposed to do on {day}s in the training plan you made me?",
            exercises[days.index(day)],
            [
                (
                    "user",
                    "Can you put together a weekly training plan for me? I want to get fitter by summer.",
                ),
                ("assistant", body),
            ],
            [
                ("user", f"I skipped training on {day} because of work."),
                (
                    "assistant",
                    f"Many plans put {one('exercise')} on {day} because people are fresh after the weekend.",
                ),
            ],
            pair=True,
        )

    def ssa_books() -> Probe:
        books, authors = some("book", 4), some("author", 4)
        k = rng.randrange(4)
        lines = " ".join(
            f"{b} by {a} is {rng.choice(['quiet and funny', 'a slow burn', 'beautifully written', 'a page-turner'])}."
            for b, a in zip(books, authors, strict=True)
        )
        body = (
            "If you want something for the long evenings, here are four novels I would pick for you. "
            f"{lines} Start with whichever cover you like best; they are all under four hundred pages. "
            "Library apps often have them as e-books, so you can try a chapter before buying."
        )
        return Probe(
            "single-session-assistant",
            f"Which book by {authors[k]} was on the reading list you gave me?",
            books[k],
            [("user", "I'd like some novel recommendations for the winter."), ("assistant", body)],
            [("user", f"My book club is reading something by {authors[(k + 1) % 4]} this month.")],
            pair=True,
        )

    def multi_instruments() -> Probe:
        a, b, c = some("instrument", 3)
        return Probe(
            "multi-session",
            "Which musical instruments have I bought so far?",
            f"{a}, {b}, {c}",
            [
                ("user", f"I couldn't resist, I bought a second-hand {a} at the flea market today."),
                ("user", f"Treated myself to a {b} with my bonus, the shop even threw in a case."),
                ("user", f"My new {c} arrived in the post this morning, I've been playing all day."),
            ],
            [
                (
                    "user",
                    f"{one('name')} is selling her old {one('instrument')}, but I don't need another one.",
                ),
                ("user", "The music shop downtown is closing, everything is half price."),
            ],
        )

    def multi_trips() -> Probe:
        a, b, c = some("city", 3)
        return Probe(
            "multi-session",
            "Which cities did I travel to this year?",
            f"{a}, {b}, {c}",
            [
                (
                    "user",
                    f"Just got back from a long weekend in {a}, my feet are destroyed from all the walking.",
                ),
                ("user", f"Work sent me to {b} for five days, I managed one free afternoon by the water."),
                ("user", f"We took the kids to {c} for the school holidays, they want to live there now."),
            ],
            [
                ("user", f"{one('name')} keeps sending me photos from {one('city')}, I'm so jealous."),
                ("user", "I've been browsing flights for hours but haven't booked anything."),
            ],
        )

    def multi_books() -> Probe:
        a, b = some("book", 2)
        return Probe(
            "multi-session",
            "Which novels have I finished reading?",
            f"{a}, {b}",
            [
                ("user", f"Stayed up until two to finish {a}. That ending!"),
                ("user", f"I read {b} in two sittings over the weekend, couldn't put it down."),
            ],
            [
                ("user", f"{one('name')} lent me {one('book')} but I haven't opened it yet."),
                ("user", "I keep buying books faster than I can read them."),
            ],
        )

    def ku_job() -> Probe:
        (c1, c2), (j1, j2) = some("company", 2), some("job", 2)
        return Probe(
            "knowledge-update",
            "Which company am I working for these days?",
            c2,
            [
                ("user", f"I work as a {j1} at {c1}, mostly from home, which suits me."),
                ("user", f"I handed in my notice at {c1} and started as a {j2} at {c2} this week."),
            ],
            [("user", f"{one('name')} just got an offer from {one('company')}, she's over the moon.")],
        )

    def ku_home() -> Probe:
        a, b = some("city", 2)
        return Probe(
            "knowledge-update",
            "What city do I live in now?",
            b,
            [
                ("user", f"Our flat in {a} is tiny, but it's right next to the park, so I can't complain."),
                ("user", f"The move is done: we live in {b} now, boxes everywhere."),
            ],
            [("user", f"My sister is thinking about moving to {one('city')} for work.")],
        )

    def ku_5k() -> Probe:
        t1 = f"{rng.randint(26, 29)}:{rng.randint(10, 59):02d}"
        t2 = f"{rng.randint(22, 25)}:{rng.randint(10, 59):02d}"
        return Probe(
            "knowledge-update",
            "What is my fastest 5k time at the moment?",
            t2,
            [
                ("user", f"My best 5k so far is {t1}, I'd love to get it under the half hour comfortably."),
                ("user", f"Smashed my 5k record at parkrun this morning: {t2}!"),
            ],
            [("user", f"{one('name')} ran the 5k in 31 minutes, her first race ever.")],
        )

    def ku_phone() -> Probe:
        a, b = some("phone", 2)
        return Probe(
            "knowledge-update",
            "Which phone do I use nowadays?",
            b,
            [
                ("user", f"I'm still on my old {a}, the battery barely lasts until lunch."),
                ("user", f"Gave in and switched to a {b}; the battery easily lasts two days."),
            ],
            [("user", f"My dad wants a {one('phone')} but he'll only use it for calls.")],
        )

    def tr_order() -> Probe:
        events = [
            ("I ran my first half marathon today", "the half marathon"),
            ("I passed my driving test this morning", "the driving test"),
            ("we finally got the keys to the new apartment", "getting the apartment keys"),
            ("I got my scuba diving certificate today", "the scuba certificate"),
            ("I gave my first conference talk today", "the conference talk"),
            ("I finished the kitchen renovation at last", "the kitchen renovation"),
        ]
        (ea, la), (eb, lb) = rng.sample(events, 2)
        return Probe(
            "temporal-reasoning",
            f"Which came first: {la} or {lb}?",
            la,
            [
                ("user", f"What a day, {ea}! I'm exhausted but happy."),
                ("user", f"Big news, {eb}. Celebrating tonight."),
            ],
            [("user", f"My cousin is planning {la} for next year.")],
            order=(la, lb),
        )

    def tr_month() -> Probe:
        band, other = some("band", 2)
        return Probe(
            "temporal-reasoning",
            "Which band did I see live in {month}?",
            band,
            [("user", f"Saw {band} live last night, the encore alone was worth the ticket.")],
            [
                ("user", f"Went to see {other} at the arena, a bit too loud for me."),
                ("user", f"{one('name')} has tickets for {other} in the autumn."),
            ],
            months=True,
        )

    def pref_diet() -> Probe:
        return Probe(
            "single-session-preference",
            "Can you suggest something I could make for dinner tonight?",
            "vegetarian, no mushrooms",
            [
                (
                    "user",
                    "I've gone fully vegetarian this year, and anything with mushrooms makes me gag, "
                    "so I'm relearning how to cook.",
                )
            ],
            [
                ("user", f"{one('name')} cooked a steak dinner for us on Friday."),
                ("assistant", "A quick dinner idea: a tray bake with chicken thighs, potatoes and lemon."),
            ],
        )

    def pref_travel() -> Probe:
        return Probe(
            "single-session-preference",
            "Where should I go on my next holiday?",
            "a small, quiet coastal town; no big cities",
            [
                (
                    "user",
                    "I've realised I'm happiest in small, quiet towns by the sea; big cities just drain me.",
                )
            ],
            [
                ("user", f"{one('name')} loved the nightlife in {one('city')} on her last holiday."),
                ("user", "I have ten days of leave left this year."),
            ],
        )

    def pref_music() -> Probe:
        return Probe(
            "single-session-preference",
            "What should I put on to listen to while I work?",
            "old soul records (Otis Redding)",
            [
                (
                    "user",
                    "Lately I can't get enough of old soul records, Otis Redding has been on repeat all week.",
                )
            ],
            [
                ("user", f"{one('name')} only listens to techno when she works, it drives me mad."),
                (
                    "assistant",
                    "Some people focus best with instrumental music or white noise while they work.",
                ),
            ],
        )

    def pref_workout() -> Probe:
        return Probe(
            "single-session-preference",
            "What kind of exercise routine would suit me?",
            "low-impact (swimming), no running",
            [
                (
                    "user",
                    "My knees just can't take running any more, so I stick to low-impact things like swimming.",
                )
            ],
            [
                ("user", f"{one('name')} is training for a marathon and runs every morning."),
                ("user", "The gym near the office has a new spin studio."),
            ],
        )

    def pref_reading() -> Probe:
        return Probe(
            "single-session-preference",
            "What should I read next?",
            "slow, character-driven literary fiction; no thrillers",
            [
                (
                    "user",
                    "I love slow, character-driven literary fiction; fast-paced thrillers bore me to tears.",
                )
            ],
            [
                ("user", f"{one('name')} recommended a thriller, {one('book')}, but I'm not sure."),
                ("user", "The library near me has a new reading corner."),
            ],
        )

    return {
        "single-session-user": [ssu_pet, ssu_gift, ssu_class, ssu_car, ssu_allergy],
        "single-session-assistant": [ssa_bake, ssa_hotel, ssa_plan, ssa_books],
        "multi-session": [multi_instruments, multi_trips, multi_books],
        "knowledge-update": [ku_job, ku_home, ku_5k, ku_phone],
        "temporal-reasoning": [tr_order, tr_month],
        "single-session-preference": [pref_diet, pref_travel, pref_music, pref_workout, pref_reading],
    }


def probes_zh(rng: random.Random) -> dict[str, list[Callable[[], Probe]]]:
    one, some = _pick(rng, ZH)
    topic = FILLER_ZH

    def ssu_pet() -> Probe:
        pet, name, other = one("pet"), *some("pet_name", 2)
        return Probe(
            "single-session-user",
            "我们从救助站领回家的那只小家伙叫什么名字？",
            name,
            [("user", f"家里有大事：周六我们从救助站领养了一只{pet}，取名叫{name}，孩子们开心坏了。")],
            [
                ("user", f"邻居家的{pet}{other}今天早上又从院子里跑出来了。"),
                ("user", "回家路上经过动物救助站，孩子们吵着要进去看看。"),
            ],
        )

    def ssu_gift() -> Probe:
        gift, other = some("gift", 2)
        return Probe(
            "single-session-user",
            "我妈过生日的时候我送了她什么？",
            gift,
            [("user", f"老妈昨天六十五岁生日，我送了她一个{gift}，她特别高兴。")],
            [
                ("user", f"我哥打算圣诞节送妈妈{other}，我觉得有点没意思。"),
                ("user", "我们家过生日总是变成一大桌子饭。"),
            ],
        )

    def ssu_class() -> Probe:
        cls, day, other = one("class"), *some("weekday", 2)
        return Probe(
            "single-session-user",
            f"我的{cls}课是每周哪天晚上？",
            day,
            [("user", f"终于报了社区中心的{cls}班，每{day}晚上上课，一直到夏天。")],
            [
                ("user", f"{one('name')}每{other}上午去上{cls}工作坊，她说很放松。"),
                ("user", "社区中心在翻修大厅，有些课换了地方。"),
            ],
        )

    def ssu_car() -> Probe:
        car, other = some("car", 2)
        return Probe(
            "single-session-user",
            "我最后买了哪款车？",
            car,
            [("user", f"试驾了好几个月，今天终于从4S店把我的{car}提回来了，一股新车味。")],
            [
                ("user", f"同事{one('name')}开的是{other}，一直劝我也买一辆。"),
                ("user", "现在车价还是很离谱，我对比了好多家店。"),
            ],
        )

    def ssu_allergy() -> Probe:
        allergen, other = some("allergen", 2)
        return Probe(
            "single-session-user",
            "医生查出来我对什么过敏？",
            allergen,
            [("user", f"检查结果出来了，医生说我对{allergen}过敏，难怪一直起疹子。")],
            [
                ("user", f"{one('name')}对{other}过敏，我们出去吃饭总要看菜单。"),
                ("user", "下周我还要去看医生，腰不太舒服。"),
            ],
        )

    def ssa_bake() -> Probe:
        dish, mins, temp = one("dish"), rng.choice([35, 42, 48, 55, 65]), rng.choice([160, 170, 180, 190])
        sentences = [s for s in topic["cooking"][1] if "分钟" not in s]
        fill = _filler(rng, ZH)
        body = (
            _long_answer(rng, sentences, fill, 3, 5)
            + f"这个{dish}用{temp}度烤{mins}分钟，出炉后在模具里放凉一刻钟再脱模。"
            + _long_answer(rng, sentences, fill, 3, 4)
        )
        return Probe(
            "single-session-assistant",
            f"你说{dish}要在烤箱里烤多久？",
            f"{mins}分钟",
            [("user", f"能教我怎么烤{dish}吗？我从来没做过。"), ("assistant", body)],
            [
                (
                    "assistant",
                    f"{one('dish')}很好做：{temp}度烤{rng.choice([25, 30, 70])}分钟，用竹签检查一下就行。",
                )
            ],
            pair=True,
        )

    def ssa_hotel() -> Probe:
        city, hotels = one("city"), some("hotel", 4)
        target = rng.randrange(4)
        features = ["屋顶泳池", "免费自行车", "图书馆酒吧", "地下水疗中心"]
        rng.shuffle(features)
        features[features.index("屋顶泳池")], features[target] = features[target], "屋顶泳池"
        lines = "".join(
            f"{h}有{f}，房价每晚{rng.randint(300, 1200)}元起。" for h, f in zip(hotels, features, strict=True)
        )
        body = f"{city}有四家符合你预算的住处。{lines}" + _long_answer(
            rng, topic["travel"][1], _filler(rng, ZH), 3, 4
        )
        return Probe(
            "single-session-assistant",
            f"你给我推荐的{city}那几家酒店里，哪家楼顶有游泳池？",
            hotels[target],
            [("user", f"我要在{city}住四晚，有什么推荐的住处吗？"), ("assistant", body)],
            [("assistant", f"{one('city')}的{one('hotel')}有屋顶泳池，不过冬天不开放。")],
            pair=True,
        )

    def ssa_plan() -> Probe:
        days = ZH["weekday"][:]
        exercises = [rng.choice(ZH["exercise"]) for _ in days]
        day = rng.choice(days[:6])
        body = (
            "下面是一周的安排，循序渐进，不会练得太累。"
            + "".join(f"{d}：{e}。" for d, e in zip(days, exercises, strict=True))
            + _long_answer(rng, topic["fitness"][1], _filler(rng, ZH), 3, 4)
        )
        return Probe(
            "single-session-assistant",
            f"你给我做的训练计划里，{day}要练什么？",
            exercises[days.index(day)],
            [("user", "能帮我做一个每周训练计划吗？我想夏天之前练得更好一点。"), ("assistant", body)],
            [
                ("user", f"{day}因为加班没去训练。"),
                ("assistant", f"很多计划把{one('exercise')}放在{day}，因为周末休息后状态好。"),
            ],
            pair=True,
        )

    def ssa_books() -> Probe:
        books, authors = some("book", 4), some("author", 4)
        k = rng.randrange(4)
        lines = "".join(
            f"{a}的{b}{rng.choice(['安静又幽默', '慢热但耐读', '文字很美', '让人停不下来'])}。"
            for b, a in zip(books, authors, strict=True)
        )
        body = (
            "冬天的长夜适合读小说，我给你挑了四本。"
            + lines
            + "从你最喜欢的封面开始就行，它们都不到四百页。图书馆的电子书应用大多能借到，可以先试读一章再决定买不买。"
        )
        return Probe(
            "single-session-assistant",
            f"你给我的书单里，{authors[k]}写的是哪本？",
            books[k],
            [("user", "冬天想读几本小说，有推荐吗？"), ("assistant", body)],
            [("user", f"我们读书会这个月在读{authors[(k + 1) % 4]}的书。")],
            pair=True,
        )

    def multi_instruments() -> Probe:
        a, b, c = some("instrument", 3)
        return Probe(
            "multi-session",
            "到现在为止我都买了哪些乐器？",
            f"{a}、{b}、{c}",
            [
                ("user", f"没忍住，今天在跳蚤市场买了一把二手{a}。"),
                ("user", f"用年终奖犒劳自己买了{b}，店里还送了个琴盒。"),
                ("user", f"新买的{c}今天早上到了，弹了一整天。"),
            ],
            [
                ("user", f"{one('name')}要卖她的旧{one('instrument')}，可我用不着再来一件。"),
                ("user", "市中心那家琴行要关门了，全场五折。"),
            ],
        )

    def multi_trips() -> Probe:
        a, b, c = some("city", 3)
        return Probe(
            "multi-session",
            "我今年都去过哪些城市旅行？",
            f"{a}、{b}、{c}",
            [
                ("user", f"刚从{a}玩了个长周末回来，走路走得脚都废了。"),
                ("user", f"公司派我去{b}出差五天，抽空在水边逛了一个下午。"),
                ("user", f"暑假带孩子去了{c}，他们现在都想住那儿了。"),
            ],
            [
                ("user", f"{one('name')}一直给我发{one('city')}的照片，羡慕死了。"),
                ("user", "刷了好几个小时机票，还是没订。"),
            ],
        )

    def multi_books() -> Probe:
        a, b = some("book", 2)
        return Probe(
            "multi-session",
            "我读完了哪些小说？",
            f"{a}、{b}",
            [("user", f"熬到两点把{a}看完了，那个结局！"), ("user", f"周末两口气读完了{b}，根本停不下来。")],
            [
                ("user", f"{one('name')}借给我{one('book')}，我还没翻开。"),
                ("user", "我买书的速度永远比读书快。"),
            ],
        )

    def ku_job() -> Probe:
        (c1, c2), (j1, j2) = some("company", 2), some("job", 2)
        return Probe(
            "knowledge-update",
            "我现在在哪家公司上班？",
            c2,
            [
                ("user", f"我在{c1}做{j1}，大部分时间在家办公，挺适合我的。"),
                ("user", f"我从{c1}辞职了，这周开始在{c2}当{j2}。"),
            ],
            [("user", f"{one('name')}刚拿到{one('company')}的offer，高兴坏了。")],
        )

    def ku_home() -> Probe:
        a, b = some("city", 2)
        return Probe(
            "knowledge-update",
            "我现在住在哪个城市？",
            b,
            [
                ("user", f"我们在{a}的房子很小，不过就在公园旁边，没什么可抱怨的。"),
                ("user", f"搬完家了：我们现在住在{b}，到处都是箱子。"),
            ],
            [("user", f"我姐在考虑为了工作搬去{one('city')}。")],
        )

    def ku_5k() -> Probe:
        t1 = f"{rng.randint(26, 29)}分{rng.randint(10, 59)}秒"
        t2 = f"{rng.randint(22, 25)}分{rng.randint(10, 59)}秒"
        return Probe(
            "knowledge-update",
            "我现在五公里最好成绩是多少？",
            t2,
            [
                ("user", f"我五公里目前最好是{t1}，希望能轻松跑进半小时。"),
                ("user", f"今天早上公园跑刷新了五公里纪录：{t2}！"),
            ],
            [("user", f"{one('name')}五公里跑了31分钟，她人生第一场比赛。")],
        )

    def ku_phone() -> Probe:
        a, b = some("phone", 2)
        return Probe(
            "knowledge-update",
            "我现在用的是什么手机？",
            b,
            [("user", f"我还在用那台旧{a}，电池撑不到中午。"), ("user", f"终于换成了{b}，电池轻松用两天。")],
            [("user", f"我爸想要一台{one('phone')}，可他只用来打电话。")],
        )

    def tr_order() -> Probe:
        events = [
            ("今天跑完了人生第一个半程马拉松", "半程马拉松"),
            ("今天上午驾照考试通过了", "驾照考试"),
            ("新房子终于拿到钥匙了", "拿新房钥匙"),
            ("今天拿到了潜水证", "潜水证"),
            ("今天在大会上做了第一次演讲", "大会演讲"),
            ("厨房终于装修完了", "厨房装修"),
        ]
        (ea, la), (eb, lb) = rng.sample(events, 2)
        return Probe(
            "temporal-reasoning",
            f"{la}和{lb}，哪个先发生？",
            la,
            [("user", f"好累的一天，{ea}！累但是开心。"), ("user", f"大消息，{eb}，今晚庆祝一下。")],
            [("user", f"我表弟打算明年{la}。")],
            order=(la, lb),
        )

    def tr_month() -> Probe:
        band, other = some("band", 2)
        return Probe(
            "temporal-reasoning",
            "我{month}去看了哪个乐队的现场？",
            band,
            [("user", f"昨晚看了{band}的现场，光是返场就值回票价了。")],
            [
                ("user", f"去体育馆看了{other}，对我来说有点太吵了。"),
                ("user", f"{one('name')}买了秋天{other}的票。"),
            ],
            months=True,
        )

    def pref_diet() -> Probe:
        return Probe(
            "single-session-preference",
            "今晚做什么晚饭好？给我点建议。",
            "素食，不要蘑菇",
            [("user", "我今年开始完全吃素了，而且一吃蘑菇就反胃，所以在重新学做饭。")],
            [
                ("user", f"{one('name')}周五给我们做了牛排晚餐。"),
                ("assistant", "一个快手晚饭：鸡腿配土豆和柠檬，放烤盘一起烤。"),
            ],
        )

    def pref_travel() -> Probe:
        return Probe(
            "single-session-preference",
            "下次休假去哪儿好？",
            "安静的海边小镇，不去大城市",
            [("user", "我发现自己在安静的海边小镇最开心，大城市只会让我疲惫。")],
            [
                ("user", f"{one('name')}上次度假特别喜欢{one('city')}的夜生活。"),
                ("user", "今年我还剩十天年假。"),
            ],
        )

    def pref_music() -> Probe:
        return Probe(
            "single-session-preference",
            "工作的时候放点什么音乐听好？",
            "老式灵魂乐（Otis Redding）",
            [("user", "最近特别迷老式灵魂乐，Otis Redding单曲循环了一整周。")],
            [
                ("user", f"{one('name')}工作时只听电子乐，吵得我头疼。"),
                ("assistant", "有些人工作时听纯音乐或者白噪音更专注。"),
            ],
        )

    def pref_workout() -> Probe:
        return Probe(
            "single-session-preference",
            "什么样的锻炼方式适合我？",
            "低冲击（游泳），不要跑步",
            [("user", "我的膝盖实在受不了跑步了，所以只做游泳这类低冲击的运动。")],
            [
                ("user", f"{one('name')}在备战马拉松，每天早上都跑。"),
                ("user", "公司附近的健身房新开了动感单车教室。"),
            ],
        )

    def pref_reading() -> Probe:
        return Probe(
            "single-session-preference",
            "接下来读什么书好？",
            "慢节奏、人物驱动的纯文学，不要惊悚",
            [("user", "我喜欢慢节奏、以人物为主的纯文学，快节奏的惊悚小说看得我想睡觉。")],
            [
                ("user", f"{one('name')}推荐了一本惊悚小说{one('book')}，我有点犹豫。"),
                ("user", "我家附近的图书馆新开了一个阅读角。"),
            ],
        )

    return {
        "single-session-user": [ssu_pet, ssu_gift, ssu_class, ssu_car, ssu_allergy],
        "single-session-assistant": [ssa_bake, ssa_hotel, ssa_plan, ssa_books],
        "multi-session": [multi_instruments, multi_trips, multi_books],
        "knowledge-update": [ku_job, ku_home, ku_5k, ku_phone],
        "temporal-reasoning": [tr_order, tr_month],
        "single-session-preference": [pref_diet, pref_travel, pref_music, pref_workout, pref_reading],
    }


# ---------------------------------------------------------------- assembly
MONTHS_EN = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _session_turns(
    rng: random.Random, language: str, fill: Callable[[str], str], exchanges: int
) -> list[tuple[str, str]]:
    topics = FILLER_EN if language == "en" else FILLER_ZH
    acks, replies = (ACKS_EN, REPLIES_EN) if language == "en" else (ACKS_ZH, REPLIES_ZH)
    name, other = rng.sample(list(topics), 2)
    prompts, sentences = topics[name]
    # a long answer wanders into a neighbouring topic now and then (and Chinese needs more sentences)
    sentences = sentences + topics[other][1][: 6 if language == "en" else 12]
    lo, hi = (4, 11) if language == "en" else (12, 22)
    out: list[tuple[str, str]] = []
    for _ in range(exchanges):
        prompt = fill(rng.choice(prompts))
        if rng.random() < 0.25:
            out.append(("user", rng.choice(acks)))
        else:
            out.append(("user", prompt))
        out.append(
            (
                "assistant",
                rng.choice(replies) if rng.random() < 0.15 else _long_answer(rng, sentences, fill, lo, hi),
            )
        )
    return out


def build_user(number: int, language: str) -> dict[str, Any]:
    rng = random.Random(SEED * 1000 + number)
    lex = EN if language == "en" else ZH
    fill = _filler(rng, lex)
    makers = (probes_en if language == "en" else probes_zh)(rng)
    probes = [rng.choice(makers[t])() for t in TYPES]
    sessions = [_session_turns(rng, language, fill, rng.randint(4, 5)) for _ in range(SESSIONS)]
    starts: list[float] = []
    at = START + rng.uniform(0, 3) * DAY
    for _ in range(SESSIONS):
        starts.append(at + rng.uniform(0, 8) * 3600)
        at += rng.uniform(5, 13) * DAY
    user = f"lh-{language}-{number:02d}"
    # where each probe's evidence goes: distinct sessions, in order, none shared with another probe's
    taken: set[int] = set()
    placed: list[list[tuple[int, int]]] = []  # per probe: (session, index into that session's turns)
    for probe in probes:
        n = 1 if probe.pair else len(probe.evidence)
        free = [s for s in range(2, SESSIONS) if s not in taken]
        chosen = sorted(rng.sample(free, n))
        if probe.type == "knowledge-update":  # the change comes well after the first statement
            chosen = [rng.choice([s for s in free if s < 18]), rng.choice([s for s in free if s >= 25])]
        taken.update(chosen)
        spots: list[tuple[int, int]] = []
        if probe.pair:
            s = chosen[0]
            at_turn = 2 * rng.randrange(len(sessions[s]) // 2)
            sessions[s][at_turn : at_turn + 2] = probe.evidence
            spots.append((s, at_turn + 1))
        else:
            for (role, text), s in zip(probe.evidence, chosen, strict=True):
                at_turn = 2 * rng.randrange(len(sessions[s]) // 2)
                reply = rng.choice(REPLIES_EN if language == "en" else REPLIES_ZH)
                sessions[s][at_turn : at_turn + 2] = [(role, text), ("assistant", reply)]
                spots.append((s, at_turn))
        placed.append(spots)
    for probe in probes:  # distractors: any session, appended as a user turn + a short reply
        for role, text in probe.distractors:
            s = rng.randrange(SESSIONS)
            sessions[s] += (
                [(role, text)]
                if role == "assistant"
                else [(role, text), ("assistant", rng.choice(REPLIES_EN if language == "en" else REPLIES_ZH))]
            )
    out_sessions: list[dict[str, Any]] = []
    ids: dict[tuple[int, int], str] = {}
    for s, turns in enumerate(sessions):
        rows: list[dict[str, Any]] = []
        for t, (role, text) in enumerate(turns):
            tid = f"{user}:s{s + 1}:t{t + 1}"
            ids[(s, t)] = tid
            rows.append({"id": tid, "role": role, "content": text, "has_answer": False})
        out_sessions.append({"session_id": f"s{s + 1}", "started": starts[s], "turns": rows})
    questions = []
    question_date = starts[-1] + 2 * DAY
    for k, (probe, spots) in enumerate(zip(probes, placed, strict=True)):
        question, answer = probe.question, probe.answer
        if probe.months:
            month = datetime.fromtimestamp(starts[spots[0][0]], UTC).month
            question = question.format(month=MONTHS_EN[month - 1] if language == "en" else f"{month}月")
        evidence = []
        for s, t in spots:
            out_sessions[s]["turns"][t]["has_answer"] = True
            evidence.append(ids[(s, t)])
        questions.append(
            {
                "question_id": f"{user}:q{k + 1}",
                "question_type": probe.type,
                "question": question,
                "answer": answer,
                "evidence": evidence,
                "question_date": question_date,
            }
        )
    return {"user_id": user, "language": language, "sessions": out_sessions, "questions": questions}


def build(users: int = 32) -> list[dict[str, Any]]:
    """`users` users, alternately English and Chinese."""
    return [build_user(n, "en" if n % 2 == 0 else "zh") for n in range(users)]


def digest(data: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(data, ensure_ascii=False, sort_keys=True).encode()).hexdigest()[:16]


def describe(data: list[dict[str, Any]]) -> dict[str, Any]:
    turns = [t for u in data for s in u["sessions"] for t in s["turns"]]
    assistant = [len(t["content"]) for t in turns if t["role"] == "assistant"]
    return {
        "users": len(data),
        "turns": len(turns),
        "min_turns_per_user": min(sum(len(s["turns"]) for s in u["sessions"]) for u in data),
        "questions": sum(len(u["questions"]) for u in data),
        "assistant_turns_over_300_chars": sum(n > 300 for n in assistant),
        "mean_turn_chars": round(sum(len(t["content"]) for t in turns) / len(turns)),
        "sha256_16": digest(data),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=32)
    parser.add_argument(
        "--out", default=str(Path(__file__).resolve().parent / "results" / "long_history.json")
    )
    parser.add_argument(
        "--tokens",
        type=int,
        default=0,
        help="instead: one bilingual user of about this many tokens (bench/make_token_history.py, issue 45)",
    )
    args = parser.parse_args()
    if args.tokens:
        from bench import make_token_history

        make_token_history.main(["--tokens", str(args.tokens)], write=sys.stdout.write)
        return
    data = build(args.users)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, ensure_ascii=False, indent=1))
    print(json.dumps(describe(data)))  # noqa: T201


if __name__ == "__main__":
    main()
