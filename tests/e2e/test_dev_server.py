"""End to end, as a user runs it: ``./scripts/dev`` (auto-reload on, ``.env``
made from ``.env.example``) serving the agent, a local OpenAI-compatible stub
as the model, driven through `langgraph_sdk` like a user's client would, with
a bearer token (auth is on; tests/server/test_auth.py tries to get around it).

The server runs from a copy of the project in a temporary directory so its
persisted state (``.langgraph_api/``) is the test's own, and is restarted once
to show that memory outlives the process. Every test fails when the server log
shows a blocking call on the event loop or a turn that lost its memory.
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from harness.devserver import DevServer, chat, client, system_prompts

pytestmark = pytest.mark.e2e

UNAVAILABLE = "long-term memory is unavailable"


@pytest.fixture
def server(workdir, server_env):
    server = DevServer(workdir, server_env)
    server.start()
    yield server
    server.stop()


async def test_profile_and_note_reach_a_new_thread(server, stub):
    """The README's path: tell the agent who you are and something to
    remember; a new thread's prompt carries both (hybrid recall ran)."""
    lin = client(server, "u_lin")
    run = await chat(lin, "Hi, my name is Lin and I live in Suzhou. Remember that I have a parrot.", user_id="u_lin")
    assert run["status"] == "success", server.output()
    state = await lin.threads.get_state(run["thread_id"])
    tool_results = [m["content"] for m in state["values"]["messages"] if m["type"] == "tool"]
    assert tool_results and tool_results[0].startswith("Will be remembered"), tool_results

    run = await chat(lin, "Where do I live? And which pet do I have?", user_id="u_lin")
    assert run["status"] == "success", server.output()
    prompt = system_prompts(stub)[-1]
    assert UNAVAILABLE not in prompt, server.output()
    assert 'name: "Lin"' in prompt and 'city: "Suzhou"' in prompt
    relevant = prompt.split("Notes relevant to the latest message:")[1]
    assert "I have a parrot" in relevant.split("Most recent notes:")[0]

    # The note tools run on the server too (BM25 and embedding off the event loop).
    run = await chat(lin, "What do you remember about my pets?", user_id="u_lin")
    state = await lin.threads.get_state(run["thread_id"])
    assert "I have a parrot" in [m for m in state["values"]["messages"] if m["type"] == "tool"][0]["content"]
    run = await chat(lin, "Forget that I have a parrot.", user_id="u_lin")
    state = await lin.threads.get_state(run["thread_id"])
    assert [m for m in state["values"]["messages"] if m["type"] == "tool"][0]["content"].startswith("Deleted")
    assert (await lin.store.search_items(("u_lin", "notes"), limit=50))["items"] == []

    # An assistant carries per-deployment settings; its runs add only the user.
    # (A note exists, so "Notes: (none)" below is the assistant's limits at work.)
    await chat(lin, "Remember that I have a cat.", user_id="u_lin")
    assert len((await lin.store.search_items(("u_lin", "notes"), limit=50))["items"]) == 1
    # Assistants are an admin's to create (auth); a user's runs may use them.
    assistant = await client(server, "ops", admin=True).assistants.create(
        "agent", context={"model": "openai:stub-assistant-model", "recall_limit": 0, "recent_limit": 0}
    )
    run = await chat(lin, "Which pet do I have?", user_id="u_lin", assistant_id=assistant["assistant_id"])
    assert run["status"] == "success", server.output()
    chat_calls = [r for r in stub.requests if r["messages"][0]["role"] == "system"]
    assert chat_calls[-1]["model"] == "stub-assistant-model"
    prompt = system_prompts(stub)[-1]
    assert 'city: "Suzhou"' in prompt and "Notes: (none)" in prompt
    assert server.trouble() == [], server.trouble()


async def test_runs_of_different_users_run_at_the_same_time(server, stub):
    """Two users' runs are in flight together: the stub holds each model call
    until the other arrives, and answers "alone" if it never does."""
    users = [client(server, "u_a"), client(server, "u_b")]
    pairs = zip(users, ("u_a", "u_b"), strict=True)
    runs = await asyncio.gather(*(chat(c, "rendezvous please", user_id=u) for c, u in pairs))
    for user, run in zip(users, runs, strict=True):
        assert run["status"] == "success", server.output()
        state = await user.threads.get_state(run["thread_id"])
        assert state["values"]["messages"][-1]["content"] == "together"
    assert server.trouble() == [], server.trouble()


async def test_one_users_runs_never_take_the_server_from_the_others(server, stub):
    """A user with the most runs in progress is told to retry (429,
    Retry-After); another user's run goes through meanwhile."""
    from langgraph_sdk.errors import APIStatusError

    from server.run_cap import DEFAULT_MAX_RUNS_PER_USER

    hog, other = client(server, "u_hog"), client(server, "u_other")
    held = []
    for _ in range(DEFAULT_MAX_RUNS_PER_USER):
        thread = await hog.threads.create()
        held.append(
            await hog.runs.create(
                thread["thread_id"], "agent", input={"messages": [("user", "linger")]}, context={"user_id": "u_hog"}
            )
        )
    for _ in range(120):  # until the server shows them all in progress
        busy = await hog.threads.search(status="busy", limit=10)
        if len(busy) >= DEFAULT_MAX_RUNS_PER_USER:
            break
        await asyncio.sleep(0.5)
    assert len(busy) == DEFAULT_MAX_RUNS_PER_USER, server.output()
    with pytest.raises(APIStatusError) as refused:
        await chat(hog, "one more", user_id="u_hog")
    assert refused.value.status_code == 429 and refused.value.response.headers.get("retry-after"), refused.value
    run = await chat(other, "hello", user_id="u_other")  # not held back by u_hog's runs
    assert run["status"] == "success", server.output()
    stub.release()
    for run in held:
        await hog.runs.join(run["thread_id"], run["run_id"])
    run = await chat(hog, "and now?", user_id="u_hog")
    assert run["status"] == "success", server.output()
    assert server.trouble() == [], server.trouble()


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
        from mnemo import load_policy_file
        from mnemo.core import user_label

        label = user_label("zhou.wang@x.com")
        assert mapped == {"label": label}
        items = (await zhou.store.search_items((label, "profile"), limit=50))["items"]
        assert {i["key"]: i["value"]["value"] for i in items} == {"name": "Zhou", "city": "Hangzhou"}

        # Thread 2 of the same user: the model's prompt carries thread 1's facts.
        run = await chat(zhou, "How long does delivery to my city take?", user_id="zhou.wang@x.com")
        assert run["status"] == "success"
        assert 'city: "Hangzhou"' in system_prompts(stub)[-1]

        # A policy question goes through the policy tool (seeded on first use).
        run = await chat(zhou, "What is your refund policy?", user_id="zhou.wang@x.com")
        assert run["status"] == "success", server.output()
        state = await zhou.threads.get_state(run["thread_id"])
        tool_messages = [m for m in state["values"]["messages"] if m["type"] == "tool"]
        assert tool_messages and "30 days" in tool_messages[0]["content"]
        policies = (await zhou.store.search_items(("org", "policies"), limit=100))["items"]
        assert len(policies) == len(load_policy_file())

        # Another user sees none of it; their own (empty) memory did load.
        await chat(client(server, "someone_else"), "Where do I live?", user_id="someone_else")
        assert "no profile yet" in system_prompts(stub)[-1]
        assert "Hangzhou" not in system_prompts(stub)[-1]

        # An admin (an app backend) naming no user: the run fails, no model call is made.
        calls_before = len(stub.requests)
        run = await chat(client(server, "backend", admin=True), "hello", user_id=None)
        assert run["status"] == "error"
        assert len(stub.requests) == calls_before
        assert server.trouble() == [], server.trouble()
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
        assert 'city: "Hangzhou"' in system_prompts(stub)[-1]
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
