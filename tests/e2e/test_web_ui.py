"""The web UI (web/), used the way a person would: headless Chromium types into
the page served by `langgraph dev`, and the page shows and forgets memory.

Needs Debian's ``chromium`` and the ``playwright`` package (test extra): the
``browser`` fixture of tests/conftest.py.
"""

from __future__ import annotations

import json

import pytest

from harness.devserver import DevServer

pytestmark = pytest.mark.e2e


def sign_in(page, user_id: str) -> None:
    """Development sign-in, as a person does it: type the user id."""
    page.fill("#user", user_id)
    page.dispatch_event("#user", "change")
    page.wait_for_function(f"document.querySelector('#who').textContent === 'signed in as {user_id}'")


def send(page, text: str) -> None:
    n = len(page.query_selector_all(".msg.ai"))
    page.fill("#text", text)
    page.click("form button")
    page.wait_for_function(f"document.querySelectorAll('.msg.ai').length > {n}", timeout=60_000)
    page.wait_for_function("!document.querySelector('#send').dataset.busy", timeout=60_000)


def panel(page) -> str:
    return page.inner_text("aside")


def test_console_signs_in_streams_shows_forgets_and_exports(browser, workdir, server_env, stub, tmp_path):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1300, "height": 800}, accept_downloads=True)
        page.goto(server.console_url())  # the URL ./scripts/dev printed, with its sign-in code
        page.wait_for_function("!location.hash.includes('code=')")  # taken out of the address bar
        page.fill("#text", "hello")
        page.click("form button")
        assert "Sign in first" in page.inner_text("#log")  # no shared default user

        # User 1 (an e-mail id: a hashed namespace label) chats; the answer is streamed.
        sign_in(page, "zhou.wang@x.com")
        send(page, "Hi, I'm Zhou and I live in Hangzhou. Remember that I have a parrot.")
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Hangzhou')", timeout=60_000)
        page.wait_for_function("document.querySelector('#notes').textContent.includes('I have a parrot')")
        send(page, "What is your refund policy?")
        answer = page.query_selector_all(".msg.ai")[-1]
        assert "refund" in answer.inner_text().lower()
        # Assembled from the run's stream (runs/stream, "messages-tuple"), piece by piece.
        assert int(answer.get_attribute("data-chunks") or 0) > 1
        assert "using search_policy" in page.inner_text("#log")
        assert stub.requests and any(r.get("stream") for r in stub.requests)

        # Provenance: the city as the user said it, with times; the audit trail names the writes.
        city = page.inner_text("#profile tr[data-field='city']")
        assert "Hangzhou" in city and "user_said" in city and "UTC" in city, city
        assert "profile.set city" in page.inner_text("#audit") and "note.add" in page.inner_text("#audit")
        assert "extractor" in page.inner_text("#audit")
        page.screenshot(path=str(tmp_path / "zhou.png"))

        # User 2, in the same tab: only their own memory, never user 1's.
        sign_in(page, "u_li")
        page.wait_for_function("document.querySelector('#profile').textContent.includes('no profile yet')")
        assert "Hangzhou" not in panel(page) and "parrot" not in panel(page)
        send(page, "I'm Li and I live in Beijing.")
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Beijing')", timeout=60_000)
        assert "Hangzhou" not in panel(page) and "parrot" not in panel(page) and "Zhou" not in panel(page)

        # Back to user 1: their memory, not user 2's.
        sign_in(page, "zhou.wang@x.com")
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Hangzhou')")
        assert "Beijing" not in panel(page) and "Li" not in page.inner_text("#profile")

        # Forget the city and the note: gone from the panel, after a reload too, and audited.
        page.click("#profile tr[data-field='city'] button")
        page.wait_for_function("!document.querySelector('#profile').textContent.includes('Hangzhou')")
        page.click("#notes li:has-text('I have a parrot') button")
        page.wait_for_function("!document.querySelector('#notes').textContent.includes('parrot')")
        page.reload()
        page.wait_for_function("document.querySelector('#profile').textContent.includes('Zhou')")
        assert "Hangzhou" not in page.inner_text("#profile")
        assert "(none)" in page.inner_text("#notes")
        audit = page.inner_text("#audit")
        assert "profile.delete city" in audit and "note.forget" in audit, audit

        # Export: a download of the whole memory of the signed-in user.
        with page.expect_download() as download:
            page.click("#export")
        path = tmp_path / download.value.suggested_filename
        download.value.save_as(path)
        doc = json.loads(path.read_text("utf-8"))
        assert doc["format"] == "mnemo.export/1" and doc["user_id"] == "zhou.wang@x.com"
        assert {f: e["value"] for f, e in doc["profile"].items()} == {"name": "Zhou"}
        assert doc["notes"] == []
        assert {r["action"] for r in doc["audit"]} >= {"profile.set", "profile.delete", "note.add", "note.forget"}
        forgets = [r for r in doc["audit"] if r["action"] in ("profile.delete", "note.forget")]
        assert {r["source"] for r in forgets} == {"user_said"}
        assert "Beijing" not in path.read_text("utf-8")
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


def test_console_adds_a_note_and_shows_what_a_message_would_be_shown_and_why(browser, workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        page = browser.new_page(viewport={"width": 1300, "height": 800})
        page.goto(server.console_url())
        sign_in(page, "u_ning")
        page.wait_for_function("document.querySelector('#notes').textContent.includes('(none)')")
        page.fill("#note-text", "Has a dog called Max.")
        page.click("#add-note button")
        page.wait_for_function("document.querySelector('#notes').textContent.includes('Has a dog called Max.')")
        assert "(app," in page.inner_text("#notes")  # an application's note, said so
        assert "note.add" in page.inner_text("#audit") and "by u_ning" in page.inner_text("#audit")
        page.fill("#note-text", "")
        page.click("#add-note button")  # nothing to add: nothing sent

        page.fill("#search-q", "What is my dog called?")
        page.click("#search button")
        page.wait_for_function("document.querySelector('#found').textContent.includes('Relevant notes')")
        found = page.inner_text("#found")
        assert "Has a dog called Max." in found and "found by meaning #1" in found and "in the prompt" in found
        assert "memory block:" in found and "Profile:" in found  # the block as the prompt carries it
        assert "0 past cases (0 of 1200 characters)" in found  # each kind's block, from /memory/search's list

        # Another user: the search shown is cleared, and theirs finds nothing of u_ning's.
        sign_in(page, "u_li")
        page.wait_for_function("document.querySelector('#found').textContent === ''")
        page.fill("#search-q", "What is my dog called?")
        page.click("#search button")
        page.wait_for_function("document.querySelector('#found').textContent.includes('Relevant notes: (none)')")
        assert "Max" not in panel(page)
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
