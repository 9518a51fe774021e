"""Write bench/data/relation_traces.json: questions whose answer needs two memories joined by an entity
(relation memory, issue 26), in Chinese and English, with distractors that share the question's words
but not the entity. Deterministic templates, written for mnemo; re-run to regenerate:

    .venv/bin/python bench/make_relation_traces.py

Per language one user holds every scenario's memories (a haystack of a few hundred), in time order.
Five kinds of link, nine scenarios each, each scenario asked and said in one of two to four wordings: a document submitted then decided on (the design's example:
"我3月提交的报价单审批到哪了？"), a person met in a place then what they recommended, a family member
named once then spoken of by role, an order placed then shipped, a contract signed with a company then
reviewed. Each scenario: evidence A (what the question describes), evidence B (what it asks, said weeks
later, naming the entity but not the question's words), and three distractors.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "data" / "relation_traces.json"

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
ZH_DOCS = [("报价单", "Q"), ("合同", "HT"), ("报销单", "BX"), ("采购申请", "PR")]
EN_DOCS = [("quote", "Q"), ("contract", "CT"), ("expense claim", "EX"), ("purchase request", "PR")]
ZH_STATUS = ["已经审批通过了", "被财务驳回了", "还在审批中，等总监签字"]
EN_STATUS = [
    "has been approved by finance",
    "was rejected by the director",
    "is still pending, waiting on legal",
]
ZH_CITIES = ["巴黎", "东京", "伦敦", "柏林", "首尔", "悉尼", "罗马", "曼谷", "纽约"]
EN_CITIES = ["Paris", "Tokyo", "London", "Berlin", "Seoul", "Sydney", "Rome", "Bangkok", "Boston"]
ZH_NAMES = ["Sophie", "Lucas", "Emma", "Noah", "Chloe", "Mateo", "Hana", "Oscar", "Lena"]
EN_NAMES = ["Sophie", "Lucas", "Emma", "Noah", "Chloe", "Mateo", "Hana", "Oscar", "Lena"]
ZH_THINGS = [
    "《百年孤独》这本书",
    "一家叫青藤的咖啡馆",
    "一款降噪耳机",
    "纪录片《地球脉动》",
    "一家川菜馆",
    "一个记账软件",
    "《三体》",
    "一双跑鞋",
    "一家书店",
]
EN_THINGS = [
    "the novel Middlemarch",
    "a cafe called Blue Door",
    "the Sony headphones",
    "the documentary Planet Earth",
    "a ramen bar called Ichiran",
    "the app Notion",
    "the book Dune",
    "the Hoka running shoes",
    "a bookshop called Daunt",
]
# what the distractors' anonymous friends recommend: never a scenario's evidence (the write policy would
# merge the two as near-duplicates)
ZH_OTHER_THINGS = [
    "一部老电影",
    "一个播客",
    "一家日料店",
    "一款桌游",
    "一本菜谱",
    "一个健身课",
    "一家面包店",
    "一部纪录片",
    "一款手游",
]
EN_OTHER_THINGS = [
    "an old film",
    "a podcast",
    "a sushi place",
    "a board game",
    "a cookbook",
    "a yoga class",
    "a bakery",
    "a nature series",
    "a phone game",
]
# how each family scenario's evidence B is said (four wordings, so no two scenarios say it alike)
ZH_TRIP = [
    "{name}下个月要去{dest}，机票已经订好了",
    "{name}订好了下个月在{dest}的酒店",
    "{name}说下个月飞{dest}玩一周",
    "{name}下个月休年假，目的地是{dest}",
]
EN_TRIP = [
    "{name} is flying to {dest} next month, tickets booked",
    "{name} booked a hotel in {dest} for next month",
    "{name} will spend a week in {dest} next month",
    "{name} takes leave next month and is off to {dest}",
]
ZH_RECO = [
    "{name}推荐了{thing}",
    "{name}跟我安利{thing}",
    "{name}强烈推荐{thing}",
    "{name}说一定要试试{thing}",
]
EN_RECO = [
    "{name} recommended {thing}",
    "{name} told me I should try {thing}",
    "{name} highly recommends {thing}",
    "{name} suggested {thing} to me",
]
# each kind's question, its evidence A and the other wordings of B vary by scenario (i % len): no two
# scenarios in a row are asked or said alike, so the rules are measured on more than one template
ZH_RECO += ["{name}说{thing}特别好，让我有空试试", "{name}给我推荐了{thing}"]
EN_RECO += ["{name} swears by {thing}", "{name} said I'd love {thing}"]
ZH_DOC_Q = [
    "我{m}月提交的{doc}审批到哪了？",
    "{m}月份交的那份{doc}批了吗？",
    "我{m}月递交的{doc}现在什么状态？",
]
EN_DOC_Q = [
    "Where is the approval of the {doc} I submitted in {month}?",
    "What happened to the {doc} I sent in in {month}?",
    "Did the {doc} from {month} get approved?",
]
ZH_DOC_B = ["{doc} {did} {status}", "{did}的审批结果出来了：{status}", "财务回复了，{did}{status}"]
EN_DOC_B = ["{Doc} {did} {status}", "Update on {did}: it {status}", "Heard back about {did}, it {status}"]
ZH_MET_A = [
    "我去年在{city}认识了{name}",
    "在{city}旅行的时候遇到了{name}",
    "{name}是我在{city}认识的朋友",
    "我和{name}是在{city}认识的",
]
EN_MET_A = [
    "I met {name} in {city} last year",
    "Got to know {name} on my trip to {city}",
    "In {city} I ran into {name}, we hit it off",
    "{name} and I first met in {city}",
]
ZH_MET_Q = [
    "我在{city}认识的那个朋友推荐了什么？",
    "在{city}遇到的那位朋友给我推荐过什么？",
    "{city}认识的朋友让我试试什么来着？",
]
EN_MET_Q = [
    "What did the friend I met in {city} recommend?",
    "What was recommended by the person I got to know in {city}?",
    "My friend from {city}, what did they tell me to try?",
]
ZH_KIN_A = [
    "我{kin}叫{name}，{pron}最近刚换了工作",
    "我{kin}{name}最近刚换了工作",
    "{name}是我{kin}，最近刚换了工作",
]
EN_KIN_A = [
    "My {kin} {name} just changed jobs",
    "{name}, my {kin}, just changed jobs",
    "My {kin} is called {name} and just changed jobs",
    "{name} is my {kin}; changed jobs last week",
]
ZH_KIN_Q = ["我{kin}下个月去哪里旅行？", "我{kin}下个月要去哪儿？", "下个月我{kin}去哪个城市？"]
EN_KIN_Q = [
    "Where is my {kin} travelling next month?",
    "Where's my {kin} going next month?",
    "Which city is my {kin} visiting next month?",
]
ZH_ORDER_Q = [
    "我在{shop}买的{goods}发货了吗？",
    "{shop}上订的{goods}到哪了？",
    "我在{shop}下单的{goods}寄出了没？",
]
EN_ORDER_Q = [
    "Has the {goods} I bought from {shop} shipped yet?",
    "Where is the {goods} I ordered on {shop}?",
    "Did my {shop} order of the {goods} ship?",
]
ZH_ORDER_A = ["我在{shop}下单买了{goods}，订单号 {oid}", "今天在{shop}买了个{goods}，订单号是{oid}"]
EN_ORDER_A = [
    "I ordered a {goods} from {shop}, order number {oid}",
    "Bought a {goods} on {shop} today (order #{oid})",
]
ZH_ORDER_B = ["订单 {oid} 已经发货了，顺丰，预计周五到", "{oid}这单显示已经在派送了"]
EN_ORDER_B = ["Order {oid} has shipped with UPS, arriving Friday", "Tracking says {oid} is out for delivery"]
ZH_CONTRACT_Q = [
    "我跟{org}签的合同法务怎么说？",
    "和{org}的那份合同法务审完了吗？",
    "{org}合同的法务意见是什么？",
]
EN_CONTRACT_Q = [
    "What did legal say about the contract I signed with {org}?",
    "Is the {org} contract cleared by legal?",
    "Legal's verdict on my {org} contract?",
]
ZH_CONTRACT_A = ["我跟{org}签了合同 {cid}", "和{org}的合同 {cid} 我这边已经签字了"]
EN_CONTRACT_A = ["I signed contract {cid} with {org}", "Contract {cid} with {org} is signed on our side"]
ZH_CONTRACT_B = ["合同 {cid} {review}", "法务回复{cid}：{review}"]
EN_CONTRACT_B = ["Contract {cid} {review}", "Legal on {cid}: it {review}"]


def pick(options: list[str], i: int) -> str:
    return options[i % len(options)]


KIN_ZH = ["妹妹", "姐姐", "哥哥", "弟弟", "妈妈", "爸爸", "老婆", "儿子", "女儿"]
KIN_EN = ["sister", "brother", "mom", "dad", "wife", "husband", "son", "daughter", "grandma"]
KIN_NAMES = ["Anna", "Maya", "Leo", "Tom", "Rosa", "Karl", "Iris", "Ben", "Zoe"]
KIN_ZH_DEST = ["成都", "厦门", "青岛", "西安", "苏州", "大理", "桂林", "拉萨", "昆明"]
EN_DEST = [
    "Lisbon",
    "Madrid",
    "Vienna",
    "Amsterdam",
    "Toronto",
    "Vancouver",
    "Melbourne",
    "Seattle",
    "Chicago",
]
ZH_SHOPS = ["京东", "淘宝", "拼多多", "苏宁", "天猫", "当当", "网易严选", "小米商城", "盒马"]
EN_SHOPS = ["Amazon", "IKEA", "Best Buy", "Target", "Walmart", "Costco", "Etsy", "Zara", "Apple Store"]
ZH_GOODS = ["扫地机器人", "书架", "显示器", "电饭煲", "空气净化器", "行李箱", "咖啡机", "台灯", "烤箱"]
EN_GOODS = [
    "robot vacuum",
    "bookshelf",
    "monitor",
    "rice cooker",
    "air purifier",
    "suitcase",
    "coffee maker",
    "desk lamp",
    "oven",
]
ZH_ORGS = [
    "星河科技",
    "蓝海物流",
    "青木设计",
    "远山教育",
    "金桥地产",
    "北辰医疗",
    "云帆软件",
    "东方传媒",
    "安泰保险",
]
EN_ORGS = [
    "Northwind",
    "Globex",
    "Initech",
    "Umbrella Labs",
    "Stark Industries",
    "Wayne Enterprises",
    "Acme",
    "Hooli",
    "Vandelay",
]
ZH_REVIEW = ["法务说没问题，已经通过了", "被法务驳回了，要改条款", "还在法务审核中"]
EN_REVIEW = [
    "was approved by legal",
    "was rejected by legal, the clauses need changes",
    "is still under review by legal",
]


def ts(month: int, day: int) -> float:
    return datetime(2025, month, day, 9, 0, tzinfo=UTC).timestamp()


def zh_scenarios() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(9):  # a document submitted, then decided on
        doc, pre = ZH_DOCS[i % 4]
        m = 1 + i
        did, other = f"{pre}-2025-{101 + i:03d}", f"{pre}-2025-{601 + i:03d}"
        out.append({
            "kind": "document", "question": pick(ZH_DOC_Q, i).format(m=m, doc=doc),
            "a": (f"我{m}月提交了{doc} {did}", ts(m, 5)),
            "b": (pick(ZH_DOC_B, i).format(doc=doc, did=did, status=ZH_STATUS[i % 3]), ts(m + 1, 20)),
            "d": [(f"同事的{doc} {other} {ZH_STATUS[(i + 1) % 3]}", ts(m + 1, 21)),
                  (f"{doc}的模板要更新了，审批流程也改了", ts(m, 8)),
                  (f"我{m}月还提交了请假条", ts(m, 9))],
        })  # fmt: skip
    for i in range(9):  # a person met in a place, then what they recommended
        name, city, thing = ZH_NAMES[i], ZH_CITIES[i], ZH_THINGS[i]
        out.append({
            "kind": "met_recommended", "question": pick(ZH_MET_Q, i).format(city=city),
            "a": (pick(ZH_MET_A, i).format(city=city, name=name), ts(1 + i, 3)),
            "b": (pick(ZH_RECO, i).format(name=name, thing=thing), ts(2 + i, 14)),
            "d": [(f"朋友推荐了{ZH_OTHER_THINGS[i]}，我不太感兴趣", ts(2 + i, 15)),
                  (f"{city}的朋友圈都在晒美食", ts(1 + i, 6)),
                  (f"我在{ZH_CITIES[(i + 3) % 9]}认识了{ZH_NAMES[(i + 5) % 9]}的表哥", ts(1 + i, 7))],
        })  # fmt: skip
    for i in range(9):  # a family member named once, then spoken of by name
        kin, name, dest = KIN_ZH[i], KIN_NAMES[i], KIN_ZH_DEST[i]
        out.append({
            "kind": "family", "question": pick(ZH_KIN_Q, i).format(kin=kin),
            "a": (pick(ZH_KIN_A, i).format(kin=kin, name=name, pron="她" if kin in ("妹妹", "姐姐", "妈妈", "老婆", "女儿") else "他"), ts(1 + i, 2)),
            "b": (ZH_TRIP[i % 4].format(name=name, dest=dest), ts(2 + i, 18)),
            "d": [(f"同事下个月去{KIN_ZH_DEST[(i + 2) % 9]}旅行", ts(2 + i, 19)),
                  (f"我{kin}的同学也喜欢旅行", ts(1 + i, 4)),
                  (f"下个月公司组织去{KIN_ZH_DEST[(i + 4) % 9]}团建", ts(2 + i, 20))],
        })  # fmt: skip
    for i in range(9):  # an order placed, then shipped
        shop, goods, oid = ZH_SHOPS[i], ZH_GOODS[i], f"{880120 + i * 7}"
        out.append({
            "kind": "order", "question": pick(ZH_ORDER_Q, i).format(shop=shop, goods=goods),
            "a": (pick(ZH_ORDER_A, i).format(shop=shop, goods=goods, oid=oid), ts(1 + i, 11)),
            "b": (pick(ZH_ORDER_B, i).format(oid=oid), ts(1 + i, 13)),
            "d": [(f"订单 {int(oid) + 3} 已经发货了，中通", ts(1 + i, 13)),
                  (f"{shop}的{ZH_GOODS[(i + 2) % 9]}降价了", ts(1 + i, 12)),
                  (f"我想买个{goods}，还在比较", ts(1 + i, 1))],
        })  # fmt: skip
    for i in range(9):  # a contract signed with a company, then reviewed
        org, cid = ZH_ORGS[i], f"HT-{3300 + i}"
        out.append({
            "kind": "contract", "question": pick(ZH_CONTRACT_Q, i).format(org=org),
            "a": (pick(ZH_CONTRACT_A, i).format(org=org, cid=cid), ts(2 + i, 4)),
            "b": (pick(ZH_CONTRACT_B, i).format(cid=cid, review=ZH_REVIEW[i % 3]), ts(3 + i, 9)),
            "d": [(f"合同 HT-{5500 + i} {ZH_REVIEW[(i + 1) % 3]}", ts(3 + i, 10)),
                  (f"{org}的销售又打电话来了", ts(2 + i, 6)),
                  (f"法务部下周搬到{ZH_CITIES[i]}办公", ts(3 + i, 2))],
        })  # fmt: skip
    return out


def en_scenarios() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(9):
        doc, pre = EN_DOCS[i % 4]
        m = 1 + i
        did, other = f"{pre}-2025-{101 + i:03d}", f"{pre}-2025-{601 + i:03d}"
        out.append({
            "kind": "document", "question": pick(EN_DOC_Q, i).format(doc=doc, month=MONTHS_EN[m - 1]),
            "a": (f"I submitted {doc} {did} in {MONTHS_EN[m - 1]}", ts(m, 5)),
            "b": (pick(EN_DOC_B, i).format(Doc=doc.capitalize(), did=did, status=EN_STATUS[i % 3]), ts(m + 1, 20)),
            "d": [(f"My colleague's {doc} {other} {EN_STATUS[(i + 1) % 3]}", ts(m + 1, 21)),
                  (f"The {doc} template changed and the approval process too", ts(m, 8)),
                  (f"I also submitted a leave request in {MONTHS_EN[m - 1]}", ts(m, 9))],
        })  # fmt: skip
    for i in range(9):
        name, city, thing = EN_NAMES[i], EN_CITIES[i], EN_THINGS[i]
        out.append({
            "kind": "met_recommended", "question": pick(EN_MET_Q, i).format(city=city),
            "a": (pick(EN_MET_A, i).format(city=city, name=name), ts(1 + i, 3)),
            "b": (pick(EN_RECO, i).format(name=name, thing=thing), ts(2 + i, 14)),
            "d": [(f"A friend recommended {EN_OTHER_THINGS[i]} but I'm not keen", ts(2 + i, 15)),
                  (f"Everyone I know in {city} posts food photos", ts(1 + i, 6)),
                  (f"I met the cousin of {EN_NAMES[(i + 5) % 9]} in {EN_CITIES[(i + 3) % 9]}", ts(1 + i, 7))],
        })  # fmt: skip
    for i in range(9):
        kin, name, dest = KIN_EN[i], KIN_NAMES[i], EN_DEST[i]
        out.append({
            "kind": "family", "question": pick(EN_KIN_Q, i).format(kin=kin),
            "a": (pick(EN_KIN_A, i).format(kin=kin, name=name), ts(1 + i, 2)),
            "b": (EN_TRIP[i % 4].format(name=name, dest=dest), ts(2 + i, 18)),
            "d": [(f"A colleague is travelling to {EN_DEST[(i + 2) % 9]} next month", ts(2 + i, 19)),
                  (f"My {kin}'s classmate loves travelling too", ts(1 + i, 4)),
                  (f"Next month the company offsite is in {EN_DEST[(i + 4) % 9]}", ts(2 + i, 20))],
        })  # fmt: skip
    for i in range(9):
        shop, goods, oid = EN_SHOPS[i], EN_GOODS[i], f"{880120 + i * 7}"
        out.append({
            "kind": "order", "question": pick(EN_ORDER_Q, i).format(shop=shop, goods=goods),
            "a": (pick(EN_ORDER_A, i).format(shop=shop, goods=goods, oid=oid), ts(1 + i, 11)),
            "b": (pick(EN_ORDER_B, i).format(oid=oid), ts(1 + i, 13)),
            "d": [(f"Order {int(oid) + 3} has shipped with FedEx", ts(1 + i, 13)),
                  (f"The {EN_GOODS[(i + 2) % 9]} at {shop} is on sale", ts(1 + i, 12)),
                  (f"I might buy a {goods}, still comparing", ts(1 + i, 1))],
        })  # fmt: skip
    for i in range(9):
        org, cid = EN_ORGS[i], f"CT-{3300 + i}"
        out.append({
            "kind": "contract", "question": pick(EN_CONTRACT_Q, i).format(org=org),
            "a": (pick(EN_CONTRACT_A, i).format(org=org, cid=cid), ts(2 + i, 4)),
            "b": (pick(EN_CONTRACT_B, i).format(cid=cid, review=EN_REVIEW[i % 3]), ts(3 + i, 9)),
            "d": [(f"Contract CT-{5500 + i} {EN_REVIEW[(i + 1) % 3]}", ts(3 + i, 10)),
                  (f"The sales rep from {org} called again", ts(2 + i, 6)),
                  (f"The legal team moves to the {EN_CITIES[i]} office next week", ts(3 + i, 2))],
        })  # fmt: skip
    return out


def lay_out(lang: str, scenarios: list[dict[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = []
    questions = []
    for n, s in enumerate(scenarios):
        ids = {}
        for role, (text, at) in [("a", s["a"]), ("b", s["b"]), *((f"d{j}", d) for j, d in enumerate(s["d"]))]:
            mid = f"{lang}-{n:02d}-{role}"
            ids[role] = mid
            messages.append({"id": mid, "role": "user", "content": text, "timestamp": at})
        questions.append({"question": s["question"], "kind": s["kind"], "evidence": [ids["a"], ids["b"]]})
    messages.sort(key=lambda m: (m["timestamp"], m["id"]))
    return {"messages": messages, "questions": questions}


def main() -> None:
    data = {"zh": lay_out("zh", zh_scenarios()), "en": lay_out("en", en_scenarios())}
    OUT.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")


if __name__ == "__main__":
    main()
