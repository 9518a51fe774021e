"""Builds a token-sized long history (issue 45): one bilingual user of 100K, 1M or 10M tokens.

    PYTHONPATH=. .venv/bin/python bench/make_long_history.py --tokens 1000000   # -> bench/results/
    PYTHONPATH=. .venv/bin/python bench/make_token_history.py --tokens 100000

Deterministic (`random.Random(f"{seed}-...")`): the same seed and size give the same bytes, so sets are
generated, never committed (the 10M set is about 40 MB; `bench/results/` is git-ignored).

Shape: sessions of six turns (user, assistant, ...), the sessions alternating English and Chinese; every
turn about 2,000 characters of long technical (databases, deploys, queues, caching, profiling...) or
personal (family, travel, health, money, cooking...) text built from the templates below. Tokens are
counted as CJK characters + English words × 4/3 (`tokens`), so a Chinese turn is about 2,000 tokens and
an English one about 470: 1M tokens is about 800 turns.

Into that filler go the probes, each placed at a fixed fraction of the history, so a probe is in the same
part (early: first third, middle, late: last third) at every size and recall can be compared as the
history grows 10x. Every probe's evidence turn is marked (`has_answer: true`, `evidence` of its question):

- `fact`: a personal or technical fact said once inside a long turn (the dentist's name, the staging
  database's port), asked about at the end;
- `assistant`: a detail inside one of the assistant's long answers (the pool size it suggested);
- `changed`: an attribute restated many times (where the user lives, the deploy window, the on-call
  rotation tool): the question's evidence is the latest statement only, `stale` lists the older ones
  (latest wins);
- `preference`: an instruction stated once, in the first 5% of the history ("always answer in bullet
  points" / "回答请一律用要点列出"), asked by a request that does not repeat its words.

The filler mentions the same attributes of other people ("Lena's team moved its deploy window..."), so
a question is rarely answered by its keywords alone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SEED = 45
TURN_CHARS = 2000
TURNS_PER_SESSION = 6
START = datetime(2024, 1, 8, 9, 0, tzinfo=UTC).timestamp()
DAY = 86400.0
PARTS = ("early", "middle", "late")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_WORD = re.compile(r"[A-Za-z0-9_]+")


def tokens(text: str) -> int:
    """Estimated tokens: CJK characters one each, English words 4/3 each."""
    return len(_CJK.findall(text)) + round(len(_WORD.findall(text)) * 4 / 3)


# ---------------------------------------------------------------- filler lexicons and templates
EN_LEX: dict[str, list[str]] = {
    "name": ["Lena", "Marcus", "Priya", "Tomasz", "Aiko", "Diego", "Fatima", "Oskar", "Grace", "Yusuf"],
    "service": ["billing", "search", "checkout", "ledger", "notifications", "inventory", "auth", "reports"],
    "db": ["Postgres", "MySQL", "SQLite", "ClickHouse", "Redis", "Cassandra"],
    "tool": ["Grafana", "Terraform", "Ansible", "Jenkins", "ArgoCD", "Sentry", "Prometheus", "Vault"],
    "city": ["Lisbon", "Kyoto", "Denver", "Tallinn", "Porto", "Hanoi", "Montreal", "Seville", "Oslo"],
    "food": ["lentil soup", "risotto", "dumplings", "shakshuka", "ramen", "paella", "falafel", "curry"],
    "hobby": ["bouldering", "pottery", "chess", "sourdough", "trail running", "birdwatching", "sketching"],
    "day": ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
    "lang": ["Go", "Rust", "Python", "TypeScript", "Kotlin", "Java", "Elixir"],
}
EN_TECH = [
    "The {service} service on {db} spent {n} ms per request in a sequential scan until we added a partial "
    "index on the status column.",
    "{name} rewrote the {service} consumer in {lang}, and the p99 dropped from {n} ms to {m} ms under the "
    "same replay of production traffic.",
    "We keep the {tool} dashboards for {service} next to the runbook so the on-call person sees the "
    "saturation graphs before paging anyone.",
    "A retry storm hit {service} last week: {n} clients retried without jitter and the queue depth grew to "
    "{m} thousand messages before the circuit breaker opened.",
    "For the migration we copy {service} rows in batches of {n}, compare checksums per batch, and only "
    "then switch reads to the new {db} cluster.",
    "The profiler showed {n} percent of the time in JSON encoding, so {name} moved the hot path to a "
    "pre-serialised cache keyed by version.",
    "Connection pools are sized per pod: {n} connections for {service}, which keeps {db} under its limit "
    "even when the autoscaler doubles the replicas.",
    "{name} proposed feature flags in {tool} for the {service} rollout so a bad release can be turned off "
    "without a deploy.",
    "Our cache for {service} uses a TTL of {n} seconds with probabilistic early refresh, which removed the "
    "thundering herd at the top of each hour.",
    "The {lang} build of {service} takes {n} seconds in CI; caching the dependency layer saves about {m} "
    "seconds per pipeline.",
    "Load tests at {n} requests per second showed lock contention in {db} on the counters table, so we "
    "moved the counters to a sharded design.",
    "We write structured logs from {service} with a request id, and {tool} samples {n} percent of traces "
    "so the storage bill stays predictable.",
    "Backups of {db} run nightly at {h}:00 UTC, and once a month {name} restores one into a scratch "
    "environment to prove it actually works.",
    "{name}'s team moved their deploy window for {service} to {day} afternoons after two incidents on "
    "Friday evenings.",
    "Another team's staging {db} listens on port {port}, which confused the new hires until the wiki "
    "page was fixed.",
    "For schema changes we use expand and contract: add the column, backfill in batches of {n}, switch "
    "the readers, then drop the old column a week later.",
]
EN_PERSONAL = [
    "My friend {name} moved to {city} and keeps sending photos of the harbour at sunset.",
    "This weekend I tried a new recipe for {food}; it took {n} minutes and the kitchen smelled great.",
    "I have been doing {hobby} on {day} evenings with {name}, mostly to get away from screens.",
    "My cousin {name} is planning a trip to {city} in the spring and asked me for a packing list.",
    "I slept badly this week, about {s} hours a night, so I am trying to stop coffee after noon.",
    "We spent {n} euros on groceries this month, a bit more than planned because of a birthday dinner.",
    "{name}'s dentist is near the old train station, and she says he is very gentle.",
    "My neighbour {name} lent me a book about the history of {city}; I read {n} pages on the train.",
    "On {day} I walked {s} kilometres along the river and listened to a podcast about urban design.",
    "I keep a paper notebook for ideas about {hobby}, because apps tend to disappear after a few years.",
    "My sister called about our parents' anniversary; we want to book a dinner with {food} for {s} people.",
    "{name} lives in {city} now and says the rent there went up by {n} percent this year.",
    "I signed up for a beginner class in {hobby}, which meets every {day} for {s} weeks.",
    "Last night I cooked {food} for {name}, who claims it was better than any restaurant's.",
    "{name}'s landlord raised the rent again, and {name}'s accountant says to keep every receipt.",
    "{name}'s son has a new football coach who makes the kids run {s} laps before practice.",
    "At {name}'s office the VPN gateway drops every {n} minutes, so they reconnect all day.",
    "{name} started seeing a physiotherapist for a sore shoulder after {hobby} on {day}.",
]
ZH_LEX: dict[str, list[str]] = {
    "name": ["小林", "老周", "阿美", "王磊", "陈静", "刘洋", "赵敏", "孙浩", "李娜", "何伟"],
    "service": ["计费", "搜索", "下单", "账本", "通知", "库存", "认证", "报表"],
    "db": ["Postgres", "MySQL", "SQLite", "ClickHouse", "Redis", "Cassandra"],
    "tool": ["Grafana", "Terraform", "Ansible", "Jenkins", "ArgoCD", "Sentry", "Prometheus", "Vault"],
    "city": ["杭州", "成都", "厦门", "青岛", "昆明", "苏州", "大连", "西安", "长沙"],
    "food": ["番茄炒蛋", "红烧肉", "酸菜鱼", "小笼包", "麻婆豆腐", "蛋炒饭", "清蒸鲈鱼", "饺子"],
    "hobby": ["攀岩", "陶艺", "围棋", "烘焙", "越野跑", "观鸟", "素描"],
    "day": ["周一", "周二", "周三", "周四", "周五", "周六", "周日"],
    "lang": ["Go", "Rust", "Python", "TypeScript", "Kotlin", "Java", "Elixir"],
}
ZH_TECH = [
    "{service}服务跑在{db}上，每个请求在全表扫描里花了{n}毫秒，直到我们给状态列加了部分索引。",
    "{name}用{lang}重写了{service}的消费者，同样的流量回放下p99从{n}毫秒降到了{m}毫秒。",
    "{service}的{tool}看板就放在运维手册旁边，值班的人在呼叫别人之前先看饱和度曲线。",
    "上周{service}遇到了重试风暴：{n}个客户端没有加抖动就重试，队列积压涨到{m}千条，熔断器才打开。",
    "迁移时我们按每批{n}行复制{service}的数据，逐批比对校验和，然后才把读流量切到新的{db}集群。",
    "性能分析显示{n}%的时间花在JSON编码上，于是{name}把热路径改成了按版本缓存的预序列化结果。",
    "连接池按容器设定：{service}每个实例{n}个连接，这样即使自动扩容把副本翻倍，{db}也不会超限。",
    "{name}建议在{tool}里给{service}上线加功能开关，这样出了问题不用重新部署就能关掉。",
    "{service}的缓存过期时间是{n}秒，并且会概率性地提前刷新，整点时的惊群效应就消失了。",
    "{service}的{lang}构建在CI里要{n}秒，把依赖层缓存起来以后每条流水线能省大约{m}秒。",
    "每秒{n}个请求的压测显示{db}的计数器表有锁竞争，所以我们把计数器改成了分片设计。",
    "{service}输出带请求编号的结构化日志，{tool}只采样{n}%的链路，存储费用就比较可控。",
    "{db}的备份每晚UTC {h}点运行，{name}每个月会把一份备份恢复到临时环境里，确认它真的能用。",
    "{name}的团队把{service}的发布窗口改到了{day}下午，因为周五晚上出过两次事故。",
    "另一个团队的测试环境{db}监听在{port}端口，新同事一直搞混，直到维基页面改正为止。",
    "改表结构我们用扩展再收缩的办法：先加列，按每批{n}行回填，切换读取方，一周后再删旧列。",
]
ZH_PERSONAL = [
    "我的朋友{name}搬到了{city}，经常给我发海边日落的照片。",
    "这个周末我试着做了{food}，花了{n}分钟，厨房里香极了。",
    "我每个{day}晚上和{name}一起{hobby}，主要是为了离开屏幕放松一下。",
    "表妹{name}打算春天去{city}旅行，让我帮她列一张行李清单。",
    "这周睡得不好，每晚大概只睡{s}个小时，所以我打算中午以后不再喝咖啡。",
    "这个月买菜花了{n}元，比计划多一点，因为有一顿生日晚饭。",
    "{name}的牙医在老火车站附近，她说那位医生下手很轻。",
    "邻居{name}借给我一本讲{city}历史的书，我在地铁上读了{n}页。",
    "{day}我沿着河边走了{s}公里，一边听一个讲城市设计的播客。",
    "关于{hobby}的想法我都记在一个纸质笔记本上，因为应用过几年往往就没了。",
    "姐姐打电话说爸妈的结婚纪念日快到了，我们想订一顿{food}，一共{s}个人。",
    "{name}现在住在{city}，说那边今年房租涨了{n}%。",
    "我报了一个{hobby}入门班，每{day}上课，一共{s}周。",
    "昨晚我给{name}做了{food}，他说比任何饭店做的都好吃。",
    "{name}的房东又涨了房租，{name}的会计让他把每张发票都留好。",
    "{name}的儿子换了一位足球教练，训练前要先跑{s}圈。",
    "{name}公司的VPN网关每{n}分钟断一次，他们一整天都在重连。",
    "{name}{day}{hobby}以后肩膀疼，开始去看康复理疗师。",
]


def _fill(rng: random.Random, template: str, lex: dict[str, list[str]]) -> str:
    slots = {key: rng.choice(values) for key, values in lex.items()}
    numbers = {
        "n": rng.randint(12, 980),
        "m": rng.randint(2, 90),
        "s": rng.randint(3, 12),
        "h": rng.randint(0, 23),
        "port": rng.randint(5400, 5499),
    }
    return template.format(**slots, **numbers)


def _paragraph(rng: random.Random, language: str, kind: str, chars: int) -> list[str]:
    """Sentences of filler of this kind (`tech` or `personal`) until about `chars` characters."""
    lex = EN_LEX if language == "en" else ZH_LEX
    if language == "en":
        pool = EN_TECH if kind == "tech" else EN_PERSONAL
    else:
        pool = ZH_TECH if kind == "tech" else ZH_PERSONAL
    out: list[str] = []
    size = 0
    while size < chars:
        sentence = _fill(rng, rng.choice(pool), lex)
        out.append(sentence)
        size += len(sentence) + (1 if language == "en" else 0)
    return out


def _join(sentences: list[str], language: str) -> str:
    return (" " if language == "en" else "").join(sentences)


# ---------------------------------------------------------------- probes
@dataclass(frozen=True)
class Statement:
    """One sentence a probe puts into the history, at `at` (a fraction of the turns), spoken by `role`."""

    at: float
    role: str
    text: str


@dataclass
class Probe:
    kind: str  # fact | assistant | changed | preference
    language: str
    question: str
    statements: list[Statement]
    # the statements that answer the question (indices into `statements`); the rest are stale
    answers: list[int] = field(default_factory=list)
    part: str = ""


def _part(at: float) -> str:
    return PARTS[min(2, int(at * 3))]


def _changed(rng: random.Random, language: str, name: str, values: list[str], say: str, ask: str) -> Probe:
    """An attribute restated `len(values)` times over the whole history; the last statement wins."""
    picks = rng.sample(values, k=min(len(values), 6))
    spots = sorted(rng.uniform(0.02, 0.97) for _ in picks)
    statements = [Statement(at, "user", say.format(v)) for at, v in zip(spots, picks, strict=True)]
    return Probe("changed", language, ask, statements, answers=[len(statements) - 1], part=name)


def probes(seed: int) -> list[Probe]:
    """Every probe of a set, the same at every size for one seed."""
    rng = random.Random(f"{seed}-probes")
    out: list[Probe] = []
    names_en = ["Okafor", "Lindqvist", "Moreau", "Takeda", "Ferreira", "Novak", "Halvorsen", "Quintero"]
    names_zh = ["钱", "孔", "欧阳", "诸葛", "司马", "上官", "贺", "范"]
    # (role, statement, question) per part: every part its own subjects, so no question has two answers
    en_facts: list[list[tuple[str, str, str]]] = [
        [
            (
                "user",
                "By the way, my dentist is Dr. {name}, and the next check-up is in the autumn.",
                "What is the name of my dentist?",
            ),
            (
                "user",
                "For the record, the staging database of our payroll system listens on port {port}.",
                "Which port does the payroll staging database listen on?",
            ),
            (
                "user",
                "My daughter's violin teacher is called Ms. {name}, she teaches on Thursdays.",
                "Who teaches my daughter the violin?",
            ),
            (
                "assistant",
                "For the orders service I would set the connection pool maximum to {num} and keep "
                "the idle timeout short.",
                "What connection pool maximum did you suggest for the orders service?",
            ),
        ],
        [
            (
                "user",
                "My physiotherapist is Mr. {name}; he wants me to do the knee exercises daily.",
                "What is my physiotherapist's name?",
            ),
            (
                "user",
                "Note that our product search cluster now runs {num} shards after the resharding.",
                "How many shards does our product search cluster run?",
            ),
            (
                "user",
                "Our landlord is Mrs. {name}, and she only answers messages in the evening.",
                "What is our landlord's name?",
            ),
            (
                "assistant",
                "For the billing cache I suggest a TTL of {num} seconds with early refresh.",
                "What TTL did you suggest for the billing cache?",
            ),
        ],
        [
            (
                "user",
                "Our accountant this year is Mr. {name}, who files the tax return in April.",
                "Who is our accountant this year?",
            ),
            (
                "user",
                "The office VPN gateway moved to port {port} last night.",
                "Which port does the office VPN gateway use?",
            ),
            (
                "user",
                "My son's football coach is Coach {name}; practice is on Saturday mornings.",
                "What is my son's football coach called?",
            ),
            (
                "assistant",
                "For the ledger export I would use batches of {num} rows and a checksum per batch.",
                "What batch size did you suggest for the ledger export?",
            ),
        ],
    ]
    zh_facts: list[list[tuple[str, str, str]]] = [
        [
            ("user", "顺便说一下，我的牙医是{name}医生，下次复查在秋天。", "我的牙医姓什么？"),
            (
                "user",
                "记一下，我们工资系统的预发数据库监听在{port}端口。",
                "工资系统的预发数据库用的是哪个端口？",
            ),
            ("user", "我儿子的钢琴老师姓{name}，每周四上课。", "我儿子的钢琴老师姓什么？"),
            (
                "assistant",
                "订单服务的连接池上限我建议设成{num}，空闲超时设短一点。",
                "你之前建议订单服务的连接池上限设成多少？",
            ),
        ],
        [
            ("user", "我的康复理疗师姓{name}，他要我每天做膝盖训练。", "我的康复理疗师姓什么？"),
            (
                "user",
                "注意：重新分片以后，我们的商品搜索集群现在有{num}个分片。",
                "我们的商品搜索集群有多少个分片？",
            ),
            ("user", "我们的房东姓{name}，她只在晚上回消息。", "我们的房东姓什么？"),
            (
                "assistant",
                "计费缓存我建议过期时间设成{num}秒，并且提前刷新。",
                "你建议计费缓存的过期时间设多少秒？",
            ),
        ],
        [
            ("user", "今年帮我们报税的会计姓{name}，四月份提交。", "今年帮我们报税的会计姓什么？"),
            ("user", "公司VPN网关昨晚改到了{port}端口。", "公司VPN网关现在用哪个端口？"),
            ("user", "我女儿的足球教练姓{name}，每周六上午训练。", "我女儿的足球教练姓什么？"),
            ("assistant", "账本导出我建议每批{num}行，每批做一次校验和。", "你建议账本导出每批多少行？"),
        ],
    ]
    for part, part_at in enumerate((0.15, 0.5, 0.85)):  # the early, middle and late part
        for language, facts, names in (("en", en_facts, names_en), ("zh", zh_facts, names_zh)):
            for role, say, ask in facts[part]:
                values = {
                    "name": rng.choice(names),
                    "port": rng.randint(6100, 6999),
                    "num": rng.randint(41, 79),
                }
                at = part_at + rng.uniform(-0.1, 0.1)
                kind = "assistant" if role == "assistant" else "fact"
                out.append(
                    Probe(kind, language, ask, [Statement(at, role, say.format(**values))], [0], _part(at))
                )
    # facts restated many times: the latest wins
    out.append(
        _changed(
            rng,
            "en",
            "home",
            EN_LEX["city"] + ["Bergen", "Nairobi"],
            "Quick update: I live in {} now, the move went fine.",
            "Which city do I live in now?",
        )
    )
    out.append(
        _changed(
            rng,
            "en",
            "deploy",
            EN_LEX["day"],
            "Our team's deploy window is now {} mornings, effective this week.",
            "When is our team's deploy window now?",
        )
    )
    out.append(
        _changed(
            rng,
            "en",
            "oncall",
            ["PagerDuty", "Opsgenie", "VictorOps", "Squadcast", "Grafana OnCall", "Zenduty"],
            "We switched our on-call rotation to {} this month.",
            "Which tool runs our on-call rotation now?",
        )
    )
    out.append(
        _changed(
            rng,
            "zh",
            "home",
            ZH_LEX["city"] + ["拉萨", "哈尔滨"],
            "更新一下：我现在住在{}了，搬家很顺利。",
            "我现在住在哪个城市？",
        )
    )
    out.append(
        _changed(
            rng,
            "zh",
            "deploy",
            ZH_LEX["day"],
            "我们组的发布窗口现在改到{}上午了，本周生效。",
            "我们组现在的发布窗口是哪天？",
        )
    )
    out.append(
        _changed(
            rng,
            "zh",
            "car",
            ["比亚迪", "蔚来", "小鹏", "理想", "特斯拉", "吉利"],
            "我现在开的车换成{}了。",
            "我现在开的是什么车？",
        )
    )
    for p in out:
        if p.kind == "changed":
            p.part = _part(p.statements[-1].at)
    # instructions and preferences stated once, long ago
    prefs = [
        (
            "en",
            "One standing instruction: always answer in bullet points, never in long paragraphs.",
            "How should you format the answers you give me?",
        ),
        ("zh", "有个长期要求：回答请一律用要点列出，不要写成大段文字。", "你给我的回答应该用什么格式？"),
        (
            "en",
            "Please remember that I am allergic to shellfish, so never suggest shrimp or crab.",
            "Can you suggest a seafood dish I could cook tonight?",
        ),
        ("zh", "请记住我不吃辣，推荐菜的时候别放辣椒。", "今晚给我推荐一道川菜吧？"),
    ]
    for language, say, ask in prefs:
        at = rng.uniform(0.005, 0.05)
        out.append(Probe("preference", language, ask, [Statement(at, "user", say)], [0], "early"))
    return out


# ---------------------------------------------------------------- the set
def _turn_plan(total_tokens: int) -> int:
    """Turns for about `total_tokens`: sessions alternate languages, about 1,235 tokens a turn."""
    en = tokens(_join(_paragraph(random.Random("plan"), "en", "tech", TURN_CHARS), "en"))
    zh = tokens(_join(_paragraph(random.Random("plan"), "zh", "tech", TURN_CHARS), "zh"))
    return max(TURNS_PER_SESSION * 2, round(total_tokens / ((en + zh) / 2)))


def build(total_tokens: int, seed: int = SEED) -> dict[str, Any]:
    """One bilingual user of about `total_tokens` tokens, its questions and its evidence."""
    n_turns = _turn_plan(total_tokens)
    n_turns += -n_turns % TURNS_PER_SESSION
    sessions_n = n_turns // TURNS_PER_SESSION
    user_id = f"tok{seed}-{total_tokens}"
    all_probes = probes(seed)
    # each statement lands on the turn of its fraction with the right role and language
    slots: dict[int, list[tuple[int, int]]] = {}
    for pi, probe in enumerate(all_probes):
        for si, st in enumerate(probe.statements):
            index = min(n_turns - 1, int(st.at * n_turns))
            index = _nearest(index, n_turns, st.role, probe.language)
            slots.setdefault(index, []).append((pi, si))
    span = max(365.0, n_turns / 12)  # days: about a year, longer for the largest sets
    sessions: list[dict[str, Any]] = []
    turn_id: dict[tuple[int, int], str] = {}
    total = 0
    for s in range(sessions_n):
        language = _language(s)
        started = START + DAY * span * s / sessions_n
        turns: list[dict[str, Any]] = []
        for k in range(TURNS_PER_SESSION):
            index = s * TURNS_PER_SESSION + k
            role = "user" if k % 2 == 0 else "assistant"
            rng = random.Random(f"{seed}-turn-{index}")
            kind = "tech" if role == "assistant" or rng.random() < 0.45 else "personal"
            sentences = _paragraph(rng, language, kind, TURN_CHARS)
            placed = slots.get(index, [])
            for pi, si in placed:
                spot = rng.randrange(1, len(sentences))
                sentences.insert(spot, all_probes[pi].statements[si].text)
            tid = f"{user_id}-t{index:06d}"
            turn: dict[str, Any] = {"id": tid, "role": role, "content": _join(sentences, language)}
            if placed:
                turn["has_answer"] = True
            for key in placed:
                turn_id[key] = tid
            total += tokens(turn["content"])
            turns.append(turn)
        sessions.append(
            {"session_id": f"{user_id}-s{s:05d}", "started": started, "language": language, "turns": turns}
        )
    asked = START + DAY * (span + 7)
    questions = []
    for pi, probe in enumerate(all_probes):
        evidence = [turn_id[(pi, si)] for si in probe.answers]
        stale = [turn_id[(pi, si)] for si in range(len(probe.statements)) if si not in probe.answers]
        questions.append(
            {
                "question": probe.question,
                "question_type": probe.kind,
                "language": probe.language,
                "part": probe.part,
                "evidence": evidence,
                "stale": [s for s in stale if s not in evidence],
                "answer": probe.statements[probe.answers[-1]].text,
                "question_date": asked,
            }
        )
    return {
        "user_id": user_id,
        "language": "mixed",
        "tokens": total,
        "sessions": sessions,
        "questions": questions,
    }


def _language(session: int) -> str:
    return "en" if session % 2 == 0 else "zh"


def _nearest(index: int, n_turns: int, role: str, language: str) -> int:
    """The turn nearest `index` with this role (user turns are even in a session) and language."""
    for delta in range(n_turns):
        for candidate in (index + delta, index - delta):
            if 0 <= candidate < n_turns:
                session, k = divmod(candidate, TURNS_PER_SESSION)
                if _language(session) == language and (k % 2 == 0) == (role == "user"):
                    return candidate
    raise ValueError("no turn for the probe")


def digest(user: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(user, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def describe(user: dict[str, Any]) -> dict[str, Any]:
    turns = [t for s in user["sessions"] for t in s["turns"]]
    return {
        "tokens": user["tokens"],
        "turns": len(turns),
        "sessions": len(user["sessions"]),
        "chars": sum(len(t["content"]) for t in turns),
        "questions": len(user["questions"]),
        "sha256": digest(user)[:16],
    }


def path_for(total_tokens: int, seed: int = SEED) -> Path:
    return Path(__file__).resolve().parent / "results" / f"token_history_{total_tokens}_{seed}.json"


def load_or_build(total_tokens: int, seed: int = SEED) -> dict[str, Any]:
    """The set from its cache file in `bench/results/`, built and written there when missing."""
    path = path_for(total_tokens, seed)
    if path.exists():
        cached: dict[str, Any] = json.loads(path.read_text())
        return cached
    user = build(total_tokens, seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(user, ensure_ascii=False))
    return user


Writer = Callable[[str], object]


def main(argv: list[str] | None = None, write: Writer | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    user = load_or_build(args.tokens, args.seed)
    if write is not None:
        write(json.dumps({"path": str(path_for(args.tokens, args.seed)), **describe(user)}) + "\n")


if __name__ == "__main__":
    import sys

    main(write=sys.stdout.write)
