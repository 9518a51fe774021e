"""The memory console in a real headless Chromium (Debian's `chromium` + `chromium-driver`, driven by
Selenium) against a really served mnemo (uvicorn, 2 workers): a user's flows, an admin's flows, and a
user token on another user's page. A missing browser fails the suite; it never skips.

Screenshots go to MNEMO_SCREENSHOT_DIR (default: a temporary directory); the copies under docs/img
were taken by this test with MNEMO_SCREENSHOT_DIR=docs/img.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import Select, WebDriverWait

from app.http.auth import TokenCodec
from tests.conftest import TEST_SECRET

pytestmark = [pytest.mark.integration, pytest.mark.standalone]
REDIS_DB = 3
WAIT_SECONDS = 30


def browser_binaries() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if chromium is None or driver is None:
        pytest.fail(
            "chromium and chromedriver are needed for the browser tests: scripts/ensure_chromium.sh "
            "(run by `make test`) installs Debian's chromium and chromium-driver"
        )
    return chromium, driver


def start_chromium(downloads: Path, language: str) -> webdriver.Chrome:
    chromium, driver_path = browser_binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(arg)
    options.add_argument("--window-size=1280,900")
    options.add_argument(f"--lang={language}")
    prefs = {"download.default_directory": str(downloads), "download.prompt_for_download": False}
    options.add_experimental_option("prefs", {**prefs, "intl.accept_languages": language})
    try:
        driver = webdriver.Chrome(options=options, service=Service(driver_path))
    except WebDriverException as exc:
        pytest.fail(f"chromium did not start: {exc.msg}")
    driver.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
    )
    return driver


def token(sub: str, role: str | None = None) -> str:
    return TokenCodec(TEST_SECRET).mint(sub, role=role, ttl_seconds=900)


class Api:
    """Seeding and checking through the public API, as anyone would."""

    def __init__(self, base: str, bearer: str) -> None:
        self.http = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {bearer}"}, timeout=60)

    def store(self, user: str, session: str, *messages: tuple[str, str]) -> None:
        body = {
            "session_id": session,
            "messages": [{"role": "user", "content": c, "id": i} for i, c in messages],
        }
        assert self.http.post(f"/v1/memory/{user}/messages", json=body).status_code == 200

    def contents(self, user: str) -> list[str]:
        page = self.http.get(f"/v1/memory/{user}/list", params={"limit": 100}).json()
        return [m["content"] for m in page["items"]]


def wait(driver: webdriver.Chrome, check: Callable[[webdriver.Chrome], Any], what: str) -> Any:
    return WebDriverWait(driver, WAIT_SECONDS).until(check, message=f"waiting for {what}")


def find(driver: webdriver.Chrome, css: str) -> WebElement:
    return driver.find_element(By.CSS_SELECTOR, css)


def all_of(driver: webdriver.Chrome, css: str) -> list[WebElement]:
    return driver.find_elements(By.CSS_SELECTOR, css)


def visible(css: str) -> Callable[[webdriver.Chrome], bool]:
    return lambda d: (
        bool(d.find_elements(By.CSS_SELECTOR, css)) and d.find_element(By.CSS_SELECTOR, css).is_displayed()
    )


def type_into(driver: webdriver.Chrome, css: str, text: str) -> None:
    box = find(driver, css)
    if box.get_attribute("type") == "date":  # a date picker takes keys in the browser's locale order
        driver.execute_script("arguments[0].value = arguments[1]", box, text)
        return
    box.clear()
    box.send_keys(text)


def open_console(driver: webdriver.Chrome, base: str, fragment: str = "") -> None:
    driver.get("about:blank")
    driver.get(f"{base}/console/")
    driver.execute_script("sessionStorage.clear(); localStorage.clear();")
    driver.get(f"{base}/console/{fragment}")


def search(driver: webdriver.Chrome, query: str) -> list[WebElement]:
    type_into(driver, "#q", query)
    # the answer replaces the list: wait until none of the old items is left and new ones came
    driver.execute_script("document.querySelectorAll('#results li').forEach((li) => li.dataset.stale = '1')")
    find(driver, "#q-go").click()
    wait(
        driver,
        lambda d: bool(all_of(d, "#results li")) and not all_of(d, "#results li[data-stale]"),
        f"results of {query!r}",
    )
    return all_of(driver, "#results li.hit")


@pytest.fixture
def user(served: str) -> str:
    """A user with memories in Chinese and English in two sessions, and one chat turn (session state)."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("zh1", "我住在杭州，记住这个"), ("en1", "I keep bees on my rooftop"))
    api.store(name, "s2", ("car", "我的车牌号是浙A12345"), ("tea", "I like green tea every morning"))
    turn = {
        "model": "mnemo",
        "session_id": "chat1",
        "messages": [{"role": "user", "content": "明天下午3点在上海开会"}],
    }
    assert api.http.post("/v1/chat/completions", json=turn).status_code == 200
    deadline = time.monotonic() + 30  # the turn reaches long-term memory through the outbox
    while not any("上海" in c for c in api.contents(name)):
        assert time.monotonic() < deadline, "the chat turn never reached long-term memory"
        time.sleep(0.3)
    return name


def test_user_flows(
    browser: webdriver.Chrome, served: str, user: str, screenshots: Path, downloads: Path
) -> None:
    api = Api(served, token(user))
    open_console(browser, served)
    wait(browser, visible("#view-signin"), "the sign-in page")
    type_into(browser, "#token-input", token(user))
    find(browser, "#sign-in").click()
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 5, "the user's five memories")
    assert find(browser, "#whoami").text == user
    browser.save_screenshot(str(screenshots / "console-memories.png"))

    # filters: one session, then one source and a time range that holds everything
    type_into(browser, "#f-session", "s2")
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 2, "session s2's memories")
    type_into(browser, "#f-session", "")
    Select(find(browser, "#f-source")).select_by_value("user")
    type_into(browser, "#f-since", "2020-01-01")
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 5, "every memory again")

    # search in Chinese, in the Chinese UI, with the score broken down and the source messages
    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    Select(find(browser, "#lang")).select_by_value("zh")
    assert find(browser, "#nav-search").text == "搜索"
    hits = search(browser, "我住在哪个城市？")
    top = hits[0]
    assert "杭州" in top.find_element(By.CSS_SELECTOR, ".content").text
    top.find_element(By.CSS_SELECTOR, ".why summary").click()  # the breakdown, on demand
    for part in (".b-dense", ".b-keyword", ".b-boosts", ".b-recency"):
        assert top.find_element(By.CSS_SELECTOR, part).text
    assert "语义" in top.find_element(By.CSS_SELECTOR, ".b-dense").text
    assert top.find_element(By.CSS_SELECTOR, ".rel .score").text.endswith("%")  # the calibrated relevance
    assert top.find_element(By.CSS_SELECTOR, ".rel-word").text in {"强", "可能", "弱"}
    assert "s1/zh1" in top.find_element(By.CSS_SELECTOR, ".sources").text
    browser.save_screenshot(str(screenshots / "console-search-zh.png"))
    # nonsense finds nothing, and the page says so
    assert search(browser, "啊啊啊") == []
    assert find(browser, "#results li.empty").text == "没有找到。"
    # a memory from a chat turn: its source message is still in the session's buffer
    hits = search(browser, "我什么时候去上海开会？")
    hits[0].find_element(By.CSS_SELECTOR, ".why summary").click()
    assert "明天下午3点在上海开会" in hits[0].find_element(By.CSS_SELECTOR, ".sources").text

    # English, in the English UI; then delete the hit: the page says where it goes, and it is gone
    Select(find(browser, "#lang")).select_by_value("en")
    hits = search(browser, "what insects do I keep?")
    bees = hits[0]
    assert "bees" in bees.find_element(By.CSS_SELECTOR, ".content").text
    bees.find_element(By.CSS_SELECTOR, ".why summary").click()
    assert "dense" in bees.find_element(By.CSS_SELECTOR, ".b-dense").text
    assert bees.find_element(By.CSS_SELECTOR, ".rel-word").text in {"strong", "possible", "weak"}
    assert search(browser, "xyzzy plugh") == []
    assert find(browser, "#results li.empty").text == "Nothing found."
    hits = search(browser, "what insects do I keep?")
    bees = hits[0]
    bees.find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser, visible("#confirm"), "the delete confirmation")
    assert "Recently deleted" in find(browser, "#confirm-text").text  # restorable for a grace period
    assert "bees" in find(browser, "#confirm-content").text
    find(browser, "#confirm-yes").click()
    wait(browser, visible("#notice"), "the deletion notice")
    assert "Deleted" in find(browser, "#notice").text
    assert "Recently deleted" in find(browser, "#notice").text
    assert "I keep bees on my rooftop" in find(browser, "#notice").text  # the text, not the id
    hits = search(browser, "what insects do I keep?")
    assert all("bees" not in h.text for h in hits)
    assert not any("bees" in c for c in api.contents(user))

    # forget: preview exactly what would go, then confirm
    find(browser, "#nav-forget").click()
    wait(browser, visible("#view-forget"), "the forget page")
    type_into(browser, "#fg-session", "s2")
    find(browser, "#fg-preview").click()
    wait(browser, visible("#fg-preview-box"), "the forget preview")
    preview = [li.text for li in all_of(browser, "#fg-preview-list li")]
    assert len(preview) == 2
    assert any("浙A12345" in p for p in preview)
    assert any("green tea" in p for p in preview)
    assert all("Why: matches the criteria" in p for p in preview)  # chosen by session, not by meaning
    assert "Recently deleted" in find(browser, "#view-forget .warn").text  # restorable for a while
    assert len(api.contents(user)) == 4  # a preview forgets nothing
    browser.save_screenshot(str(screenshots / "console-forget-preview.png"))
    find(browser, "#fg-confirm").click()
    wait(browser, lambda d: "Forgotten for good: 2" in find(d, "#fg-result").text, "the forget result")
    assert sorted(api.contents(user)) == sorted(["我住在杭州", "明天下午3点在上海开会"])

    # sessions: summary, mode, buffer, slots with the time they have left
    find(browser, "#nav-sessions").click()
    wait(browser, visible("#session-list a[data-session='chat1']"), "the session list")
    find(browser, "#session-list a[data-session='chat1']").click()
    wait(browser, visible("#session-view"), "the session")
    assert len(all_of(browser, "#sv-buffer li")) == 2
    assert find(browser, "#sv-mode").text
    ttls = [td.text for td in all_of(browser, "#sv-slots td.ttl")]
    assert ttls
    # the time left, in minutes once it is two minutes or more (issue 42: "1790 s" read as a riddle)
    assert all(re.fullmatch(r"[1-9]\d* (s|min)", t) for t in ttls), ttls
    browser.save_screenshot(str(screenshots / "console-session.png"))

    # export: a download of the whole document
    find(browser, "#nav-export").click()
    wait(browser, visible("#view-export"), "the export page")
    find(browser, "#export-go").click()
    wait(browser, lambda d: "Exported 2 memories" in find(d, "#export-result").text, "the export")
    path = downloads / f"mnemo-export-{user}.json"
    deadline = time.monotonic() + WAIT_SECONDS
    while not path.exists():
        assert time.monotonic() < deadline, f"no download in {list(downloads.iterdir())}"
        time.sleep(0.2)
    document = json.loads(path.read_text())
    assert sorted(m["content"] for m in document["memories"]) == sorted(
        ["我住在杭州", "明天下午3点在上海开会"]
    )


def test_a_superseded_memory_shows_when_it_stopped_being_current(
    browser: webdriver.Chrome, served: str
) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("old", "I live in Hangzhou."), ("zh-old", "我在星河银行工作。"))
    api.store(name, "s2", ("new", "I moved to Suzhou last week."), ("zh-new", "我跳槽到蓝鲸科技了。"))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 4, "the four memories")
    Select(find(browser, "#lang")).select_by_value("en")
    rows = {
        r.find_element(By.CSS_SELECTOR, "td.content").text: r
        for r in all_of(browser, "#memory-list tbody tr")
    }
    old = next(text for text in rows if text.startswith("I live in Hangzhou."))
    assert "(earlier, until " in old
    assert not any("earlier" in text for text in rows if text.startswith("I moved to Suzhou"))
    Select(find(browser, "#lang")).select_by_value("zh")
    find(browser, "#f-apply").click()  # rows are drawn in the language of the moment they were listed
    texts = "return [...document.querySelectorAll('#memory-list tbody td.content')].map((c) => c.textContent)"
    wait(browser, lambda d: any("（此前，至" in c for c in d.execute_script(texts)), "the mark in Chinese")
    marked = [c for c in browser.execute_script(texts) if "（此前，至" in c]
    assert len(marked) == 2
    assert {c.startswith(("I live in Hangzhou.", "我在星河银行工作。")) for c in marked} == {True}
    Select(find(browser, "#lang")).select_by_value("en")  # the choice is remembered: leave it as found


def row_of(driver: webdriver.Chrome, starts: str) -> WebElement:
    return next(
        r
        for r in all_of(driver, "#memory-list tbody tr")
        if r.find_element(By.CSS_SELECTOR, "td.content").text.startswith(starts)
    )


def no_sideways_scroll(driver: webdriver.Chrome, what: str) -> None:
    overflow = driver.execute_script(
        "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0, f"{what} scrolls sideways by {overflow}px"


def test_correcting_a_memory_and_reading_its_history(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Issue 24/25: edit a memory in the console (its version read, If-Match sent), see the change in
    the list and in its history, in English and Chinese, at desktop and phone widths; an edit made
    elsewhere meanwhile is shown, never overwritten."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("home", "I live in Hangzhou near the West Lake."), ("cat", "我的猫叫咪咪。"))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 2, "the two memories")
    Select(find(browser, "#lang")).select_by_value("en")
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 2, "the list in English")
    row_of(browser, "I live in Hangzhou").find_element(By.CSS_SELECTOR, "button.edit").click()
    wait(browser, visible("#editor"), "the editor")
    assert find(browser, "#ed-content").get_attribute("value") == "I live in Hangzhou near the West Lake."
    type_into(browser, "#ed-content", "I moved to Suzhou. 我搬到苏州了。")
    find(browser, "#ed-pinned").click()
    browser.save_screenshot(str(screenshots / "console-edit.png"))
    find(browser, "#ed-save").click()
    wait(browser, visible("#notice"), "the saved notice")
    assert "history" in find(browser, "#notice").text
    assert row_of(browser, "I moved to Suzhou") is not None
    assert "I moved to Suzhou. 我搬到苏州了。" in api.contents(name)

    row_of(browser, "I moved to Suzhou").find_element(By.CSS_SELECTOR, "button.history").click()
    wait(browser, visible("#history"), "the history")
    events = [li.get_attribute("data-event") for li in all_of(browser, "#hi-events li")]
    assert events == ["created", "edited"]
    edited = all_of(browser, "#hi-events li")[1].text
    assert "I live in Hangzhou near the West Lake. → I moved to Suzhou." in edited
    assert f"by {name} (user)" in edited
    browser.save_screenshot(str(screenshots / "console-history.png"))
    browser.set_window_size(390, 844)
    no_sideways_scroll(browser, "the history at phone width")
    browser.save_screenshot(str(screenshots / "console-history-phone.png"))
    browser.set_window_size(1280, 900)
    find(browser, "#hi-close").click()

    # someone else edits the cat meanwhile: saving the stale version shows theirs, never overwrites it
    Select(find(browser, "#lang")).select_by_value("zh")
    find(browser, "#f-apply").click()
    wait(browser, lambda d: find(d, "#memory-list tbody button.edit").text == "编辑", "the list in Chinese")
    row_of(browser, "我的猫叫咪咪").find_element(By.CSS_SELECTOR, "button.edit").click()
    wait(browser, visible("#editor"), "the editor")
    cat = next(m for m in api.http.get(f"/v1/memory/{name}/list").json()["items"] if "咪咪" in m["content"])
    version = api.http.get(f"/v1/memory/{name}/{cat['id']}").json()["version"]
    changed = api.http.patch(
        f"/v1/memory/{name}/{cat['id']}",
        json={"content": "我的猫叫年糕。"},
        headers={"If-Match": f'"{version}"'},
    )
    assert changed.status_code == 200
    type_into(browser, "#ed-content", "我的猫叫团子。")
    find(browser, "#ed-save").click()
    wait(browser, visible("#ed-message"), "the changed-since message")
    assert "已被别人修改" in find(browser, "#ed-message").text
    assert find(browser, "#ed-content").get_attribute("value") == "我的猫叫年糕。"
    browser.set_window_size(390, 844)
    no_sideways_scroll(browser, "the editor at phone width")
    browser.save_screenshot(str(screenshots / "console-edit-conflict-zh-phone.png"))
    browser.set_window_size(1280, 900)
    find(browser, "#ed-cancel").click()
    assert "我的猫叫年糕。" in api.contents(name)
    Select(find(browser, "#lang")).select_by_value("en")  # the choice is remembered: leave it as found


def test_a_user_token_on_another_users_page_sees_the_403(
    browser: webdriver.Chrome, served: str, user: str, screenshots: Path
) -> None:
    open_console(browser, served, f"#token={token('mallory')}")
    wait(browser, lambda d: find(d, "#whoami").text == "mallory", "mallory signed in")
    browser.get(f"{served}/console/#/u/{user}/memories")
    wait(browser, visible("#error"), "the error")
    assert "403" in find(browser, "#error").text
    assert "Forbidden" in find(browser, "#error").text
    assert not all_of(browser, "#memory-list tbody tr")
    browser.save_screenshot(str(screenshots / "console-forbidden.png"))
    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    type_into(browser, "#q", "我住在哪？")
    find(browser, "#q-go").click()
    wait(browser, visible("#error"), "the error")
    assert "403" in find(browser, "#error").text
    assert not all_of(browser, "#results li.hit")


def test_admin_flows(browser: webdriver.Chrome, served: str, user: str, screenshots: Path) -> None:
    admin = token("ops", role="admin")
    api = Api(served, admin)
    memory_id = api.http.get(f"/v1/memory/{user}/list").json()["items"][0]["id"]
    assert api.http.delete(f"/v1/memory/{user}/{memory_id}").status_code == 204

    # the link `make run` prints: the token comes in the fragment and leaves the address bar
    open_console(browser, served, f"#token={admin}")
    wait(browser, visible("#view-home"), "the admin home")
    assert "token" not in browser.current_url
    assert find(browser, "#whoami").text == "ops (admin)"

    # open any user
    type_into(browser, "#open-user", user)
    find(browser, "#open-user-go").click()
    wait(browser, lambda d: len(all_of(d, "#memory-list tbody tr")) == 4, "the user's memories")

    # the audit trail, filtered by user and action
    find(browser, "#nav-audit").click()
    wait(browser, lambda d: len(all_of(d, "#audit-list tbody tr")) > 0, "the audit trail")
    type_into(browser, "#au-user", user)
    Select(find(browser, "#au-action")).select_by_value("delete")
    type_into(browser, "#au-since", "2020-01-01")
    find(browser, "#au-go").click()
    wait(browser, lambda d: len(all_of(d, "#audit-list tbody tr")) == 1, "the one delete")
    row = find(browser, "#audit-list tbody tr")
    assert row.get_attribute("data-action") == "delete"
    assert user in row.text
    assert "ops (admin)" in row.text
    assert memory_id in row.text
    browser.save_screenshot(str(screenshots / "console-audit.png"))

    # erase, after typing the user id again
    find(browser, "#nav-erase").click()
    wait(browser, visible("#view-erase"), "the erase page")
    type_into(browser, "#er-user", user)
    find(browser, "#er-preview").click()  # the preview first: what will go, per store
    wait(browser, visible("#er-preview-box"), "the erase preview")
    assert find(browser, "#ep-stores tr[data-store='hot'] td.num").text == "4"
    assert not find(browser, "#er-go").is_enabled()
    type_into(browser, "#er-confirm", user + "x")
    assert not find(browser, "#er-go").is_enabled()
    type_into(browser, "#er-confirm", user)
    assert find(browser, "#er-go").is_enabled()
    find(browser, "#er-go").click()
    wait(browser, visible("#er-receipt"), "the receipt")
    assert find(browser, "#er-stores tr[data-store='chroma'] td.deleted").text == "4"
    assert "long-term memories" in find(browser, "#er-stores tr[data-store='chroma']").text
    assert "{" not in find(browser, "#er-receipt").text  # a receipt a person reads, not a JSON dump
    assert f"Erased {user}" in find(browser, "#er-title").text
    browser.save_screenshot(str(screenshots / "console-erase.png"))
    assert api.contents(user) == []


def test_the_language_defaults_to_the_browsers(served: str, downloads: Path) -> None:
    driver = start_chromium(downloads, "zh-CN")
    try:
        open_console(driver, served)
        wait(driver, visible("#view-signin"), "the sign-in page")
        assert driver.execute_script("return navigator.language") == "zh-CN"
        assert find(driver, "#sign-in").text == "登录"
        assert find(driver, "html").get_attribute("lang") == "zh-CN"
        Select(find(driver, "#lang")).select_by_value("en")
        assert find(driver, "#sign-in").text == "Sign in"
        driver.refresh()  # the choice is remembered
        wait(driver, visible("#view-signin"), "the sign-in page")
        assert find(driver, "#sign-in").text == "Sign in"
    finally:
        driver.quit()


def test_every_ui_string_exists_in_both_languages_with_the_same_placeholders(
    browser: webdriver.Chrome, served: str
) -> None:
    """The zh and en tables of static/i18n.js are two literals of one shape: a key or a `{placeholder}`
    missing from one would show a raw key, or drop a number, in that language."""
    open_console(browser, served)
    wait(browser, visible("#view-signin"), "the sign-in page")
    tables: dict[str, dict[str, str]] = browser.execute_script("return window.MNEMO_I18N")
    assert sorted(tables) == ["en", "zh"]
    assert sorted(set(tables["en"]) ^ set(tables["zh"])) == [], "keys in one language only"
    placeholder = re.compile(r"\{(\w+)\}")
    differ = {
        key: (text, tables["zh"][key])
        for key, text in tables["en"].items()
        if sorted(placeholder.findall(text)) != sorted(placeholder.findall(tables["zh"][key]))
    }
    assert differ == {}, "placeholders differ between en and zh"
    assert all(v.strip() for table in tables.values() for v in table.values()), "an empty UI string"
