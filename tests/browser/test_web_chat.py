"""The sample web chat (examples/web-chat) in a real headless Chromium, served by a static server on its
own origin, against mnemo served on another (uvicorn, 2 workers) that allows exactly that origin: the
user signs in with a token, the answer streams in pieces, a turn in a new session shows what mnemo
recalled from the first, in English and in Chinese. The same page from an origin mnemo does not allow is
refused by the browser (its fetch fails; the page says so). A missing browser or Node fails the suite.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis
from selenium import webdriver
from selenium.webdriver.common.by import By

from harness.services import ServerProcess, free_port
from tests.browser.test_console import find, start_chromium, type_into, visible, wait
from tests.conftest import TEST_SECRET
from tests.node import ROOT, built_ts_client
from tests.served import serve

pytestmark = [pytest.mark.integration, pytest.mark.standalone]
REDIS_DB = 6
WEB_CHAT = ROOT / "examples" / "web-chat"


def static_server(port: int, log: Path) -> subprocess.Popen[bytes]:
    """The folder as `python -m http.server` serves it: what the README tells a developer to run."""
    out = log.open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(WEB_CHAT)],
        stdout=out,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/mnemo-client/index.js", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.terminate()
    pytest.fail(f"the static server did not serve the page and the built client: {log.read_text()[-2000:]}")


class Origins:
    def __init__(self, api: str, allowed: str, other: str) -> None:
        self.api, self.allowed, self.other = api, allowed, other


@pytest.fixture(scope="module")
def origins(
    tmp_path_factory: pytest.TempPathFactory, redis_server: ServerProcess, chroma_server: ServerProcess
) -> Iterator[Origins]:
    built_ts_client()
    where = tmp_path_factory.mktemp("web-chat")
    allowed_port, other_port = free_port(), free_port()
    allowed = f"http://127.0.0.1:{allowed_port}"
    env = {
        "RATE_LIMIT_PER_MINUTE": "100000",
        "REDIS_URL": f"{redis_server.url}/{REDIS_DB}",
        "CORS_ALLOW_ORIGINS": allowed,
    }
    pages = [
        static_server(allowed_port, where / "allowed.log"),
        static_server(other_port, where / "other.log"),
    ]
    try:
        with serve(where, redis_server, chroma_server, env) as api:
            yield Origins(api, allowed, f"http://127.0.0.1:{other_port}")
    finally:
        for page in pages:
            page.terminate()
            page.wait(timeout=10)
        redis.Redis.from_url(f"{redis_server.url}/{REDIS_DB}").flushdb()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    driver = start_chromium(tmp_path_factory.mktemp("web-chat-downloads"), "en-US")
    yield driver
    driver.quit()


def token(sub: str) -> str:
    from app.http.auth import TokenCodec

    return TokenCodec(TEST_SECRET).mint(sub, ttl_seconds=900)


def open_app(driver: webdriver.Chrome, page: str, api: str, lang: str) -> None:
    driver.get("about:blank")
    driver.get(f"{page}/?api={api}&lang={lang}")
    wait(
        driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true", "the app"
    )


def sign_in(driver: webdriver.Chrome, bearer: str) -> None:
    type_into(driver, "#token", bearer)
    find(driver, "#signin-button").click()


def say(driver: webdriver.Chrome, text: str) -> webdriver.remote.webelement.WebElement:
    before = len(driver.find_elements(By.CSS_SELECTOR, ".turn.assistant"))
    type_into(driver, "#input", text)
    find(driver, "#send").click()
    wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, ".turn.assistant")) > before, "the answer")
    turn = driver.find_elements(By.CSS_SELECTOR, ".turn.assistant")[-1]
    wait(driver, lambda _: turn.get_attribute("data-done") is not None, "the turn to finish")
    assert turn.get_attribute("data-done") == "true", find(driver, "#status").text
    return turn


def remembered(api: str, user: str, bearer: str, needle: str) -> bool:
    page = httpx.get(
        f"{api}/v1/memory/{user}/list", params={"limit": 100}, headers={"Authorization": f"Bearer {bearer}"}
    ).json()
    return any(needle in m["content"] for m in page["items"])


def shoot(driver: webdriver.Chrome, where: Path, name: str) -> None:
    """The page at a desktop and a phone width (a person looks at both: README, docs/clients.md)."""
    for width, height, form in ((1280, 900, "desktop"), (390, 844, "phone")):
        driver.set_window_size(width, height)
        time.sleep(0.2)
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"{name} at {width}px scrolls sideways by {overflow}px"
        driver.save_screenshot(str(where / f"{name}-{form}.png"))
    driver.set_window_size(1280, 900)


class TestWebChat:
    def test_chat_streams_and_recall_shows_across_sessions_in_en_and_zh(
        self, browser: webdriver.Chrome, origins: Origins, screenshots: Path
    ) -> None:
        user, bearer = "web-alice", token("web-alice")
        open_app(browser, origins.allowed, origins.api, "en")
        assert find(browser, "h1").text == "mnemo web chat"
        sign_in(browser, bearer)
        wait(browser, visible("#chat"), "the chat panel")
        assert find(browser, "#user").text == user
        assert find(browser, "#console-link").get_attribute("href") == f"{origins.api}/console/"

        first = say(browser, "Remember: my favourite tea is oolong.")
        assert int(first.get_attribute("data-chunks") or 0) > 1  # it arrived in pieces
        assert "offline" in first.find_element(By.CSS_SELECTOR, ".text").text
        deadline = time.monotonic() + 30
        while not remembered(origins.api, user, bearer, "oolong"):
            assert time.monotonic() < deadline, "the first turn was not remembered"
            time.sleep(0.3)

        first_session = find(browser, "#session").text
        find(browser, "#new-session").click()
        assert find(browser, "#session").text != first_session
        second = say(browser, "Which tea do I like?")
        recalled = [li.text for li in second.find_elements(By.CSS_SELECTOR, ".recall li")]
        assert any("oolong" in r for r in recalled), recalled
        assert "Recalled for this turn" in second.find_element(By.CSS_SELECTOR, ".recall").text
        shoot(browser, screenshots, "web-chat-en")

        find(browser, "#lang").click()  # 中文
        assert find(browser, "h1").text == "mnemo 网页聊天"
        assert find(browser, "#new-session").text == "新会话"
        find(browser, "#new-session").click()
        third = say(browser, "我喜欢喝什么茶？")
        assert "离线" in third.find_element(By.CSS_SELECTOR, ".text").text  # the reply is in Chinese too
        recall = third.find_element(By.CSS_SELECTOR, ".recall")
        assert "本轮回忆起的记忆" in recall.text
        assert any(
            "oolong" in li.text for li in recall.find_elements(By.CSS_SELECTOR, "li")
        )  # across languages
        shoot(browser, screenshots, "web-chat-zh")

    def test_a_bad_token_shows_mnemos_error_code(self, browser: webdriver.Chrome, origins: Origins) -> None:
        open_app(browser, origins.allowed, origins.api, "zh")
        bad = token("web-bob")[:-4] + "AAAA"  # a JWT with a broken signature
        sign_in(browser, bad)
        wait(
            browser,
            lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "error",
            "an error",
        )
        assert "401 invalid_token" in find(browser, "#status").text  # readable: CORS headers on the 401
        assert "mnemo 返回" in find(browser, "#status").text

    def test_a_page_from_an_origin_not_allowed_is_refused_by_the_browser(
        self, browser: webdriver.Chrome, origins: Origins
    ) -> None:
        open_app(browser, origins.other, origins.api, "en")
        outcome = browser.execute_async_script(
            """const done = arguments[arguments.length - 1];
            fetch(arguments[0] + "/v1/sessions/web-carol", {headers: {Authorization: "Bearer " + arguments[1]}})
              .then(r => done("read " + r.status), e => done(e.name + ": " + e.message));""",
            origins.api,
            token("web-carol"),
        )
        assert outcome.startswith("TypeError"), outcome  # the preflight was refused: nothing to read
        sign_in(browser, token("web-carol"))
        wait(
            browser,
            lambda d: d.find_element(By.ID, "status").get_attribute("data-state") == "error",
            "an error",
        )
        assert "CORS_ALLOW_ORIGINS" in find(browser, "#status").text
        assert origins.other in find(browser, "#status").text
        # the same call from the allowed origin is read
        open_app(browser, origins.allowed, origins.api, "en")
        outcome = browser.execute_async_script(
            """const done = arguments[arguments.length - 1];
            fetch(arguments[0] + "/v1/sessions/web-carol", {headers: {Authorization: "Bearer " + arguments[1]}})
              .then(r => done("read " + r.status + " " + r.headers.get("x-request-id")), e => done(e.name));""",
            origins.api,
            token("web-carol"),
        )
        assert outcome.startswith("read 200 "), outcome
