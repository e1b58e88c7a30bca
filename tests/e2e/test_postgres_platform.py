"""`langgraph dev --config langgraph.postgres.json`: the agent's memory in PostgreSQL.

Two servers on two ports start at the same time from one project copy and
share one embedded PostgreSQL (``MNEMO_PGDATA``): the first to get there runs
``initdb`` and starts it, the other attaches; ``setup()`` is serialised. A
memory written through one server is recalled through the other, through the
agent and through the store API; the rows are really in PostgreSQL; TTLs work
through the platform API; the database server stops with the last process
that uses it.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path

import psycopg
import pytest

from harness.devserver import DevServer, chat, client, server_environment, system_prompts, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON),
]


@pytest.fixture
def pgdata(tmp_path: Path) -> Path:
    return tmp_path / "shared-pgdata"


@pytest.fixture
def server_env(workdir, stub, pgdata) -> dict[str, str]:
    # The test's own embedded server (never an outside database), in a data
    # directory both servers name in their .env.
    write_dotenv(workdir, stub, MNEMO_PGDATA=str(pgdata), POSTGRES_URI="")
    return server_environment()


def postmaster(pgdata: Path):
    """The running server of ``pgdata``, or None (registers nothing)."""
    from mnemo.stores.embedded_postgres import server_info

    return server_info(pgdata)


async def test_two_servers_share_one_postgres_store(workdir, server_env, stub, pgdata):
    from mnemo.core import user_label

    a, b = (DevServer(workdir, server_env, config="langgraph.postgres.json") for _ in range(2))
    a.launch()
    b.launch()  # at the same time: one initdb, one setup(), no race
    try:
        a.wait_ready()
        b.wait_ready()
        ca, cb = client(a, "zhou.wang@x.com"), client(b, "zhou.wang@x.com")

        # Through the agent: learned on A (a profile and a note), known on B,
        # the note found by hybrid recall.
        run = await chat(
            ca, "Hi, I'm Zhou and I live in Hangzhou. Remember that I have a parrot.", user_id="zhou.wang@x.com"
        )
        assert run["status"] == "success", a.output()
        run = await chat(cb, "How long does delivery to my city take for my parrot's food?", user_id="zhou.wang@x.com")
        assert run["status"] == "success", b.output()
        prompt = system_prompts(stub)[-1]
        assert "long-term memory is unavailable" not in prompt, b.output()
        assert 'city: "Hangzhou"' in prompt
        assert "I have a parrot" in prompt.split("Notes relevant to the latest message:")[1].split("Most recent")[0]

        # Through the store API: written on B (an app's own item, by an operator), found by meaning on A.
        label = user_label("zhou.wang@x.com")
        await client(b, "ops", admin=True).store.put_item(
            [label, "app"],
            "n1",
            {"id": "n1", "text": "The user is allergic to peanuts.", "updated_at": "2026-01-01T00:00:00+00:00"},
        )
        hits = (await ca.store.search_items([label, "app"], query="what food allergies do I have?", limit=3))["items"]
        assert hits[0]["key"] == "n1" and hits[0]["score"] > 0.8

        # A time-bound memory through the platform API: gone for both once expired.
        # (A TTL long enough to be seen on a busy machine; then polled until gone.)
        ta, tb = client(a, "u_ttl"), client(b, "u_ttl")
        await ta.store.put_item(["u_ttl", "app"], "order", {"text": "asking about order 42"}, ttl=5 / 60)
        assert len((await tb.store.search_items(["u_ttl", "app"], refresh_ttl=False))["items"]) == 1
        deadline = time.monotonic() + 60
        while (await tb.store.search_items(["u_ttl", "app"], refresh_ttl=False))["items"]:
            assert time.monotonic() < deadline, "the expired item is still served after 60 s"
            await asyncio.sleep(0.5)

        # It is PostgreSQL: the rows are there for any client.
        info = postmaster(pgdata)
        assert info is not None
        with psycopg.connect(info.get_uri(database="mnemo")) as conn:
            keys = {k for (k,) in conn.execute("SELECT key FROM store WHERE prefix = %s", (f"{label}.profile",))}
        assert keys == {"name", "city"}

        for server in (a, b):  # no blocking call on the event loop, no turn without memory
            assert server.trouble() == [], server.trouble()
    finally:
        a.stop()
        shared = postmaster(pgdata) is not None
        b.stop()  # whatever happened: no server outlives the test
    assert shared, "stopped while server B still used it"
    deadline = time.monotonic() + 15
    while postmaster(pgdata) is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert postmaster(pgdata) is None, "the embedded PostgreSQL outlived the last server using it"


async def test_with_postgres_down_memory_routes_answer_503_and_a_turn_answers_then_is_written(
    workdir, server_env, stub, pgdata
):
    """PostgreSQL stopped under a running server: ``/memory`` and the store API
    answer 503 (not a 500 after 30 s), a turn answers without memory and says
    so, and all the user said meanwhile is extracted once it is back."""
    import os
    import signal

    import httpx

    from harness.devserver import token
    from mnemo.stores import embedded_postgres as pgserver

    server = DevServer(workdir, server_env, config="langgraph.postgres.json")
    server.start()
    restarted = None
    try:
        zhou = client(server, "u_zhou")
        thread = (await zhou.threads.create())["thread_id"]
        run = await chat(zhou, "Hello, I'm Zhou.", user_id="u_zhou", thread_id=thread)
        assert run["status"] == "success", server.output()
        info = postmaster(pgdata)  # the precondition: memory works, on this PostgreSQL
        assert info is not None and "memory is unavailable" not in system_prompts(stub)[-1]

        os.kill(info.pid, signal.SIGINT)  # PostgreSQL down (a fast shutdown)
        deadline = time.monotonic() + 30
        while postmaster(pgdata) is not None:
            assert time.monotonic() < deadline, "PostgreSQL did not stop"
            await asyncio.sleep(0.2)
        headers = {"Authorization": f"Bearer {token('u_zhou')}"}
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            export = await http.get("/memory/export", headers=headers)
            assert export.status_code == 503 and export.headers["retry-after"], export.text
            assert "PostgreSQL cannot be reached" in export.text
            items = await http.post("/store/items/search", json={"namespace_prefix": ["u_zhou"]}, headers=headers)
            assert items.status_code == 503, items.text
            # An application's writes and search: 503 too, and nothing of them is written (checked below).
            for method, path, body in (
                ("POST", "/memory/notes", {"text": "Prefers e-mail over phone."}),
                ("PATCH", "/memory/profile", {"language": "French"}),
                ("GET", "/memory/search?q=hello", None),
            ):
                res = await http.request(method, path, json=body, headers=headers)
                assert res.status_code == 503 and res.headers["retry-after"], (path, res.text)
        # More messages than one extraction call reads, the fact the oldest of them.
        said = ["I live in Lyon now.", *(f"And one more thing, number {i}." for i in range(11))]
        run = await zhou.runs.create(
            thread,
            "agent",
            input={"messages": [{"role": "user", "content": t} for t in said]},
            context={"user_id": "u_zhou"},
        )
        await zhou.runs.join(thread, run["run_id"])
        run = await zhou.runs.get(thread, run["run_id"])
        assert run["status"] == "success", server.output()
        assert "long-term memory is unavailable this turn: StoreUnavailableError" in system_prompts(stub)[-1]

        restarted = await asyncio.to_thread(pgserver.start, pgdata, database="mnemo", cleanup="stop")
        run = await chat(zhou, "What soups do you have?", user_id="u_zhou", thread_id=thread)
        assert run["status"] == "success", server.output()
        assert "long-term memory is unavailable" not in system_prompts(stub)[-1]
        profile = (await zhou.store.search_items(["u_zhou", "profile"]))["items"]
        assert {it["key"]: it["value"]["value"] for it in profile}.get("city") == "Lyon", server.output()
        notes = (await zhou.store.search_items(["u_zhou", "notes"], limit=50))["items"]
        assert "Prefers e-mail over phone." not in {it["value"]["text"] for it in notes}
        assert "language" not in {it["key"] for it in profile}
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:  # and once back, the routes work
            res = await http.post("/memory/notes", json={"text": "Prefers e-mail over phone."}, headers=headers)
            assert res.status_code == 201, res.text
    finally:
        server.stop()
        if restarted is not None:
            await asyncio.to_thread(restarted.stop)
    deadline = time.monotonic() + 15
    while postmaster(pgdata) is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert postmaster(pgdata) is None, "the embedded PostgreSQL outlived the test"


def test_a_server_whose_store_cannot_start_ends_saying_why(workdir, stub, tmp_path):
    """The embedded PostgreSQL cannot start (its data directory cannot be made):
    ``./scripts/dev`` ends, and its output says why, instead of the reloader
    waiting for a file change with no server behind it (it ends with status 0:
    uvicorn's reloader, stopped by SIGTERM, exits as when stopped by hand)."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the data directory's parent should be\n")
    write_dotenv(workdir, stub, MNEMO_PGDATA=str(blocker / "pgdata"), POSTGRES_URI="")
    server = DevServer(workdir, server_environment(), config="langgraph.postgres.json")
    server.launch()
    try:
        assert server.proc is not None
        try:
            server.proc.wait(timeout=180)
        except subprocess.TimeoutExpired:
            pytest.fail(f"./scripts/dev still runs with no store:\n{server.output()}")
        said = server.output(tail=10**6)
        assert "mnemo: the server cannot start" in said and str(blocker) in said, said
    finally:
        server.stop()
