"""Changes said as changes (issue 24), zh + en: job, employer, home, school, relationship. The rules
read kinds of things (occupations, fields of work, schools, organisations), so these sentences are
not the benchmark's (bench/data/changes.json)."""

from __future__ import annotations

import pytest

from memory.write.supersession import claims_of, supersedes


def _supersedes(old: str, new: str) -> bool:
    return any(
        k1 == k2 and supersedes((k2, v2), (k1, v1)) for k1, v1 in claims_of(old) for k2, v2 in claims_of(new)
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("我的工作是在高中教数学", "我不教书了，现在做数据分析师"),  # the reproduction
        ("我是一名出租车司机。", "我不开出租车了，现在当保安。"),
        ("我是一名中学英语老师。", "我辞掉了老师的工作，现在开了一家奶茶店。"),
        ("我在星光传媒做编辑。", "我跳槽到了晨曦出版社。"),
        ("我住在南宁。", "今年我们搬到了桂林。"),
        ("我在长沙租房住。", "我现在住在株洲了。"),
        ("我在第二中学上高一。", "我转学到了实验中学。"),
        ("我和小刘在谈恋爱。", "我和小刘分手了。"),
        ("I teach maths at a high school.", "I quit teaching; now I'm a data analyst."),
        ("I'm a bartender at a hotel.", "No more bartending for me, I'm a sommelier now."),
        ("I work for Acme Corp in accounts.", "I got hired by Zenith Labs as an analyst."),
        ("I live in Lyon.", "We relocated to Marseille in the spring."),
        ("I'm a junior at Fairview High.", "I transferred to Summit High School in January."),
        ("I'm married to Kate.", "Kate and I split up last year."),
        ("I'm single.", "I'm dating a woman named Ines now."),
    ],
)
def test_a_change_supersedes(old: str, new: str) -> None:
    assert _supersedes(old, new), (claims_of(old), claims_of(new))


@pytest.mark.parametrize(
    "text",
    [
        "我哥辞掉了银行的工作，搬去了上海。",  # someone else
        "我妹妹这学期转学到东湖大学了。",
        "我以后可能会搬到大理。",  # a plan
        "我在考虑辞职开个面包店。",
        "My brother quit his job at the bank and moved to Leeds.",
        "I might move to Lisbon one day.",
        "I'm thinking about quitting to open a bakery.",
        "My sister packed up and moved to Boston.",
        "We'll rock the dance floor and teach others to chase their dreams.",
        "So far so good, I'm seeing more sales.",
    ],
)
def test_others_and_plans_claim_nothing(text: str) -> None:
    assert claims_of(text) == []


def test_a_value_beside_the_end_is_the_new_value() -> None:
    assert claims_of("我现在在餐厅做厨师，不做咖啡了。") == [("job", "厨师"), ("employer", "餐厅")]
    assert claims_of("I'm no longer a librarian; I'm a data analyst now.") == [("job", "data analyst")]
    assert claims_of("I quit my job last month.") == [("employer", ""), ("job", "")]
    assert claims_of("我对花生已经不过敏了") == [("allergy:花生", "")]  # the value inside the end


def test_an_employer_named_like_a_field_is_not_a_field() -> None:
    """ "I quit Maple Consulting" leaves the employer (a habit of the name), not the job."""
    assert all(k != "job" for k, _ in claims_of("I quit Maple Consulting. Now I'm with Cobalt Analytics."))
