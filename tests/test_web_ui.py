"""The web UI (web/), used the way a person would: headless Chromium types into
the page served by `langgraph dev`, and the page shows and forgets memory.

Needs Debian's ``chromium`` and the ``playwright`` package (test extra); CI
installs both. Outside CI the test is skipped when Chromium is missing.
"""

from __future__ import annotations

import os
import shutil

import pytest

from tests.devserver import DevServer

pytestmark = pytest.mark.e2e

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def browser():
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("CI must provide Chromium for the web UI test (.ci/run installs it)")
        pytest.skip("Chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
            ],
        )
        yield browser
        browser.close()


def test_chat_shows_and_forgets_memory(browser, workdir, server_env, stub, tmp_path):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1100, "height": 650})
        page.goto(f"{server.url}/ui")
        page.fill("#text", "hello")
        page.click("form button")
        assert "Enter a user id first" in page.inner_text("#log")  # no shared default user

        page.fill("#user", "zhou.wang@x.com")
        page.dispatch_event("#user", "change")
        page.fill("#text", "Hi, I'm Zhou and I live in Hangzhou. Remember that I have a parrot.")
        page.click("form button")
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Hangzhou')", timeout=60_000)
        page.wait_for_function(
            "document.querySelector('#notes').textContent.includes('I have a parrot')", timeout=30_000
        )
        assert page.inner_text(".msg.ai").startswith("ok")

        page.fill("#text", "What is your refund policy?")
        page.click("form button")
        page.wait_for_function("document.querySelectorAll('.msg.ai').length >= 2", timeout=60_000)
        assert "refund" in page.query_selector_all(".msg.ai")[-1].inner_text()
        page.screenshot(path=str(tmp_path / "ui.png"))

        # Forget the city from the side panel: it is gone from the store too.
        page.click("#profile div:has-text('city') button")
        page.wait_for_function("!document.querySelector('#profile').textContent.includes('Hangzhou')", timeout=30_000)
        page.reload()
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Zhou')", timeout=30_000)
        assert "Hangzhou" not in page.inner_text("#profile")

        # Forget the note the same way: gone from the panel, and after a reload.
        page.click("#notes li:has-text('I have a parrot') button")
        page.wait_for_function("!document.querySelector('#notes').textContent.includes('parrot')", timeout=30_000)
        page.reload()
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Zhou')", timeout=30_000)
        page.wait_for_function("document.querySelector('#notes').textContent.includes('(none)')", timeout=30_000)
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
