"""Issue 42, "Console": no raw field name and no untranslated text is shown to a person. Every page and
dialog of the console (a user's and an admin's) is walked in real headless Chromium, in English and
Chinese at 1,400 px and 390 px; everything a person can see or hear on it (text, labels, placeholders,
options, the column names cards show at 390 px, the title) is read, except the person's own data (marked
`translate="no"`: memories, ids, names), and the walk fails on a snake_case word, a key of the i18n
tables, English words in the Chinese UI or Chinese in the English one, "1 memories"-style plurals and the
browser's own mm/dd/yyyy date fields. A screenshot of each screen goes to MNEMO_SCREENSHOT_DIR (else a
temporary directory), named console-words-<screen>-<lang>-<width>.png.

The other tests of the issue: each item it lists, as a check that fails on the console before it."""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from harness.services import ServerProcess
from tests.browser.test_console import Api, all_of, find, open_console, token, type_into, visible, wait
from tests.browser.test_console_a11y import AXE, accessible
from tests.browser.test_console_product import WIDTHS, chat_turn, rows, set_lang
from tests.served import serve

pytestmark = [pytest.mark.integration, pytest.mark.standalone]
REDIS_DB = 12  # a database of the suite's redis-server no other served test uses: the audit trail is ours

SNAKE = re.compile(r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b")
LATIN = re.compile(r"[A-Za-z]{2,}")
CJK = re.compile(r"[\u3400-\u9fff]")
# English a Chinese UI says on purpose: names of things, and what a person types or sees elsewhere
ZH_KEEPS = {
    "mnemo",
    "JWT",
    "ID",
    "Bearer",
    "eyJ",
    "Redis",
    "Chroma",
    "JSON",
    "token",
    "API",
    "make",
    "run",
    "sub",
    "admin",
    "person",
    "katherine",
}
ONE_PLURAL = re.compile(
    r"(?<![\d.,])1 (memories|sessions|users|messages|entities|results|long-term memories)\b"
)

# everything shown to a person, except their data: text nodes of rendered elements, the labels cards
# show at 390 px (data-label), placeholders, accessible names, the options of a visible select
SHOWN = """
const out = [];
const free = (e) => !e.closest('[translate="no"], script, style');
const seen = (e) => e.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
for (let n; (n = walker.nextNode());) {
  const p = n.parentElement;
  if (p && n.textContent.trim() && free(p) && seen(p)) out.push(n.textContent.trim());
}
for (const e of document.querySelectorAll('[data-label], [placeholder], [aria-label], [title], select, input')) {
  if (!seen(e) || !free(e)) continue;
  for (const a of ['data-label', 'placeholder', 'aria-label', 'title']) if (e.getAttribute(a)) out.push(e.getAttribute(a));
  if (e.tagName === 'SELECT') for (const o of e.options) if (free(o)) out.push(o.textContent.trim());
  if (e.tagName === 'INPUT' && e.type === 'date') out.push('<input type=date> (shows the browser locale mm/dd/yyyy)');
}
out.push(document.title);
return out;
"""


def problems_in(shown: list[str], lang: str, keys: set[str]) -> list[str]:
    found: list[str] = []
    for text in shown:
        why = []
        if SNAKE.search(text):
            why.append("snake_case")
        if text in keys:
            why.append("an i18n key")
        if "input type=date" in text:
            why.append("a date field in the browser's locale")
        if lang == "zh" and (words := [w for w in LATIN.findall(text) if w not in ZH_KEEPS]):
            why.append(f"English in the Chinese UI: {words}")
        if lang == "en" and CJK.search(text):
            why.append("Chinese in the English UI")
        if lang == "en" and ONE_PLURAL.search(text):
            why.append("a plural for one")
        if why:
            found.append(f"{text!r}: {', '.join(why)}")
    return found


class Walk:
    """The screens walked, each read in both languages at both widths; the problems kept to say at the end."""

    def __init__(self, driver: webdriver.Chrome, where: Path) -> None:
        self.driver = driver
        self.where = where
        self.problems: dict[str, list[str]] = {}
        self.screens: list[str] = []
        tables: dict[str, dict[str, str]] = driver.execute_script("return window.MNEMO_I18N")
        # a key shown as it is ("dk_sort", "rel_met_in"); not a key that is also a word of the English text ("by")
        words = {w for v in tables["en"].values() for w in re.findall(r"[a-z]+", v.lower())}
        self.keys = set(tables["en"]) - words

    def read(self, screen: str) -> None:
        self.screens.append(screen)
        for lang in ("en", "zh"):
            set_lang(self.driver, lang)
            for width in WIDTHS:
                self.driver.set_window_size(width, 900)
                shown: list[str] = self.driver.execute_script(SHOWN)
                if bad := problems_in(shown, lang, self.keys):
                    self.problems[f"{screen} {lang} {width}px"] = bad
                self.driver.save_screenshot(str(self.where / f"console-words-{screen}-{lang}-{width}.png"))
        self.driver.set_window_size(1280, 900)
        set_lang(self.driver, "en")

    def done(self) -> None:
        assert self.problems == {}, json.dumps(self.problems, ensure_ascii=False, indent=1)


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[str]:
    env = {
        "RATE_LIMIT_PER_MINUTE": "100000",
        "REDIS_URL": f"{redis_server.url}/{REDIS_DB}",
        "RELATION_MEMORY": "true",
    }
    with serve(tmp_path_factory.mktemp("words-served"), redis_server, chroma_server, env) as base:
        yield base
    redis.Redis.from_url(f"{redis_server.url}/{REDIS_DB}").flushdb()


@pytest.fixture(scope="module")
def axe_source() -> str:
    if not AXE.is_file():
        pytest.fail(f"{AXE} is missing: run scripts/ensure_axe.sh (make install-dev does) to npm ci axe-core")
    return AXE.read_text(encoding="utf-8")


def seeded(served: str) -> str:
    """A user with memories in both languages (topics work, family, entertainment; a profile; entities),
    a chat turn (a session with short-term state), one edit (a history)."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(
        name,
        "s1",
        ("m1", "I work as a nurse at the city hospital"),
        ("m2", "My sister Anna lives in Hangzhou with her family"),
        ("m3", "我是一名小学老师，正在备考雅思"),
        ("m4", "我周末喜欢看电影和听音乐会"),
        ("m5", "I submitted quote Q-2025-114 in March"),
    )
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
    first = api.http.get(f"/v1/memory/{name}/list", params={"limit": 100}).json()["items"][-1]
    got = api.http.get(f"/v1/memory/{name}/{first['id']}")
    patch = {"content": first["content"] + ".", "importance": 0.9, "topic": "work", "pinned": True}
    edited = api.http.patch(
        f"/v1/memory/{name}/{first['id']}", json=patch, headers={"If-Match": f'"{got.json()["version"]}"'}
    )
    assert edited.status_code == 200, edited.text
    return name


def test_no_raw_field_name_or_untranslated_text_on_any_screen(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    name = seeded(served)
    walk_user(browser, served, screenshots, name)
    walk_admin(browser, served, screenshots, name)


def walk_user(browser: webdriver.Chrome, served: str, screenshots: Path, name: str) -> None:
    open_console(browser, served)
    wait(browser, visible("#view-signin"), "the sign-in page")
    walk = Walk(browser, screenshots)
    type_into(browser, "#token-input", "not-a-token")
    find(browser, "#sign-in").click()
    wait(browser, visible("#signin-error"), "the sign-in message")
    walk.read("signin")

    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) >= 6, "the memories")
    walk.read("memories")
    type_into(browser, "#f-since", "2020-01-01")
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(rows(d)) >= 6, "the memories since 2020")
    walk.read("memories-filtered")
    edited = "#memory-list tbody tr[data-id]:has(.tag)"  # the memory edited (pinned): redrawn on each switch
    find(browser, f"{edited} button.edit").click()
    wait(browser, visible("#editor"), "the editor")
    walk.read("editor")
    find(browser, "#ed-cancel").click()
    find(browser, f"{edited} button.history").click()
    wait(browser, lambda d: len(all_of(d, "#hi-events li")) >= 2, "the history")
    walk.read("history")
    find(browser, "#hi-close").click()
    rows(browser)[0].find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser, visible("#confirm"), "the delete confirmation")
    walk.read("delete-confirm")
    find(browser, "#confirm-no").click()

    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    type_into(browser, "#q", "where does my sister live")
    find(browser, "#q-go").click()
    wait(browser, lambda d: bool(all_of(d, "#results li.hit")), "the hits")
    for summary in all_of(browser, "#results li.hit .why summary"):
        summary.click()
    walk.read("search")

    find(browser, "#nav-forget").click()
    wait(browser, visible("#view-forget"), "the forget page")
    type_into(browser, "#fg-query", "my sister Anna in Hangzhou")
    type_into(browser, "#fg-minrel", "0.5")
    type_into(browser, "#fg-session", "s1")
    type_into(browser, "#fg-after", "2020-01-01")
    find(browser, "#fg-preview").click()
    wait(browser, visible("#fg-preview-box"), "the forget preview")
    assert all_of(browser, "#fg-preview-list li"), "the walk reads a preview with memories in it"
    walk.read("forget-preview")

    find(browser, "#nav-sessions").click()
    wait(browser, visible("#session-list a[data-session='chat1']"), "the sessions")
    find(browser, "#session-list a[data-session='chat1']").click()
    wait(browser, visible("#session-view"), "the session")
    slots = find(browser, "#sv-slots").text
    assert "date" in slots.lower(), slots
    assert not re.search(r"\d{4}-\d\d-\d\d", slots), slots  # a date slot said as dates are said
    walk.read("sessions")

    find(browser, "#nav-entities").click()
    wait(browser, lambda d: bool(all_of(d, "#entity-list tbody tr[data-entity]")), "the entities")
    walk.read("entities")
    find(browser, "#entity-list tbody tr[data-entity] a").click()
    wait(browser, visible("#entity-view"), "one entity")
    walk.read("entity")

    find(browser, "#nav-chat").click()
    wait(browser, visible("#view-chat"), "the chat playground")
    walk.read("chat-empty")
    answer = chat_turn(browser, "Where does my sister live?")
    answer.find_element(By.CSS_SELECTOR, "details.prompt summary").click()
    walk.read("chat")

    find(browser, "#nav-export").click()
    wait(browser, visible("#view-export"), "the export page")
    find(browser, "#export-go").click()
    wait(browser, lambda d: bool(find(d, "#export-result").text), "the export")
    walk.read("export")

    browser.get(f"{served}/console/#/u/{name}/nonsense")
    wait(browser, visible("#view-notfound"), "the not-found page")
    walk.read("notfound")
    walk.done()


def walk_admin(browser: webdriver.Chrome, served: str, screenshots: Path, name: str) -> None:
    admin = Api(served, token("ops", role="admin"))
    # the audit trail holds each kind of entry: reads for another user, edits, forgets, exports, finds
    assert (
        admin.http.get(
            f"/v1/memory/{name}/list", params={"topic": "work", "current_only": "true"}
        ).status_code
        == 200
    )
    assert admin.http.post(f"/v1/memory/{name}/search", json={"query": "sister"}).status_code == 200
    assert admin.http.get(f"/v1/sessions/{name}").status_code == 200
    assert admin.http.get(f"/v1/sessions/{name}/chat1").status_code == 200
    assert admin.http.get(f"/v1/memory/{name}/profile").status_code == 200
    forget = {"session_id": "s1", "after": "2020-01-01T00:00:00Z", "dry_run": True}
    assert admin.http.post(f"/v1/memory/{name}/forget", json=forget).status_code == 200
    assert admin.http.get(f"/v1/memory/{name}/export").status_code == 200
    assert admin.http.get("/v1/admin/users", params={"prefix": name[:4]}).status_code == 200

    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    walk = Walk(browser, screenshots)
    type_into(browser, "#open-user", name[:5])
    find(browser, "#find-go").click()
    wait(browser, lambda d: bool(all_of(d, "#found-list tbody tr")), "the users found")
    walk.read("find-users")

    browser.get(f"{served}/console/#/u/{name}/memories")
    wait(browser, lambda d: len(rows(d)) >= 6, "the user's memories, as the admin")
    walk.read("admin-memories")
    browser.get(f"{served}/console/#/u/{name}/chat")
    wait(browser, visible("#view-chat"), "the chat as the user")
    chat_turn(browser, "Where does my sister live?")
    walk.read("admin-chat")

    find(browser, "#nav-erase").click()
    wait(browser, visible("#view-erase"), "the erase page")
    type_into(browser, "#er-user", name)
    find(browser, "#er-preview").click()
    wait(browser, visible("#er-preview-box"), "the erase preview")
    type_into(browser, "#er-confirm", name)
    walk.read("erase-preview")
    find(browser, "#er-go").click()
    wait(browser, visible("#er-receipt"), "the receipt")
    walk.read("erase-receipt")

    find(browser, "#nav-audit").click()
    wait(browser, lambda d: len(all_of(d, "#audit-list tbody tr[data-action]")) >= 8, "the audit trail")
    actions = {r.get_attribute("data-action") for r in all_of(browser, "#audit-list tbody tr[data-action]")}
    assert {"list", "search", "read", "forget", "export", "find", "erase", "erase_preview", "chat"} <= actions
    walk.read("audit")
    walk.done()


def one_memory_user(served: str, content: str = "I keep bees on my rooftop") -> tuple[str, Api]:
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("m", content))
    return name, api


def signed_in(browser: webdriver.Chrome, served: str, name: str, memories: int) -> None:
    """Signed in as the user, their list shown (after the sign-in link's last redirect: no reload to come)."""
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: "/memories" in d.current_url and len(rows(d)) == memories, "the memories")


def test_one_is_said_as_one(browser: webdriver.Chrome, served: str) -> None:
    """ "1 memories", "1 sessions": the count picks the plural form (Intl.PluralRules)."""
    name, api = one_memory_user(served)
    signed_in(browser, served, name, 1)
    assert find(browser, "#memory-total").text == "1 memory"
    turn = {"model": "mnemo", "session_id": "chat1", "messages": [{"role": "user", "content": "hello"}]}
    assert api.http.post("/v1/chat/completions", json=turn).status_code == 200  # one session
    find(browser, "#nav-export").click()
    wait(browser, visible("#view-export"), "the export page")
    find(browser, "#export-go").click()
    wait(browser, lambda d: bool(find(d, "#export-result").text), "the export")
    assert re.match(r"Exported (1 memory|2 memories) and 1 session \(", find(browser, "#export-result").text)
    set_lang(browser, "zh")
    assert re.match(r"已导出 [12] 条记忆和1 个会话", find(browser, "#export-result").text)
    set_lang(browser, "en")


def test_a_pasted_token_is_cleaned_and_what_is_wrong_with_it_named(
    browser: webdriver.Chrome, served: str
) -> None:
    """A token wrapped over lines said "mnemo cannot be reached"; a quoted one said "not signed with this
    server's secret". Line breaks, quotes, "Bearer " and "Authorization:" are what a paste adds: gone. A
    quote inside the token is named as such."""
    name, _ = one_memory_user(served)
    good = token(name)
    wrapped = "\n".join(good[i : i + 40] for i in range(0, len(good), 40))
    for pasted in (
        wrapped,
        f'"{good}"',
        f"'Bearer {good}'",
        f"Authorization: Bearer {good}\n",
        f"“{wrapped}”",
    ):
        open_console(browser, served)
        wait(browser, visible("#view-signin"), "the sign-in page")
        browser.execute_script("document.querySelector('#token-input').value = arguments[0]", pasted)
        find(browser, "#sign-in").click()
        wait(browser, lambda d: len(rows(d)) == 1, f"signed in with {pasted[:12]!r}…")
        assert find(browser, "#whoami").text == name
        find(browser, "#sign-out").click()
    open_console(browser, served)
    wait(browser, visible("#view-signin"), "the sign-in page")
    broken = good[:30] + '"' + good[30:]
    browser.execute_script("document.querySelector('#token-input').value = arguments[0]", broken)
    find(browser, "#sign-in").click()
    wait(browser, visible("#signin-error"), "the message")
    said = find(browser, "#signin-error").text
    assert "quotes inside it" in said, said
    assert "cannot be reached" not in said, said


def test_an_admin_find_names_a_bad_id_and_drops_the_last_answer(
    browser: webdriver.Chrome, served: str
) -> None:
    """A find with a space gave a generic 422 and left the previous users on screen."""
    name, _ = one_memory_user(served)
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    type_into(browser, "#open-user", name)
    find(browser, "#find-go").click()
    wait(browser, lambda d: len(all_of(d, "#found-list tbody tr")) == 1, "the user")
    type_into(browser, "#open-user", name[:4] + " x")
    find(browser, "#find-go").click()
    wait(browser, visible("#error"), "the message")
    assert "no spaces" in find(browser, "#error").text
    assert "422" not in find(browser, "#error").text
    assert not find(browser, "#found-list").is_displayed()
    assert find(browser, "#found-summary").text == ""
    set_lang(browser, "zh")
    assert "不含空格" in find(browser, "#error").text
    set_lang(browser, "en")


def test_dates_are_typed_and_shown_in_the_consoles_locale(browser: webdriver.Chrome, served: str) -> None:
    """The date filters showed the browser's mm/dd/yyyy beside "10 Nov 2026": a date field now takes and
    says a date as the rest of the console does, in either language."""
    name, _ = one_memory_user(served)
    signed_in(browser, served, name, 1)
    assert all_of(browser, "input[type='date']") == []
    type_into(browser, "#f-since", "2020-01-01")
    find(browser, "#f-apply").click()
    wait(
        browser,
        lambda d: find(d, "#f-since").get_attribute("value") == "1 Jan 2020" and len(rows(d)) == 1,
        "the date said back, and the memory since it",
    )
    set_lang(browser, "zh")
    assert find(browser, "#f-since").get_attribute("value") == "2020年1月1日"
    assert re.fullmatch(
        r"\d{4}年\d{1,2}月\d{1,2}日", find(browser, "#f-until").get_attribute("placeholder") or ""
    )
    type_into(browser, "#f-until", "2099年12月31日")
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(rows(d)) == 1, "the memory between the dates")
    set_lang(browser, "en")
    assert find(browser, "#f-until").get_attribute("value") == "31 Dec 2099"
    type_into(browser, "#f-until", "31/02/2020")
    find(browser, "#f-apply").click()
    wait(browser, visible("#error"), "the message")
    assert "“31/02/2020” is not a date" in find(browser, "#error").text


def test_an_admins_own_pages_have_no_user_tabs(browser: webdriver.Chrome, served: str) -> None:
    """On the admin's pages the user tabs led to the admin's own id; they lead to the user opened, or
    are not there."""
    name, _ = one_memory_user(served)
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    for page, view in (("#/audit", "#view-audit"), ("#/erase", "#view-erase"), ("#/", "#view-home")):
        browser.get(f"{served}/console/{page}")
        wait(browser, visible(view), page)
        shown = [a.get_attribute("href") for a in all_of(browser, "#nav a") if a.is_displayed()]
        assert not any("/u/" in (h or "") for h in shown), (page, shown)
    browser.get(f"{served}/console/#/u/{name}/memories")
    wait(browser, lambda d: len(rows(d)) == 1, "the user's memories")
    assert (find(browser, "#nav-search").get_attribute("href") or "").endswith(f"#/u/{name}/search")


def closed(css: str) -> Callable[[webdriver.Chrome], bool]:
    return lambda d: not find(d, css).is_displayed()


def test_a_dialog_dims_the_page_and_a_click_beside_it_closes_it(
    browser: webdriver.Chrome, served: str
) -> None:
    name, _ = one_memory_user(served)
    signed_in(browser, served, name, 1)
    for button, dialog in (
        ("button.edit", "#editor"),
        ("button.history", "#history"),
        ("button.delete", "#confirm"),
    ):
        rows(browser)[0].find_element(By.CSS_SELECTOR, button).click()
        wait(browser, visible(dialog), dialog)
        beside = browser.execute_script(
            "const e = document.elementFromPoint(8, innerHeight - 8); return e && e.id"
        )
        assert beside == "backdrop", (dialog, beside)
        browser.execute_script("document.elementFromPoint(8, innerHeight - 8).click()")  # beside the dialog
        wait(browser, closed(dialog), f"{dialog} closed")
        assert not find(browser, "#backdrop").is_displayed()


def test_a_search_hit_offers_edit_and_history(browser: webdriver.Chrome, served: str) -> None:
    name, _ = one_memory_user(served)
    signed_in(browser, served, name, 1)
    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    type_into(browser, "#q", "bees")
    find(browser, "#q-go").click()
    wait(browser, lambda d: bool(all_of(d, "#results li.hit")), "the hit")
    find(browser, "#results li.hit button.edit").click()
    wait(browser, visible("#editor"), "the editor")
    type_into(browser, "#ed-content", "I keep two hives of bees on my rooftop")
    find(browser, "#ed-save").click()
    wait(browser, lambda d: "two hives" in find(d, "#results li.hit .content").text, "the hit redrawn")
    find(browser, "#results li.hit button.history").click()
    wait(browser, lambda d: len(all_of(d, "#hi-events li")) == 2, "the history")
    assert "two hives" in find(browser, "#hi-content").text
    assert "content:" in find(browser, "#hi-events li[data-event='edited']").text


def test_the_memory_list_filters_by_text(browser: webdriver.Chrome, served: str) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    Api(served, token(name)).store(name, "s1", ("a", "I keep bees on my rooftop"), ("b", "我的猫叫咪咪。"))
    signed_in(browser, served, name, 2)
    type_into(browser, "#f-text", "咪咪")
    wait(browser, lambda d: len(rows(d)) == 1, "the one with the words")
    assert "咪咪" in rows(browser)[0].text
    type_into(browser, "#f-text", "BEES")
    wait(browser, lambda d: len(rows(d)) == 1 and "bees" in rows(d)[0].text, "case aside")
    type_into(browser, "#f-text", "zebra")
    wait(browser, lambda d: not rows(d), "none")
    assert "None of the 2 memories loaded contains “zebra”" in find(browser, "#memory-list tbody").text


def test_topics_breakdown_and_long_words_read_well(browser: webdriver.Chrome, served: str) -> None:
    """Topics stayed English in the Chinese UI, a boost was "加成 attribute", a hit's breakdown said
    "dense 0.000" for a channel that had no part, and "entertainment" broke mid-word at 1,400 px."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(
        name,
        "s1",
        ("a", "我周末喜欢看电影和听音乐会"),
        ("b", "My sister Anna lives in Hangzhou with her family"),
    )
    topics = {m["topic"] for m in api.http.get(f"/v1/memory/{name}/list").json()["items"]}
    assert {"entertainment", "family"} <= topics, topics
    signed_in(browser, served, name, 2)
    browser.set_window_size(1400, 900)
    one_line = browser.execute_script(
        "const td = [...document.querySelectorAll('#memory-list td.topic')].find((c) => c.textContent === 'entertainment');"
        "const r = document.createRange(); r.selectNodeContents(td);"
        "return [r.getClientRects().length, td.scrollWidth <= td.clientWidth]"
    )
    assert one_line == [1, True]
    set_lang(browser, "zh")
    assert sorted(td.text for td in all_of(browser, "#memory-list td.topic")) == ["娱乐", "家庭"]
    # the topic fields (filter, forget, editor) offer the classifier's words with their Chinese names
    offered = find(browser, "#topic-options option[value='entertainment']").get_attribute("label")
    assert offered == "娱乐"
    assert find(browser, "#ed-topic").get_attribute("list") == "topic-options"
    set_lang(browser, "en")
    browser.set_window_size(1280, 900)
    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    type_into(browser, "#q", "where does my sister live")
    find(browser, "#q-go").click()
    wait(browser, lambda d: len(all_of(d, "#results li.hit")) == 2, "the hits")
    for summary in all_of(browser, "#results li.hit .why summary"):
        summary.click()
    said = " ".join(b.text for b in all_of(browser, "#results .breakdown"))
    assert "0.000" not in said, said
    assert "0 (not used)" in said, said
    set_lang(browser, "zh")
    said = " ".join(b.text for b in all_of(browser, "#results .breakdown"))
    assert not re.search(r"[a-z]{3,}", said), said
    set_lang(browser, "en")


def test_the_console_stays_clean_for_axe_with_the_new_parts(
    browser: webdriver.Chrome, served: str, axe_source: str
) -> None:
    """The backdrop, the text filter, the date fields and a hit's new buttons: no serious or critical
    violation, in both languages at both widths."""
    name, _ = one_memory_user(served)
    signed_in(browser, served, name, 1)
    type_into(browser, "#f-text", "bees")
    accessible(browser, axe_source, "memories with a text filter")
    rows(browser)[0].find_element(By.CSS_SELECTOR, "button.edit").click()
    wait(browser, visible("#editor"), "the editor")
    accessible(browser, axe_source, "editor over its backdrop")


def test_the_receipt_and_the_audit_say_what_happened_in_words(browser: webdriver.Chrome, served: str) -> None:
    """The receipt said "sessions 0" where the preview said 1 (it counts Redis keys, not sessions) and
    showed redis_keys, outbox, dead_letters raw; the audit showed "filters:" empty and "sort: recent"."""
    name, api = one_memory_user(served)
    turn = {
        "model": "mnemo",
        "session_id": "chat1",
        "messages": [{"role": "user", "content": "I keep two hives"}],
    }
    assert api.http.post("/v1/chat/completions", json=turn).status_code == 200
    admin = Api(served, token("ops", role="admin"))
    assert admin.http.get(f"/v1/memory/{name}/list").status_code == 200  # no filter: an empty "filters"
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    find(browser, "#nav-erase").click()
    wait(browser, visible("#view-erase"), "the erase page")
    type_into(browser, "#er-user", name)
    find(browser, "#er-preview").click()
    wait(browser, visible("#er-preview-box"), "the preview")
    assert find(browser, "#ep-stores tr[data-store='sessions'] td.num").text == "1"
    type_into(browser, "#er-confirm", name)
    find(browser, "#er-go").click()
    wait(browser, visible("#er-receipt"), "the receipt")
    receipt = find(browser, "#er-receipt").text
    # the receipt counts the sessions it removed (issue 42) in its table, the messages they held in words
    assert find(browser, "#er-stores tr[data-store='sessions'] td.num").text == "1"
    assert "2 recent messages" in find(browser, "#er-summary").text
    assert not re.search(r"sessions[^\n]*\n?0\b", receipt.split("Files at rest")[0]), receipt
    assert "Redis keys" in find(browser, "#er-stores tr[data-store='redis_keys']").text
    find(browser, "#nav-audit").click()
    type_into(browser, "#au-user", name)
    Select(find(browser, "#au-action")).select_by_value("list")
    find(browser, "#au-go").click()
    wait(browser, lambda d: len(all_of(d, "#audit-list tbody tr[data-action='list']")) == 1, "the listing")
    details = find(browser, "#audit-list tbody tr[data-action='list'] td:last-child").text
    assert "order: newest first" in details, details
    assert "filters" not in details, details
    set_lang(browser, "zh")
    details = find(browser, "#audit-list tbody tr[data-action='list'] td:last-child").text
    assert "排序: 最新在前" in details, details
    assert "recent" not in details, details
    set_lang(browser, "en")
