"""Issue 25, "the console as a product": each item of the issue's Why list as a browser test that
fails on the console before it and passes now, in a real headless Chromium against a served mnemo.
Every screen is checked at 1,400 px and 390 px in English and Chinese for sideways scrolling, and its
screenshot saved (MNEMO_SCREENSHOT_DIR, else a temporary directory)."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By

from app.http.auth import TokenCodec
from tests.browser.test_console import Api, all_of, find, open_console, token, type_into, visible, wait
from tests.conftest import TEST_SECRET

LONG_URL = "https://example.com/" + "a1b2c3d4e5" * 28  # 300 characters without a break
WIDTHS = (1400, 390)


def set_lang(driver: webdriver.Chrome, lang: str) -> None:
    """The language picked in the bar, also while a dialog (and its backdrop) covers the page."""
    driver.execute_script(
        "const s = document.querySelector('#lang');"
        "if (s.value !== arguments[0]) { s.value = arguments[0]; s.dispatchEvent(new Event('change')); }",
        lang,
    )


def sideways(driver: webdriver.Chrome) -> int:
    return int(
        driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
    )


def screens(driver: webdriver.Chrome, where: Path, name: str) -> None:
    """The screen as it is now, in both languages at both widths: never wider than the window, and
    every input labelled; a screenshot of each."""
    for lang in ("en", "zh"):
        set_lang(driver, lang)
        for width in WIDTHS:
            driver.set_window_size(width, 900)
            assert sideways(driver) <= 0, (
                f"{name} ({lang}, {width}px) scrolls sideways by {sideways(driver)}px"
            )
            unlabelled = driver.execute_script(
                "return [...document.querySelectorAll('input, select, textarea')]"
                ".filter((e) => e.offsetParent !== null && !(e.labels && e.labels.length))"
                ".map((e) => e.id)"
            )
            assert unlabelled == [], f"{name}: inputs without a label: {unlabelled}"
            driver.save_screenshot(str(where / f"console-{name}-{lang}-{width}.png"))
    driver.set_window_size(1280, 900)
    set_lang(driver, "en")


def full_page(driver: webdriver.Chrome, where: Path, name: str, lang: str, width: int) -> None:
    """A screenshot of the whole page (the window made as tall as the document), for the docs."""
    set_lang(driver, lang)
    driver.set_window_size(width, 900)
    height = int(driver.execute_script("return document.documentElement.scrollHeight"))
    driver.set_window_size(width, min(height + 140, 6000))  # + the window's own chrome
    assert sideways(driver) <= 0
    driver.save_screenshot(str(where / f"console-{name}-{lang}-{width}-full.png"))
    driver.set_window_size(1280, 900)
    set_lang(driver, "en")


def rows(driver: webdriver.Chrome) -> list[webdriver.remote.webelement.WebElement]:
    return all_of(driver, "#memory-list tbody tr[data-id]")


def test_a_300_character_token_never_scrolls_the_page_sideways(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 1: one memory with a 300-character URL made the page 3,265 px wide at 1,400 px; the
    columns, the delete confirmation, the notice and the forget preview went off-screen."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("url", f"My reading list is at {LONG_URL}"), ("zh", "我住在杭州，记住这个"))
    api.store(name, "s2", ("tea", "I like green tea every morning"))
    assert len(api.contents(name)) == 3
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) == 3, "the three memories")
    screens(browser, screenshots, "memories")

    find(browser, "#nav-forget").click()
    wait(browser, visible("#view-forget"), "the forget page")
    type_into(browser, "#fg-session", "s1")
    find(browser, "#fg-preview").click()
    wait(browser, visible("#fg-preview-box"), "the forget preview")
    assert any(LONG_URL in li.text for li in all_of(browser, "#fg-preview-list li"))
    assert "session s1" in find(browser, "#fg-count").text  # why they match
    screens(browser, screenshots, "forget-preview")

    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    type_into(browser, "#q", "reading list")
    find(browser, "#q-go").click()
    wait(browser, lambda d: bool(all_of(d, "#results li.hit")), "the hits")
    hit = next(h for h in all_of(browser, "#results li.hit") if LONG_URL in h.text)
    hit.find_element(By.CSS_SELECTOR, ".why summary").click()
    screens(browser, screenshots, "search")
    hit = next(
        h for h in all_of(browser, "#results li.hit") if LONG_URL in h.text
    )  # redrawn in each language
    assert hit.find_element(By.CSS_SELECTOR, ".b-dense").text  # still open
    hit.find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser, visible("#confirm"), "the delete confirmation")
    assert LONG_URL in find(browser, "#confirm-content").text
    screens(browser, screenshots, "delete-confirm")
    find(browser, "#confirm-yes").click()
    wait(browser, visible("#notice"), "the notice")
    assert LONG_URL in find(browser, "#notice").text
    screens(browser, screenshots, "deleted-notice")


def test_sign_in_explains_what_is_wrong_with_a_token(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 2: `not-a-token` showed the form again with no message while the nav and "Sign out"
    appeared and the address became `#/u//memories`; an expired or forged token left the page in the
    signed-in view; `Bearer <jwt>` gave "Invalid header padding"."""
    name = f"u{uuid.uuid4().hex[:8]}"
    Api(served, token(name)).store(name, "s1", ("m", "I keep bees on my rooftop"))
    codec = TokenCodec(TEST_SECRET)
    cases = {
        "not-a-token": "This is not a token",
        codec.mint(name, ttl_seconds=-3600): "This token has expired",
        TokenCodec("another-server-secret-" + "x" * 20).mint(name): "not signed with this server's secret",
        codec.mint(name, role="superuser"): "role is “superuser”",
    }
    open_console(browser, served)
    for pasted, says in cases.items():
        wait(browser, visible("#view-signin"), "the sign-in page")
        type_into(browser, "#token-input", pasted)
        find(browser, "#sign-in").click()
        wait(browser, visible("#signin-error"), f"the message for {pasted[:20]}")
        assert says in find(browser, "#signin-error").text
        assert find(browser, "#view-signin").is_displayed()
        assert not find(browser, "#nav").is_displayed()
        assert not find(browser, "#sign-out").is_displayed()
        assert "#/u//" not in browser.current_url
    set_lang(browser, "zh")  # the message is said again in the other language, live
    assert "角色" in find(browser, "#signin-error").text
    screens(browser, screenshots, "signin-wrong-role")

    type_into(browser, "#token-input", "Bearer " + token(name))
    find(browser, "#sign-in").click()
    wait(browser, lambda d: len(rows(d)) == 1, "signed in with a pasted 'Bearer <jwt>'")
    assert find(browser, "#whoami").text == name
    assert find(browser, "#sign-out").is_displayed()

    # a page reopened after the token expired: back to sign-in, saying so
    browser.execute_script(
        "sessionStorage.setItem('mnemo.token', arguments[0])", codec.mint(name, ttl_seconds=-3600)
    )
    browser.refresh()
    wait(browser, visible("#signin-error"), "the expired-session message")
    assert "session has expired" in find(browser, "#signin-error").text
    assert not find(browser, "#nav").is_displayed()
    # a token the server stops accepting mid-session (another secret): back to sign-in too
    forged = TokenCodec("another-server-secret-" + "x" * 20).mint(name)
    browser.execute_script("sessionStorage.setItem('mnemo.token', arguments[0])", forged)
    browser.get(f"{served}/console/#/u/{name}/memories")
    browser.refresh()
    wait(browser, visible("#signin-error"), "the no-longer-accepted message")
    assert "no longer accepts" in find(browser, "#signin-error").text
    assert not find(browser, "#sign-out").is_displayed()


def test_the_language_switches_live_values_dates_and_errors_included(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 3: switching to 中文 kept "20 memories" and every "Delete" in English until a reload; tier,
    role and mode values stayed English, and API errors showed the English detail."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("a", "我住在杭州，记住这个"), ("b", "I keep bees on my rooftop"))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) == 2, "the two memories")
    set_lang(browser, "en")
    browser.execute_script("window.notReloaded = true")
    assert find(browser, "#memory-total").text == "2 memories"
    set_lang(browser, "zh")
    assert browser.execute_script("return window.notReloaded") is True
    assert find(browser, "#memory-total").text == "共 2 条记忆"
    assert {b.text for b in all_of(browser, "#memory-list button.delete")} == {"删除"}
    tiers = {td.text for td in all_of(browser, "#memory-list td.tier")}
    assert tiers
    assert tiers <= {"事实", "事件", "—"}
    assert {td.text for td in all_of(browser, "#memory-list td[data-label='来源']")} == {"用户"}
    for created in all_of(browser, "#memory-list td.created"):
        assert not re.search(r"\d{4}-\d{2}-\d{2}T|\.\d{6}", created.text), created.text
        assert "年" in created.text or "月" in created.text
    screens(browser, screenshots, "memories-lang")

    # an API error, said from its code in the UI's language, and said again after a switch
    find(browser, "#nav-forget").click()
    wait(browser, visible("#view-forget"), "the forget page")
    type_into(browser, "#fg-query", "bees")
    browser.execute_script(
        "document.querySelector('#fg-minrel').value = '5';"
        "document.querySelector('#forget-form').dispatchEvent(new Event('submit', {cancelable: true}))"
    )
    wait(browser, visible("#error"), "the error")
    set_lang(browser, "zh")
    assert "请求被拒绝（422）" in find(browser, "#error").text
    assert "Value error" not in find(browser, "#error").text
    set_lang(browser, "en")
    assert "The request was refused (422)" in find(browser, "#error").text
    screens(browser, screenshots, "error")


def test_the_memory_list_says_what_a_person_needs(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 4: an empty search did nothing; the count did not change after a delete; the notice showed
    the raw id; an unknown tab was a blank page; no importance, source messages or current-only."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("old", "I live in Hangzhou."), ("cat", "我的猫叫咪咪。"))
    api.store(name, "s2", ("new", "I moved to Suzhou last week."))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) == 3, "the three memories")
    set_lang(browser, "en")
    assert find(browser, "#memory-total").text == "3 memories"
    importances = [td.text for td in all_of(browser, "#memory-list td.importance")]
    assert all(re.fullmatch(r"[01]\.\d\d|—", i) for i in importances)
    assert any(i != "—" for i in importances)
    cat = next(r for r in rows(browser) if "咪咪" in r.text)
    assert "from message cat" in cat.find_element(By.CSS_SELECTOR, "td.content").text

    find(browser, "#f-current").click()  # current only: the home that was replaced goes
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(rows(d)) == 2, "the current memories")
    assert not any("Hangzhou" in r.text for r in rows(browser))
    find(browser, "#f-current").click()
    find(browser, "#f-apply").click()
    wait(browser, lambda d: len(rows(d)) == 3, "every memory again")

    next(r for r in rows(browser) if "咪咪" in r.text).find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser, visible("#confirm"), "the confirmation")
    find(browser, "#confirm-yes").click()
    wait(browser, visible("#notice"), "the notice")
    assert "我的猫叫咪咪。" in find(browser, "#notice").text
    assert "Recently deleted" in find(browser, "#notice").text
    assert find(browser, "#memory-total").text == "2 memories"
    assert len(rows(browser)) == 2

    find(browser, "#nav-search").click()
    wait(browser, visible("#view-search"), "the search page")
    find(browser, "#q-go").click()
    wait(browser, visible("#error"), "the empty-search message")
    assert "Type what to search for" in find(browser, "#error").text

    browser.get(f"{served}/console/#/u/{name}/nonsense")
    wait(browser, visible("#view-notfound"), "the not-found page")
    assert "Nothing here" in find(browser, "#view-notfound").text
    screens(browser, screenshots, "notfound")
    find(browser, "#notfound-home").click()
    wait(browser, lambda d: len(rows(d)) == 2, "back to the list")
    time.sleep(0)  # nothing left to wait for


def test_sessions_written_through_messages_are_listed_and_a_session_can_be_deleted(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 4 (sessions written through /messages did not appear) and 7 (deleting a session)."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "notes", ("n1", "I keep bees on my rooftop"), ("n2", "我的猫叫咪咪。"))
    turn = {
        "model": "mnemo",
        "session_id": "chat1",
        "messages": [{"role": "user", "content": "我下周去成都出差"}],
    }
    assert api.http.post("/v1/chat/completions", json=turn).status_code == 200
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, visible("#view-memories"), "signed in")
    browser.get(f"{served}/console/#/u/{name}/sessions")
    wait(browser, visible("#session-list tr[data-session='notes']"), "the session from /messages")
    notes = find(browser, "#session-list tr[data-session='notes']")
    assert "2" in notes.text
    assert not notes.find_elements(By.CSS_SELECTOR, "a")  # nothing short-term to open
    find(browser, "#session-list a[data-session='chat1']").click()
    wait(browser, visible("#session-view"), "the session")
    set_lang(browser, "zh")
    assert "用户" in find(browser, "#sv-buffer").text  # roles in the UI's language
    screens(browser, screenshots, "sessions")
    find(browser, "#session-list tr[data-session='chat1'] button.delete-session").click()
    wait(browser, visible("#confirm"), "the confirmation")
    find(browser, "#confirm-yes").click()
    wait(browser, visible("#notice"), "the notice")
    assert "chat1" in find(browser, "#notice").text
    assert not all_of(browser, "#session-list a[data-session='chat1']")
    assert api.http.get(f"/v1/sessions/{name}").json()["session_ids"] == []


def title_is(said: str) -> Callable[[webdriver.Chrome], bool]:
    return lambda d: bool(find(d, "#ep-title").text == said)


def receipt_for(user: str) -> Callable[[webdriver.Chrome], bool]:
    return lambda d: bool(find(d, "#er-title").text.endswith(user))


def test_erasing_reads_as_a_receipt_and_an_unknown_id_says_nothing_was_held(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 5: the erase receipt was a raw JSON dump, and erasing a user id that never existed reported
    success, so a typo looked like a completed erasure."""
    name = f"u{uuid.uuid4().hex[:8]}"
    Api(served, token(name)).store(name, "s1", ("m", "I keep bees on my rooftop"))
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    find(browser, "#nav-erase").click()
    wait(browser, visible("#view-erase"), "the erase page")
    for user, held in ((name + "-typo", False), (name, True)):
        type_into(browser, "#er-user", user)
        find(browser, "#er-preview").click()
        said = f"Erasing {user} deletes:" if held else f"Nothing was held for {user}"
        wait(browser, title_is(said), f"the preview of {user}")
        type_into(browser, "#er-confirm", user)
        find(browser, "#er-go").click()
        wait(browser, receipt_for(user), f"the receipt for {user}")
        title = find(browser, "#er-title").text
        assert ("Nothing was held" in title) is not held
        assert "{" not in find(browser, "#er-receipt").text
        if not held:
            assert "typo" in find(browser, "#er-summary").text
            screens(browser, screenshots, "erase-unknown")
    assert find(browser, "#er-stores tr[data-store='chroma'] td.deleted").text == "1"
    screens(browser, screenshots, "erase-receipt")


def chat_turn(driver: webdriver.Chrome, text: str) -> webdriver.remote.webelement.WebElement:
    """Send one message in the playground; the answer's list item once its stream ended."""
    n = len(all_of(driver, "#chat-log li.assistant"))
    type_into(driver, "#chat-input", text)
    find(driver, "#chat-send").click()
    # read in one script: the log is redrawn on every chunk, so an element found first may be gone
    wait(
        driver,
        lambda d: d.execute_script(
            "const a = document.querySelectorAll('#chat-log li.assistant');"
            "return a.length === arguments[0] && a[a.length - 1].getAttribute('aria-busy') === 'false'",
            n + 1,
        ),
        f"the answer to {text!r}",
    )
    return all_of(driver, "#chat-log li.assistant")[-1]


def test_the_chat_playground_streams_and_shows_what_was_recalled_and_the_prompt(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 7: no chat playground, and no way to see which memories the bot recalled in a turn and why.
    A turn streams (several chunks drawn as they come), lists the recalled memories with relevance as a
    word and a bar, and shows the prompt the model was sent on demand; a 300-character token in a
    recalled memory and in the prompt never widens the page."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("home", "我住在杭州，记住这个"), ("url", f"My reading list is at {LONG_URL}"))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) == 2, "the memories")
    set_lang(browser, "en")
    find(browser, "#nav-chat").click()
    wait(browser, visible("#view-chat"), "the chat playground")
    assert find(browser, "#chat-empty").is_displayed()
    screens(browser, screenshots, "chat-empty")

    answer = chat_turn(browser, "Where is my reading list?")
    assert int(answer.get_attribute("data-chunks") or 0) >= 2, "the answer came as one piece, not streamed"
    assert "reading list" in answer.find_element(By.CSS_SELECTOR, ".reply").text
    recalled = answer.find_elements(By.CSS_SELECTOR, ".recalled li.recalled-memory")
    url = next(li for li in recalled if LONG_URL in li.text)
    assert url.find_element(By.CSS_SELECTOR, ".rel-word").text in {"strong", "possible", "weak"}
    assert re.fullmatch(r"\d{1,3}%", url.find_element(By.CSS_SELECTOR, ".score").text)
    assert url.find_element(By.CSS_SELECTOR, "meter").get_attribute("value")
    assert "Memories recalled" in answer.find_element(By.CSS_SELECTOR, ".recalled h2").text
    prompt = answer.find_element(By.CSS_SELECTOR, "details.prompt")
    assert not prompt.find_element(By.CSS_SELECTOR, "ol").is_displayed()  # on demand only
    prompt.find_element(By.CSS_SELECTOR, "summary").click()
    system = answer.find_element(By.CSS_SELECTOR, ".prompt-messages li[data-role='system'] pre").text
    assert "[long-term memories]" in system
    assert LONG_URL[:60] in system
    said = answer.find_element(By.CSS_SELECTOR, ".prompt-messages li[data-role='user']:last-child pre")
    assert said.text == "Where is my reading list?"

    answer = chat_turn(browser, "我住在哪个城市？")
    home = next(li for li in answer.find_elements(By.CSS_SELECTOR, "li.recalled-memory") if "杭州" in li.text)
    assert home.find_element(By.CSS_SELECTOR, ".rel-word").text == "strong"
    set_lang(browser, "zh")  # the turn is said again in Chinese, the prompt still open in the first turn
    answer = all_of(browser, "#chat-log li.assistant")[-1]
    assert "回忆起" in answer.find_element(By.CSS_SELECTOR, ".recalled h2").text
    assert {e.text for e in all_of(browser, "li.recalled-memory .rel-word")} <= {"强", "可能", "弱"}
    assert (
        all_of(browser, "#chat-log li.assistant")[0]
        .find_element(By.CSS_SELECTOR, "details.prompt ol")
        .is_displayed()
    )
    screens(browser, screenshots, "chat")
    full_page(browser, screenshots, "chat", "en", 1400)
    full_page(browser, screenshots, "chat", "zh", 390)

    # nothing typed: said, nothing sent
    find(browser, "#chat-send").click()
    wait(browser, visible("#error"), "the empty-message message")
    assert "Type a message first" in find(browser, "#error").text
    assert len(all_of(browser, "#chat-log li.assistant")) == 2
    # a user chatting as themselves is not in the audit trail
    admin = Api(served, token("ops", role="admin"))
    entries = admin.http.get("/v1/audit", params={"user_id": name, "action": "chat"}).json()["items"]
    assert entries == []


def test_an_admin_chats_as_a_user_and_it_is_audited(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Issue 25: chat as a user (admin), audited."""
    name = f"u{uuid.uuid4().hex[:8]}"
    Api(served, token(name)).store(name, "s1", ("bees", "I keep bees on my rooftop"))
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    browser.get(f"{served}/console/#/u/{name}/chat")
    wait(browser, visible("#view-chat"), "the chat playground")
    set_lang(browser, "en")
    assert f"You are chatting as {name}" in find(browser, "#chat-help").text
    answer = chat_turn(browser, "What do I keep on my rooftop?")
    assert any("bees" in li.text for li in answer.find_elements(By.CSS_SELECTOR, "li.recalled-memory"))
    admin = Api(served, token("ops", role="admin"))
    entries = admin.http.get("/v1/audit", params={"user_id": name, "action": "chat"}).json()["items"]
    assert [(e["actor"], e["details"]["session_id"]) for e in entries] == [("ops", "console")]
    screens(browser, screenshots, "chat-as-user")


def test_an_admin_finds_a_user_by_id_prefix_and_opens_them(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 7: finding a user as an admin. Users found by the first characters of their id, each opened
    from the list; the search is in the audit trail."""
    stem = f"f{uuid.uuid4().hex[:6]}"
    long_id = stem + "-" + "x9" * 60  # 128 characters: the longest id, unbroken
    for user in (f"{stem}-anna", f"{stem}-bob", long_id):
        Api(served, token(user)).store(user, "s1", ("m", f"{user} keeps bees on the rooftop"))
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    set_lang(browser, "en")
    find(browser, "#find-go").click()
    wait(browser, visible("#error"), "the empty-prefix message")
    assert "Type a user id" in find(browser, "#error").text
    type_into(browser, "#open-user", stem)
    find(browser, "#find-go").click()
    wait(browser, lambda d: len(all_of(d, "#found-list tbody tr")) == 3, "the three users")
    assert [r.get_attribute("data-user") for r in all_of(browser, "#found-list tbody tr")] == sorted(
        [f"{stem}-anna", f"{stem}-bob", long_id]
    )
    assert f"3 users whose id starts with “{stem}”" in find(browser, "#found-summary").text
    screens(browser, screenshots, "find-users")
    set_lang(browser, "zh")
    assert "个" in find(browser, "#found-summary").text
    set_lang(browser, "en")
    type_into(browser, "#open-user", stem + "-zz")
    find(browser, "#find-go").click()
    wait(browser, lambda d: "No user id starts with" in find(d, "#found-summary").text, "nothing found")
    type_into(browser, "#open-user", stem + "-a")
    find(browser, "#find-go").click()
    wait(browser, lambda d: len(all_of(d, "#found-list tbody tr")) == 1, "anna only")
    find(browser, "#found-list a.open-user").click()
    wait(browser, lambda d: len(rows(d)) == 1, "anna's memories")
    assert find(browser, "#view-memories .subject").text == f"{stem}-anna"
    admin = Api(served, token("ops", role="admin"))
    found = admin.http.get("/v1/audit", params={"action": "find"}).json()["items"]
    assert [(e["user_id"], e["count"]) for e in found][:3] == [(stem + "-a", 1), (stem + "-zz", 0), (stem, 3)]


def test_an_erase_is_previewed_per_store_then_confirmed_by_typing_the_id(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    """Why 7: a preview of what an erase will remove (counts per store) and a typed confirmation."""
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("a", "I keep bees on my rooftop"), ("b", f"My reading list is at {LONG_URL}"))
    turn = {
        "model": "mnemo",
        "session_id": "chat1",
        "messages": [{"role": "user", "content": "我下周去成都出差"}],
    }
    assert api.http.post("/v1/chat/completions", json=turn).status_code == 200
    wait(browser, lambda _: len(api.contents(name)) == 3, "the chat turn in long-term memory")
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    type_into(browser, "#open-user", name)
    find(browser, "#find-go").click()
    wait(browser, lambda d: len(all_of(d, "#found-list tbody tr")) == 1, "the user")
    find(browser, f"#found-list a[data-user='{name}']").click()  # erase, from the found user
    wait(browser, visible("#view-erase"), "the erase page")
    assert find(browser, "#er-user").get_attribute("value") == name
    set_lang(browser, "en")
    find(browser, "#er-preview").click()
    wait(browser, visible("#er-preview-box"), "the preview")
    counts = {
        r.get_attribute("data-store"): r.find_element(By.CSS_SELECTOR, "td.num").text
        for r in all_of(browser, "#ep-stores tbody tr")
    }
    assert counts["hot"] == "3"
    assert counts["sessions"] == "1"
    assert counts["buffer"] == "2"
    assert int(counts["redis_keys"]) >= 4
    assert "3 long-term memories" in find(browser, "#ep-summary").text
    assert f"Type “{name}” again" in find(browser, "label[for='er-confirm']").text
    assert not find(browser, "#er-go").is_enabled()
    type_into(browser, "#er-confirm", name[:-1])
    assert not find(browser, "#er-go").is_enabled()
    type_into(browser, "#er-confirm", name)
    assert find(browser, "#er-go").is_enabled()
    screens(browser, screenshots, "erase-preview")
    full_page(browser, screenshots, "erase-preview", "zh", 1400)
    full_page(browser, screenshots, "erase-preview", "en", 390)
    assert api.contents(name), "nothing is erased by a preview"
    # another id typed: the preview (and the button) go
    type_into(browser, "#er-user", name + "x")
    assert not find(browser, "#er-preview-box").is_displayed()
    type_into(browser, "#er-user", name)
    find(browser, "#er-preview").click()
    wait(browser, visible("#er-preview-box"), "the preview again")
    type_into(browser, "#er-confirm", name)
    find(browser, "#er-go").click()
    wait(browser, receipt_for(name), "the receipt")
    assert not find(browser, "#er-preview-box").is_displayed()
    assert find(browser, "#er-stores tr[data-store='redis_keys'] td.deleted").text == counts["redis_keys"]
    assert api.contents(name) == []
    admin = Api(served, token("ops", role="admin"))
    audit = admin.http.get("/v1/audit", params={"user_id": name}).json()["items"]
    assert [e["action"] for e in audit][:3] == ["erase", "erase_preview", "erase_preview"]
