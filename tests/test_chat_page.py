"""The chat page in a real browser: headless Chromium driven by Playwright.

It types messages, watches the reply arrive piece by piece, stops a reply, reads the
server's 503 and 413 in words, in Chinese and in English, on a phone-sized window.
Screenshots go to build/test-artifacts/. Skips (saying why) where Playwright or a
Chromium is missing: `.ci/run` installs both when it runs as root.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serving_helpers import ScriptedEngine, running, scripted_engine

from framework.http_server import ChatServer

pytestmark = pytest.mark.slow  # scheduled first (tests/conftest.py)

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "build" / "test-artifacts"
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 760}


def chromium() -> str:
    for name in (os.environ.get("MINILLM_CHROMIUM", ""), "chromium", "chromium-browser"):
        if name and (path := shutil.which(name)):
            return path
    pytest.skip("no Chromium here (apt-get install chromium, or set MINILLM_CHROMIUM)")


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    executable = chromium()
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as p:
        try:
            context = p.chromium.launch_persistent_context(
                str(profile),
                executable_path=executable,
                headless=True,
                args=CHROMIUM_FLAGS,
                viewport=PHONE,
                locale="zh-CN",
            )
        except Exception as e:  # a browser that cannot start here is a skip, not a failure
            pytest.skip(f"Chromium did not start: {str(e).splitlines()[0]}")
        context.set_default_timeout(5000)  # a failing step fails in seconds, not 30
        yield context
        context.close()


@pytest.fixture
def served() -> Iterator[tuple[ChatServer, ScriptedEngine]]:
    engine = scripted_engine(delay=0.03)  # a known reply, one character every 30 ms
    with running(engine, queue_size=0) as server:
        yield server, engine


def open_page(browser: Any, server: ChatServer, lang: str = "zh-CN") -> Any:
    page = browser.new_page()
    page.add_init_script(f"Object.defineProperty(navigator, 'language', {{get: () => '{lang}'}})")
    page.goto(f"http://127.0.0.1:{server.socket.getsockname()[1]}/")
    return page


def shot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"chat_page_{name}.png"))


def say(page: Any, text: str) -> None:
    page.fill("#input", text)
    page.press("#input", "Enter")


def test_a_chinese_message_gets_a_streamed_reply(browser: Any, served: Any) -> None:
    server, engine = served
    page = open_page(browser, server)
    assert page.inner_text("#send") == "发送" and page.inner_text("#model") == "tiny"
    page.click("#settings-title")  # the settings fold away on a small screen
    page.fill("#system", "你是一个简洁的助手。")
    page.fill("#temperature", "0.5")
    page.fill("#max-tokens", "40")
    say(page, "你好，世界")
    # mid-stream: the bubble already shows text while the reply is still being written
    page.wait_for_function(
        "() => { const b = document.querySelector('.msg.assistant.streaming');"
        " return b && b.textContent.length > 0; }",
        timeout=5000,
    )
    assert page.is_enabled("#stop") and not page.is_enabled("#send")
    page.wait_for_selector(".msg.assistant:not(.streaming)", timeout=10000)
    assert page.inner_text(".msg.user") == "你好，世界"
    assert page.inner_text(".msg.assistant") == ScriptedEngine.reply_for("你好，世界")[:40]
    system, messages, settings = engine.calls[-1]
    assert system == "你是一个简洁的助手。" and messages == [("user", "你好，世界")]
    assert (settings.temperature, settings.max_tokens) == (0.5, 40)
    width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert width[0] <= width[1], "nothing overflows a phone-sized window"
    shot(page, "zh_phone")

    say(page, "再说一句")  # the conversation is kept: the second request carries the first
    page.wait_for_function(
        "() => document.querySelectorAll('.msg.assistant').length == 2 &&"
        " !document.querySelector('.streaming')",
        timeout=10000,
    )
    _, messages, _ = engine.calls[-1]
    assert [r for r, _ in messages] == ["user", "assistant", "user"]
    assert messages[0][1] == "你好，世界" and messages[2][1] == "再说一句"
    page.set_viewport_size({"width": 1100, "height": 700})
    shot(page, "zh_desktop")
    page.close()


def test_an_english_message_and_the_stop_button(browser: Any, served: Any) -> None:
    server, _ = served
    page = open_page(browser, server, "en-US")
    assert page.inner_text("#send") == "Send"
    page.click("#settings-title")
    page.fill("#max-tokens", "200")
    say(page, "Hello there")
    page.wait_for_selector(".msg.assistant.streaming", timeout=5000)
    page.click("#stop")
    page.wait_for_selector(".msg.assistant.stopped", timeout=5000)
    assert page.is_enabled("#send") and not page.is_enabled("#stop")
    assert page.get_attribute(".msg.assistant", "data-stopped") == "(stopped)"
    shown = page.inner_text(".msg.assistant")
    assert 0 < len(shown) < len(ScriptedEngine.reply_for("Hello there")), "cut short"
    for _ in range(100):  # the server notices the closed connection at its next write
        if not server.service.gate.busy:
            break
        time.sleep(0.05)
    assert not server.service.gate.busy, "the aborted reply still holds the model"
    page.fill("#max-tokens", "5")
    say(page, "Again")
    page.wait_for_function(
        "() => document.querySelectorAll('.msg.assistant').length == 2 &&"
        " !document.querySelector('.streaming')"
    )
    assert page.query_selector(".msg.error") is None
    shot(page, "en_stopped")
    page.click("#reset")
    assert page.query_selector(".msg") is None
    page.close()


def test_a_busy_server_is_shown_in_words(browser: Any, served: Any) -> None:
    server, _ = served
    page = open_page(browser, server)
    with server.service.gate.turn():  # the model is busy and the queue holds no one
        say(page, "有人吗？")
        error = page.wait_for_selector(".msg.error", timeout=5000)
        text = error.inner_text()
    assert "模型正忙" in text and "503" in text and "2 秒" in text
    assert page.input_value("#input") == "有人吗？", "the unsent message is given back"
    shot(page, "zh_503")
    page.close()


def test_a_message_too_large_is_shown_in_words(browser: Any, served: Any) -> None:
    server, engine = served
    page = open_page(browser, server, "en-US")
    say(page, "x" * 70_000)
    error = page.wait_for_selector(".msg.error", timeout=5000)
    assert "too long" in error.inner_text() and "413" in error.inner_text()
    assert engine.calls == []
    page.close()


# -- the page's fixes: New chat mid-stream, a resent message, max tokens, errors in words ----


def test_new_chat_during_a_reply_leaves_nothing_of_it_in_the_next_request(browser: Any) -> None:
    go_on = threading.Event()
    engine = scripted_engine(delay=0.01, hold=go_on)  # the first reply waits mid-stream
    with running(engine, queue_size=0) as server:
        page = open_page(browser, server)
        say(page, "第一句")
        page.wait_for_function(
            "() => { const b = document.querySelector('.msg.assistant.streaming');"
            " return b && b.textContent.length > 0; }"
        )
        page.click("#reset")
        assert page.query_selector(".msg") is None and page.is_enabled("#send")
        engine.hold = None
        go_on.set()  # the old reply goes on, finds its connection closed, frees the model
        for _ in range(100):
            if not server.service.gate.busy:
                break
            time.sleep(0.05)
        say(page, "第二句")
        page.wait_for_selector(".msg.assistant:not(.streaming)", timeout=10000)
        _, messages, _ = engine.calls[-1]
        assert messages == [("user", "第二句")], "no empty assistant message from the old chat"
        assert len(page.query_selector_all(".msg")) == 2
        page.close()


def test_a_failed_message_sent_again_has_one_bubble(browser: Any, served: Any) -> None:
    server, engine = served
    page = open_page(browser, server)
    with server.service.gate.turn():  # busy: the first try fails with 503
        say(page, "有人吗？")
        page.wait_for_selector(".msg.error")
    assert page.input_value("#input") == "有人吗？"
    page.press("#input", "Enter")  # the same message, sent again
    page.wait_for_selector(".msg.assistant:not(.streaming)", timeout=10000)
    users = [b.inner_text() for b in page.query_selector_all(".msg.user")]
    assert users == ["有人吗？"] and page.query_selector(".msg.error") is None
    assert engine.calls[-1][1] == [("user", "有人吗？")]
    page.close()


def test_max_tokens_is_bounded_by_the_context(browser: Any, served: Any) -> None:
    server, engine = served
    page = open_page(browser, server, "en-US")
    page.wait_for_function("() => document.querySelector('#max-tokens').max === '128'")
    page.click("#settings-title")
    page.fill("#max-tokens", "100000")
    say(page, "hi")
    page.wait_for_selector(".msg.assistant:not(.streaming)", timeout=10000)
    assert engine.calls[-1][2].max_tokens == 128  # the tiny model's context
    page.close()


@pytest.mark.parametrize(
    ("lang", "said", "unsaid"),
    [("zh-CN", ["请求无效", "400", "temperature"], ["must be"]), ("en-US", ["must be"], [])],
)
def test_a_refused_request_is_explained_in_the_pages_language(
    browser: Any, served: Any, lang: str, said: list[str], unsaid: list[str]
) -> None:
    server, engine = served
    page = open_page(browser, server, lang)
    page.click("#settings-title")
    page.fill("#temperature", "5")  # outside 0-2: the server answers 400
    say(page, "你好")
    text = page.wait_for_selector(".msg.error").inner_text()
    assert all(s in text for s in said) and not any(s in text for s in unsaid), text
    assert engine.calls == []
    page.close()
