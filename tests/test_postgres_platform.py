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
import os
import time
from pathlib import Path

import psycopg
import pytest

from tests.devserver import DevServer, chat, client, server_environment, system_prompts, write_dotenv

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.environ.get("MNEMO_SKIP_POSTGRES") == "1", reason="MNEMO_SKIP_POSTGRES=1"),
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
    from mnemo import user_label

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
        assert postmaster(pgdata) is not None, "stopped while server B still used it"
        b.stop()
    deadline = time.monotonic() + 15
    while postmaster(pgdata) is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.2)
    assert postmaster(pgdata) is None, "the embedded PostgreSQL outlived the last server using it"
