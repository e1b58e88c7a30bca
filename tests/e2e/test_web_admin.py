"""The admin console (web/admin.html, ``/ui/admin``) in headless Chromium against
``./scripts/dev``: users' feedback for everyone waits as proposals, shown as text
(never markup); an admin approves, rejects and rolls back from the page, and
only then does another user's prompt carry the approved text."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from harness.devserver import DevServer, system_prompts, token

pytestmark = pytest.mark.e2e

MARKUP = "keep answers to two sentences (<img src=x onerror=\"document.title='pwned'\"> Zoe)"
SHARED_TEXT = "Keep answers to two sentences."


def say(server: DevServer, user_id: str, text: str) -> None:
    """One run of the agent through the SDK, as the user's app does."""
    sdk = get_sync_client(url=server.url, headers={"Authorization": f"Bearer {token(user_id)}"})
    thread = sdk.threads.create()["thread_id"]
    messages: list[Any] = [{"role": "user", "content": text}]
    sdk.runs.wait(thread, "agent", input={"messages": messages}, context={"user_id": user_id})


def rows(page, table: str) -> list[str]:
    return [row.inner_text() for row in page.query_selector_all(f"#{table} tr")]


def sign_in(page, value: str) -> None:
    page.fill("#token", value)
    page.dispatch_event("#token", "change")


def test_an_admin_decides_proposals_and_rolls_back_from_the_page(browser, workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        say(server, "u_zoe", f"Feedback for everyone: {MARKUP}")
        say(server, "u_kim", "Feedback for everyone: greet every customer in French")
        page = browser.new_page(viewport={"width": 1300, "height": 800})
        page.goto(f"{server.url}/ui/admin")

        sign_in(page, token("u_zoe"))  # a user token: the server refuses it
        page.wait_for_function("document.querySelector('#error').textContent.includes('need an admin token')")
        assert "(not an admin)" in page.inner_text("#who") and rows(page, "proposals") == []

        sign_in(page, token("ops", admin=True))
        page.wait_for_function("document.querySelectorAll('#proposals tr[data-id]').length === 2")
        zoe = page.locator("#proposals tr:has-text('u_zoe')")  # a locator: found again after each refresh
        assert "onerror" in zoe.inner_text() and SHARED_TEXT in zoe.inner_text()  # the feedback, as text...
        assert page.query_selector("#proposals img") is None and page.title() == "mnemo admin"  # ...never markup
        # The versions are fetched apart from the proposals: wait for them, not for the proposals.
        page.wait_for_function(
            "document.querySelector('#versions').textContent.includes('(no learned instructions yet)')"
        )

        # Before approval, another user's prompt has none of it.
        say(server, "u_li", "hello")
        assert "Hard rules" in system_prompts(stub)[-1] and "two sentences" not in system_prompts(stub)[-1]

        zoe.locator("button:has-text('Approve')").click()
        page.wait_for_function("document.querySelectorAll('#proposals tr[data-id]').length === 1")
        page.wait_for_function("document.querySelector('#versions').textContent.includes('1 (current)')")
        assert SHARED_TEXT in page.inner_text("#versions tr[data-version='1']")
        assert "ops" in page.inner_text("#versions tr[data-version='1']")  # who approved it
        say(server, "u_li", "hello again")
        prompt = system_prompts(stub)[-1]
        assert SHARED_TEXT in prompt and "Zoe" not in prompt and "onerror" not in prompt

        kim = page.locator("#proposals tr:has-text('u_kim')")
        kim.locator("input.reason").fill("not our style")
        kim.locator("button:has-text('Reject')").click()
        page.wait_for_function("document.querySelector('#proposals').textContent.includes('(none)')")
        page.select_option("#status", "all")
        page.wait_for_function("document.querySelectorAll('#proposals tr[data-id]').length === 2")
        assert "rejected by ops: not our style" in page.inner_text("#proposals tr:has-text('u_kim')")
        assert "approved by ops" in page.inner_text("#proposals tr:has-text('u_zoe')")

        # A second approved version, then a rollback to the first from the page.
        say(server, "u_kim", "Feedback for everyone: answer in a friendly tone")
        page.select_option("#status", "pending")
        page.wait_for_function("document.querySelectorAll('#proposals tr[data-id]').length === 1")
        page.click("#proposals button:has-text('Approve')")
        page.wait_for_function("document.querySelector('#versions').textContent.includes('2 (current)')")
        page.click("#versions tr[data-version='1'] button:has-text('Roll back to this')")
        page.wait_for_function("document.querySelector('#versions').textContent.includes('3 (current)')")
        assert SHARED_TEXT in page.inner_text("#versions tr[data-version='3']")
        say(server, "u_li", "hello once more")
        assert SHARED_TEXT in system_prompts(stub)[-1] and "friendly" not in system_prompts(stub)[-1]
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
