"""The console's entity page (issue 26) in real headless Chromium against a served mnemo with relation
memory on: the profile with its zh/en tags, the entity list, one entity with its relations and the
neighbours they lead to (links to their own pages), the memories behind it; in English and Chinese,
never wider than the window, every input labelled, and no serious or critical axe-core violation."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from selenium import webdriver

from harness.services import ServerProcess
from tests.browser.test_console import Api, all_of, find, open_console, token, type_into, visible, wait
from tests.browser.test_console_a11y import AXE, accessible
from tests.browser.test_console_product import screens, set_lang
from tests.served import serve

pytestmark = [pytest.mark.integration, pytest.mark.standalone]
REDIS_DB = 6


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[str]:
    env = {
        "RATE_LIMIT_PER_MINUTE": "100000",
        "REDIS_URL": f"{redis_server.url}/{REDIS_DB}",
        "RELATION_MEMORY": "true",
    }
    with serve(tmp_path_factory.mktemp("entities-served"), redis_server, chroma_server, env) as base:
        yield base
    redis.Redis.from_url(f"{redis_server.url}/{REDIS_DB}").flushdb()


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run scripts/ensure_axe.sh (make install-dev does) to npm ci axe-core")
    return AXE.read_text(encoding="utf-8")


def test_profile_entities_and_one_entity_with_its_neighbours(
    browser: webdriver.Chrome, served: str, screenshots: Path, axe_source: str
) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(
        name,
        "s1",
        ("m1", "我是一名小学老师，正在备考雅思"),
        ("m2", "I submitted quote Q-2025-114 in March"),
        ("m3", "Quote Q-2025-114 has been approved by finance"),
        ("m4", "My sister Anna lives in Hangzhou"),
    )
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, visible("#view-memories"), "the memories")
    find(browser, "#nav-entities").click()
    wait(browser, visible("#view-entities"), "the entities page")
    wait(browser, lambda d: bool(all_of(d, "#entity-list tr[data-entity]")), "the entity list")
    profile = find(browser, "#profile-list tr[data-key='occupation:teacher']").text
    assert "#职业_教师" in profile
    assert "#occupation_teacher" in profile
    assert all_of(browser, "#profile-list tr[data-key='goal:ielts']")
    set_lang(browser, "zh")
    assert "职业" in find(browser, "#profile-list tr[data-key='occupation:teacher']").text
    assert "当前" in find(browser, "#profile-list tr[data-key='occupation:teacher']").text
    set_lang(browser, "en")
    screens(browser, screenshots, "entities")
    accessible(browser, axe_source, "entities")

    # a prefix of a name finds the one place
    type_into(browser, "#en-prefix", "hang")
    find(browser, "#en-go").click()
    wait(
        browser,
        lambda d: (
            [r.get_attribute("data-entity") for r in all_of(d, "#entity-list tr[data-entity]")]
            == ["place:hangzhou"]
        ),
        "the prefix search",
    )
    type_into(browser, "#en-prefix", "Q-2025")
    find(browser, "#en-go").click()
    wait(browser, visible("#entity-list tr[data-entity='doc:q-2025-114'] a"), "the quote")
    find(browser, "#entity-list tr[data-entity='doc:q-2025-114'] a").click()
    wait(browser, visible("#entity-view"), "the entity page")
    assert find(browser, "#ev-title").text == "Q-2025-114"
    relations = {r.get_attribute("data-relation") for r in all_of(browser, "#ev-relations tr[data-relation]")}
    assert {"submitted", "approved"} <= relations
    assert len(all_of(browser, "#ev-memories li")) == 2
    set_lang(browser, "zh")
    assert "已批准" in find(browser, "#ev-relations tr[data-relation='approved']").text
    set_lang(browser, "en")
    screens(browser, screenshots, "entity")
    accessible(browser, axe_source, "entity")

    # a neighbour is a link to its own page: Anna, from the sister's family relation
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, visible("#view-memories"), "the memories")
    browser.get(f"{served}/console/#/u/{name}/entities/kin%3Asister")
    wait(browser, visible("#entity-view"), "Anna's page (my sister)")
    assert find(browser, "#ev-title").text == "Anna"
    find(browser, "#ev-back").click()
    wait(browser, visible("#entity-list tr[data-entity='place:hangzhou'] a"), "back to the list")
    find(browser, "#entity-list tr[data-entity='place:hangzhou'] a").click()
    wait(browser, lambda d: find(d, "#ev-title").text in {"Hangzhou", "杭州"}, "the place's page")

    # an unknown entity is the API's 404, said in the UI's words
    browser.get(f"{served}/console/#/u/{name}/entities/person%3Anobody")
    wait(browser, visible("#error"), "the not-found message")


def test_merge_and_split_from_the_entity_page(
    browser: webdriver.Chrome, served: str, axe_source: str
) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(
        name,
        "s1",
        ("k1", "I had lunch with Kit yesterday"),
        ("k2", "Katherine called about the contract"),
    )
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, visible("#view-memories"), "the memories")
    browser.get(f"{served}/console/#/u/{name}/entities/person%3Akit")
    wait(browser, visible("#entity-view"), "Kit's page")
    type_into(browser, "#mg-target", "person:nobody")
    find(browser, "#mg-go").click()
    wait(browser, visible("#error"), "the 404 of an unknown target")
    set_lang(browser, "zh")
    assert "404" in find(browser, "#error").text
    set_lang(browser, "en")
    offered = [o.get_attribute("value") for o in all_of(browser, "#mg-options option")]
    assert "person:katherine" in offered  # another person, offered to pick
    assert "person:kit" not in offered  # never the entity itself
    type_into(browser, "#mg-target", "person:katherine")
    find(browser, "#mg-go").click()
    wait(browser, lambda d: find(d, "#ev-title").text == "Katherine", "Katherine's page")
    assert "person:katherine" in find(browser, "#notice").text
    assert len(all_of(browser, "#ev-memories li")) == 2
    accessible(browser, axe_source, "entity after a merge")
    find(browser, "#ev-back").click()
    wait(browser, visible("#merge-list tr[data-merge] button.split"), "the merge listed")
    accessible(browser, axe_source, "entities with a merge")
    find(browser, "#merge-list tr[data-merge] button.split").click()
    wait(browser, lambda d: "person:kit" in find(d, "#notice").text, "the split said")
    assert all_of(browser, "#entity-list tr[data-entity='person:kit']")
    assert not all_of(browser, "#merge-list tr[data-merge]")
    assert api.http.get(f"/v1/memory/{name}/entities/merges").json()["items"] == []
