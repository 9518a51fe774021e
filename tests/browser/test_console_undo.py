"""Issue 42, a way back: the console's "Recently deleted" lists what delete and forget removed and
restores it; its dialogs keep focus (Tab cycles inside, Escape closes, focus returns to the opener);
the erase receipt counts the sessions it removed. In a real headless Chromium against a served mnemo,
at 1,400 and 390 px in English and Chinese, with screenshots, axe-core and the raw-words walk."""

from __future__ import annotations

import uuid
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.remote.webelement import WebElement

from tests.browser.test_console import Api, all_of, find, open_console, token, type_into, visible, wait
from tests.browser.test_console_a11y import accessible, axe_source  # noqa: F401 (axe_source: a fixture)
from tests.browser.test_console_product import receipt_for, rows, screens, set_lang, title_is
from tests.browser.test_console_words import Walk, closed


def deleted_rows(driver: webdriver.Chrome) -> list[WebElement]:
    return all_of(driver, "#deleted-list tbody tr[data-id]")


def active_id(driver: webdriver.Chrome) -> str:
    return str(driver.execute_script("const e = document.activeElement; return e ? e.id || e.className : ''"))


def inside(driver: webdriver.Chrome, dialog: str) -> bool:
    return bool(
        driver.execute_script(
            "return document.querySelector(arguments[0]).contains(document.activeElement)", dialog
        )
    )


def test_recently_deleted_lists_and_restores_in_both_languages(
    browser: webdriver.Chrome,
    served: str,
    screenshots: Path,
    axe_source: str,  # noqa: F811
) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    api.store(name, "s1", ("zh", "我的护照放在蓝色箱子里"))
    api.store(name, "s2", ("en", "My bike is a red Bianchi"))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) == 2, "the two memories")
    next(r for r in rows(browser) if "护照" in r.text).find_element(By.CSS_SELECTOR, "button.delete").click()
    wait(browser, visible("#confirm"), "the delete confirmation")
    assert "Recently deleted" in find(browser, "#confirm-text").text
    find(browser, "#confirm-yes").click()
    wait(browser, visible("#notice"), "the notice")
    assert "Recently deleted" in find(browser, "#notice").text
    forgot = api.http.post(f"/v1/memory/{name}/forget", json={"session_id": "s2", "dry_run": False})
    assert forgot.json()["count"] == 1

    find(browser, "#nav-deleted").click()
    wait(browser, lambda d: len(deleted_rows(d)) == 2, "the two deleted memories")
    assert find(browser, "#dl-total").text == "2 memories can be restored"
    assert "7 days" in find(browser, "#dl-help").text
    hows = {
        r.find_element(By.CSS_SELECTOR, ".text").text: r.find_element(By.CSS_SELECTOR, "td.how").text
        for r in deleted_rows(browser)
    }
    assert hows == {"我的护照放在蓝色箱子里": "deleted", "My bike is a red Bianchi": "forgotten"}
    set_lang(browser, "zh")
    assert find(browser, "#dl-total").text == "2 条记忆可以恢复"
    assert "7 天" in find(browser, "#dl-help").text
    assert {r.find_element(By.CSS_SELECTOR, "td.how").text for r in deleted_rows(browser)} == {"删除", "遗忘"}
    assert find(browser, "#nav-deleted").text == "最近删除"
    set_lang(browser, "en")
    screens(browser, screenshots, "recently-deleted")
    accessible(browser, axe_source, "recently deleted")
    walk = Walk(browser, screenshots)
    walk.read("recently-deleted")
    walk.done()

    zh = next(r for r in deleted_rows(browser) if "护照" in r.text)
    zh.find_element(By.CSS_SELECTOR, "button.restore").click()
    wait(browser, lambda d: len(deleted_rows(d)) == 1, "one left")
    assert "Restored" in find(browser, "#notice").text
    assert "我的护照放在蓝色箱子里" in find(browser, "#notice").text
    assert find(browser, "#dl-total").text == "1 memory can be restored"
    screens(browser, screenshots, "restored")
    assert api.contents(name) == ["我的护照放在蓝色箱子里"]
    found = api.http.post(f"/v1/memory/{name}/search", json={"query": "我的护照在哪里？"}).json()
    assert "护照" in found["results"][0]["content"]

    deleted_rows(browser)[0].find_element(By.CSS_SELECTOR, "button.restore").click()
    wait(browser, lambda d: not deleted_rows(d), "nothing left")
    assert find(browser, "#deleted-list tbody").text == "Nothing was deleted recently."
    set_lang(browser, "zh")
    assert find(browser, "#deleted-list tbody").text == "最近没有删除的记忆。"
    set_lang(browser, "en")
    find(browser, "#nav-memories").click()
    wait(browser, lambda d: len(rows(d)) == 2, "both memories back")


def test_a_dialog_keeps_focus_escape_closes_it_and_focus_returns(
    browser: webdriver.Chrome, served: str
) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    Api(served, token(name)).store(name, "s1", ("m", "我养了一只猫，叫咪咪"))
    open_console(browser, served, f"#token={token(name)}")
    wait(browser, lambda d: len(rows(d)) == 1, "the memory")
    for button, dialog in (
        ("button.delete", "#confirm"),
        ("button.edit", "#editor"),
        ("button.history", "#history"),
    ):
        opener = rows(browser)[0].find_element(By.CSS_SELECTOR, button)
        opener.click()
        wait(browser, visible(dialog), dialog)
        if not inside(
            browser, dialog
        ):  # the editor and the history load first; the confirmation focuses Cancel
            browser.switch_to.active_element.send_keys(Keys.TAB)
        assert inside(browser, dialog), (dialog, active_id(browser))
        for _ in range(12):  # more than any dialog holds: Tab comes round, never leaving it
            browser.switch_to.active_element.send_keys(Keys.TAB)
            assert inside(browser, dialog), (dialog, active_id(browser))
        for _ in range(12):
            browser.switch_to.active_element.send_keys(Keys.SHIFT, Keys.TAB)
            assert inside(browser, dialog), (dialog, active_id(browser))
        browser.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait(browser, closed(dialog), f"{dialog} closed")
        assert not find(browser, "#backdrop").is_displayed()
        assert browser.switch_to.active_element == opener, (dialog, active_id(browser))  # back to the opener


def test_the_erase_receipt_counts_the_sessions_it_removed(
    browser: webdriver.Chrome, served: str, screenshots: Path
) -> None:
    name = f"u{uuid.uuid4().hex[:8]}"
    api = Api(served, token(name))
    for session in ("a", "b"):
        turn = {
            "model": "mnemo",
            "session_id": session,
            "messages": [{"role": "user", "content": "我住在杭州"}],
        }
        assert api.http.post("/v1/chat/completions", json=turn).status_code == 200
    open_console(browser, served, f"#token={token('ops', role='admin')}")
    wait(browser, visible("#view-home"), "the admin home")
    find(browser, "#nav-erase").click()
    wait(browser, visible("#view-erase"), "the erase page")
    type_into(browser, "#er-user", name)
    find(browser, "#er-preview").click()
    wait(browser, title_is(f"Erasing {name} deletes:"), "the preview")
    type_into(browser, "#er-confirm", name)
    find(browser, "#er-go").click()
    wait(browser, receipt_for(name), "the receipt")
    row = find(browser, "#er-stores tr[data-store='sessions']")
    assert row.find_element(By.CSS_SELECTOR, "td.deleted").text == "2"
    assert "sessions" in row.text
    set_lang(browser, "zh")
    assert "会话" in find(browser, "#er-stores tr[data-store='sessions']").text
    set_lang(browser, "en")
    screens(browser, screenshots, "erase-receipt-sessions")
