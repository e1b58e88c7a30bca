"""End to end: `langgraph dev` serving the agent, a local OpenAI-compatible stub
as the model, driven through `langgraph_sdk` like a user's client would, with
a bearer token (auth is on; tests/test_auth.py tries to get around it).

The server runs from a copy of the project in a temporary directory so its
persisted state (``.langgraph_api/``) is the test's own, and is restarted once
to show that memory outlives the process.
"""

from __future__ import annotations

import httpx
import pytest
from tests.devserver import DevServer, chat, client, system_prompts

pytestmark = pytest.mark.e2e


async def test_memory_across_threads_users_and_a_restart(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        zhou = client(server, "zhou.wang@x.com")
        run = await chat(zhou, "Hi, I'm Zhou and I live in Hangzhou.", user_id="zhou.wang@x.com")
        assert run["status"] == "success", server.output()
        assert "no profile yet" in system_prompts(stub)[0]

        # The web UI is served by the same server (its page needs no token), and maps ids like mnemo does.
        page = httpx.get(f"{server.url}/ui", timeout=10)
        assert page.status_code == 200 and "What mnemo remembers" in page.text
        mapped = httpx.get(f"{server.url}/ui/label", params={"user_id": "zhou.wang@x.com"}, timeout=10).json()
        assert httpx.get(f"{server.url}/ui/label", params={"user_id": ""}, timeout=10).status_code == 400

        # The store is readable through the SDK; the e-mail became a stable hashed label.
        from mnemo import load_policy_file, user_label

        label = user_label("zhou.wang@x.com")
        assert mapped == {"label": label}
        items = (await zhou.store.search_items((label, "profile"), limit=50))["items"]
        assert {i["key"]: i["value"]["value"] for i in items} == {"name": "Zhou", "city": "Hangzhou"}

        # Thread 2 of the same user: the model's prompt carries thread 1's facts.
        run = await chat(zhou, "How long does delivery to my city take?", user_id="zhou.wang@x.com")
        assert run["status"] == "success"
        assert "city: Hangzhou" in system_prompts(stub)[-1]

        # A policy question goes through the policy tool (seeded on first use).
        run = await chat(zhou, "What is your refund policy?", user_id="zhou.wang@x.com")
        assert run["status"] == "success", server.output()
        state = await zhou.threads.get_state(run["thread_id"])
        tool_messages = [m for m in state["values"]["messages"] if m["type"] == "tool"]
        assert tool_messages and "30 days" in tool_messages[0]["content"]
        policies = (await zhou.store.search_items(("org", "policies"), limit=100))["items"]
        assert len(policies) == len(load_policy_file())

        # Another user sees none of it.
        await chat(client(server, "someone_else"), "Where do I live?", user_id="someone_else")
        assert "Hangzhou" not in system_prompts(stub)[-1]

        # An admin (an app backend) naming no user: the run fails, no model call is made.
        calls_before = len(stub.requests)
        run = await chat(client(server, "backend", admin=True), "hello", user_id=None)
        assert run["status"] == "error"
        assert len(stub.requests) == calls_before
        # The server flags blocking calls on its event loop; mnemo makes none.
        assert "BlockingError" not in server.output(tail=10**7)
    finally:
        server.stop()

    # Restart: the platform store persisted the memory.
    server = DevServer(workdir, server_env)
    server.start()
    try:
        zhou = client(server, "zhou.wang@x.com")
        items = (await zhou.store.search_items((label, "profile"), limit=50))["items"]
        assert {i["key"] for i in items} == {"name", "city"}
        run = await chat(zhou, "Remind me what you know about me.", user_id="zhou.wang@x.com")
        assert run["status"] == "success", server.output()
        assert "city: Hangzhou" in system_prompts(stub)[-1]
    finally:
        server.stop()
