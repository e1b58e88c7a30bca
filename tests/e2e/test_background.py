"""``memory_write_mode="background"`` under ``langgraph dev`` (./scripts/dev,
the stub model; on the default config and on ``langgraph.postgres.json``):
runs return before extraction, a burst of turns is extracted once by the
``memory_writer`` graph, and the facts reach a new thread."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from harness.devserver import DevServer, chat, client, system_prompts, token, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
from nodes.background_writer import writer_thread_id

pytestmark = pytest.mark.e2e

#: Quiet seconds before the writer runs: long enough that the three turns
#: below always land inside it on a loaded machine (it is not a speed target).
DELAY_S = 12


def extraction_requests(stub) -> list[dict]:
    return [r for r in stub.requests if any(t["function"]["name"] == "MemoryExtraction" for t in r.get("tools", []))]


async def writer_runs(client, thread_id: str) -> list[dict]:
    return await client.runs.list(writer_thread_id(thread_id), limit=50)


@pytest.fixture(params=["langgraph.json", "langgraph.postgres.json"])
def config(request, workdir, stub, tmp_path) -> str:
    """Both shipped configs: the platform's store, and PostgreSQL (the test's
    own embedded server, never an outside database)."""
    if request.param == "langgraph.postgres.json":
        if skip_postgres():
            pytest.skip(SKIP_POSTGRES_REASON)
        write_dotenv(workdir, stub, MNEMO_PGDATA=str(tmp_path / "pgdata"), POSTGRES_URI="")
    return request.param


async def test_background_writes_do_not_hold_the_run_and_a_burst_is_extracted_once(workdir, server_env, stub, config):
    server = DevServer(workdir, server_env, config=config)
    server.start()
    try:
        admin, ning = client(server, "ops", admin=True), client(server, "u_ning")
        assistant = await admin.assistants.create(
            "agent", context={"memory_write_mode": "background", "memory_write_delay_s": DELAY_S}
        )
        aid = assistant["assistant_id"]
        thread_id = (await ning.threads.create())["thread_id"]

        run = await chat(ning, "Hi, I'm Ning.", user_id="u_ning", thread_id=thread_id, assistant_id=aid)
        assert run["status"] == "success", server.output()
        # The run is over and nothing was extracted: the writer is waiting.
        assert extraction_requests(stub) == []
        pending = await writer_runs(admin, thread_id)
        assert [r["status"] for r in pending] == ["pending"], pending

        for text in ("I live in Xiamen.", "Thanks, that's all."):
            run = await chat(ning, text, user_id="u_ning", thread_id=thread_id, assistant_id=aid)
            assert run["status"] == "success", server.output()
        assert extraction_requests(stub) == []

        for _ in range(240):  # the writer runs DELAY_S after the last turn
            runs = await writer_runs(admin, thread_id)
            if runs and all(r["status"] not in ("pending", "running") for r in runs):
                break
            await asyncio.sleep(0.5)
        assert [r["status"] for r in runs] == ["success"], runs  # the two superseded runs were rolled back
        sent = extraction_requests(stub)
        assert len(sent) == 1, sent
        prompt = sent[0]["messages"][-1]["content"]
        assert all(t in prompt for t in ("I'm Ning.", "I live in Xiamen.", "Thanks, that's all."))

        # A later thread of the same user knows what the writer stored.
        run = await chat(ning, "Where do I live?", user_id="u_ning", assistant_id=aid)
        assert run["status"] == "success", server.output()
        assert 'city: "Xiamen"' in system_prompts(stub)[-1] and 'name: "Ning"' in system_prompts(stub)[-1]
        assert "memory_writer: thread" in server.output(tail=10**8)

        # A UI closes the first thread's case through the feedback route, with
        # the user's token; nobody else can (no token, or another user's).
        def feedback(body: dict, user: str | None) -> httpx.Response:
            headers = {"Authorization": f"Bearer {token(user)}"} if user else {}
            return httpx.post(f"{server.url}/feedback", json=body, headers=headers, timeout=10)

        resolved = {"thread_id": thread_id, "outcome": "resolved"}
        assert feedback({"thread_id": thread_id, "outcome": "maybe"}, "u_ning").status_code == 400
        assert feedback(resolved, None).status_code == 401
        assert feedback({**resolved, "user_id": "u_ning"}, "u_mallory").status_code == 404
        done = feedback(resolved, "u_ning")
        assert done.status_code == 200, done.text
        assert done.json()["episode"]["text"] == "Hi, I'm Ning." and done.json()["episode"]["outcome"] == "resolved"
        episodes = (await ning.store.search_items(("u_ning", "episodes"), limit=10))["items"]
        assert [e["key"] for e in episodes] == [done.json()["episode"]["id"]]

        # Run by another user on ning's thread, the writer graph fails (the
        # thread is not found for them, or, where the in-process client skips
        # auth, its owner check refuses) and learns nothing.
        mallory = client(server, "u_mallory")
        own = (await mallory.threads.create())["thread_id"]
        run = await mallory.runs.wait(own, "memory_writer", input={"thread_id": thread_id}, raise_error=False)
        assert "__error__" in run, run
        assert (await mallory.store.search_items(("u_mallory", "profile"), limit=10))["items"] == []
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()
