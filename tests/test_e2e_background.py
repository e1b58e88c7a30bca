"""``memory_write_mode="background"`` under ``langgraph dev`` (./scripts/dev,
the stub model): runs return before extraction, a burst of turns is
extracted once by the ``memory_writer`` graph, and the facts reach a new
thread."""

from __future__ import annotations

import asyncio

import httpx

import pytest
from langgraph_sdk import get_client

from mnemo.background import writer_thread_id
from tests.devserver import DevServer, chat, system_prompts

pytestmark = pytest.mark.e2e

#: Quiet seconds before the writer runs: long enough that the three turns
#: below always land inside it on a loaded machine (it is not a speed target).
DELAY_S = 12


def extraction_requests(stub) -> list[dict]:
    return [r for r in stub.requests if any(t["function"]["name"] == "MemoryExtraction" for t in r.get("tools", []))]


async def writer_runs(client, thread_id: str) -> list[dict]:
    return await client.runs.list(writer_thread_id(thread_id), limit=50)


async def test_background_writes_do_not_hold_the_run_and_a_burst_is_extracted_once(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        client = get_client(url=server.url)
        assistant = await client.assistants.create(
            "agent", context={"memory_write_mode": "background", "memory_write_delay_s": DELAY_S})
        aid = assistant["assistant_id"]
        thread_id = (await client.threads.create())["thread_id"]

        run = await chat(client, "Hi, I'm Ning.", user_id="u_ning", thread_id=thread_id, assistant_id=aid)
        assert run["status"] == "success", server.output()
        # The run is over and nothing was extracted: the writer is waiting.
        assert extraction_requests(stub) == []
        pending = await writer_runs(client, thread_id)
        assert [r["status"] for r in pending] == ["pending"], pending

        for text in ("I live in Xiamen.", "Thanks, that's all."):
            run = await chat(client, text, user_id="u_ning", thread_id=thread_id, assistant_id=aid)
            assert run["status"] == "success", server.output()
        assert extraction_requests(stub) == []

        for _ in range(240):  # the writer runs DELAY_S after the last turn
            runs = await writer_runs(client, thread_id)
            if runs and all(r["status"] not in ("pending", "running") for r in runs):
                break
            await asyncio.sleep(0.5)
        assert [r["status"] for r in runs] == ["success"], runs  # the two superseded runs were rolled back
        sent = extraction_requests(stub)
        assert len(sent) == 1, sent
        prompt = sent[0]["messages"][-1]["content"]
        assert all(t in prompt for t in ("I'm Ning.", "I live in Xiamen.", "Thanks, that's all."))

        # A later thread of the same user knows what the writer stored.
        run = await chat(client, "Where do I live?", user_id="u_ning", assistant_id=aid)
        assert run["status"] == "success", server.output()
        assert "city: Xiamen" in system_prompts(stub)[-1] and "name: Ning" in system_prompts(stub)[-1]
        assert "memory_writer: thread" in server.output(tail=10**8)

        # A UI closes the first thread's case through the feedback route.
        bad = httpx.post(f"{server.url}/feedback", json={"thread_id": thread_id, "outcome": "maybe"}, timeout=10)
        assert bad.status_code == 400
        done = httpx.post(f"{server.url}/feedback", timeout=10,
                          json={"thread_id": thread_id, "user_id": "u_ning", "outcome": "resolved"})
        assert done.status_code == 200, done.text
        assert done.json()["episode"]["text"] == "Hi, I'm Ning." and done.json()["episode"]["outcome"] == "resolved"
        episodes = (await client.store.search_items(("u_ning", "episodes"), limit=10))["items"]
        assert [e["key"] for e in episodes] == [done.json()["episode"]["id"]]
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
