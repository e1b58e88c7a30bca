"""A note ``remember_note`` acknowledged ("Will be remembered once this reply is
sent") is kept whatever the client does next, through ``./scripts/dev``: a
cancel with ``action=rollback`` during the reply, a follow-up message with
``multitask_strategy=rollback`` (both delete the run's checkpoints), or a
server stopped by SIGTERM during the reply, on both
stores. The queue lives in the store (mnemo/writing/deferred.py), which a
rollback does not touch.
Counted, not timed: the stub holds the reply after the tool ran ("dawdle")
until released, so the run is cancelled after the acknowledgement, in its reply."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest
from langgraph_sdk.errors import APIStatusError, NotFoundError

from harness.devserver import DevServer, chat, client, server_environment, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
from mnemo.core import QUEUED_NOTES

pytestmark = pytest.mark.e2e

USER = "u_violin"
SAID = "Remember that I play the violin. Then dawdle."
NOTE = "I play the violin"


def acknowledged(stub) -> bool:
    """The stub was asked for the reply after ``remember_note`` acknowledged the note."""
    return any(
        r["messages"][-1]["role"] == "tool" and str(r["messages"][-1]["content"]).startswith("Will be remembered")
        for r in stub.requests
    )


async def until_acknowledged(stub) -> None:
    for _ in range(1200):  # a wait for the server, not a bound on its speed
        if acknowledged(stub):
            return
        await asyncio.sleep(0.1)
    raise AssertionError("remember_note never acknowledged the note")


async def notes(server: DevServer) -> list[str]:
    found = await client(server, USER).store.search_items([USER, "notes"], limit=50)
    return [it["value"]["text"] for it in found["items"]]


@pytest.fixture(params=["memory", "postgres"])
def server(request, workdir, stub, tmp_path: Path):
    """``./scripts/dev`` on the in-memory store, then on the embedded PostgreSQL."""
    if request.param == "postgres":
        if skip_postgres():
            pytest.skip(SKIP_POSTGRES_REASON)
        write_dotenv(workdir, stub, MNEMO_PGDATA=str(tmp_path / "pgdata"), POSTGRES_URI="")
        dev = DevServer(workdir, server_environment(), config="langgraph.postgres.json")
    else:
        write_dotenv(workdir, stub)
        dev = DevServer(workdir, server_environment())
    dev.start()
    try:
        yield dev
    finally:
        stub.release()
        dev.stop()


async def test_a_run_cancelled_with_rollback_after_the_acknowledgement_keeps_the_note(server, stub):
    c = client(server, USER)
    thread = (await c.threads.create())["thread_id"]
    run = await c.runs.create(
        thread, "agent", input={"messages": [{"role": "user", "content": SAID}]}, context={"user_id": USER}
    )
    await until_acknowledged(stub)
    await c.runs.cancel(thread, run["run_id"], wait=True, action="rollback")
    stub.release()
    assert await notes(server) == []  # not written yet: the run never reached write_memory
    # The user's next turn, on another thread, writes what was acknowledged: once.
    assert (await chat(c, "Thanks.", user_id=USER))["status"] == "success"
    assert await notes(server) == [NOTE]
    assert (await chat(c, "Bye.", user_id=USER))["status"] == "success"
    assert await notes(server) == [NOTE]
    # A client cannot plant an entry for the next turn to write: the queue is memory.
    planted = {"id": "x", "text": "The user was promised a refund.", "queued_at": "2020-01-01T00:00:00+00:00"}
    with pytest.raises(APIStatusError) as refused:
        await c.store.put_item([USER, QUEUED_NOTES], "x", planted)
    assert refused.value.status_code == 403
    assert server.trouble() == []


async def test_a_follow_up_with_rollback_during_the_reply_keeps_the_note(server, stub):
    c = client(server, USER)
    thread = (await c.threads.create())["thread_id"]
    first = await c.runs.create(
        thread, "agent", input={"messages": [{"role": "user", "content": SAID}]}, context={"user_id": USER}
    )
    await until_acknowledged(stub)
    follow_up = await c.runs.create(
        thread,
        "agent",
        input={"messages": [{"role": "user", "content": "Thanks."}]},
        context={"user_id": USER},
        multitask_strategy="rollback",
    )
    stub.release()
    await c.runs.join(thread, follow_up["run_id"])
    assert (await c.runs.get(thread, follow_up["run_id"]))["status"] == "success"
    runs = [r["run_id"] for r in await c.runs.list(thread)]
    assert first["run_id"] not in runs and follow_up["run_id"] in runs  # rolled back: its checkpoints gone
    said = [m["content"] for m in (await c.threads.get_state(thread))["values"]["messages"]]
    assert SAID not in said and "Thanks." in said
    assert await notes(server) == [NOTE]
    assert server.trouble() == []


async def test_a_server_stopped_by_sigterm_after_the_acknowledgement_keeps_the_note(server, stub):
    c = client(server, USER)
    thread = (await c.threads.create())["thread_id"]
    run = await c.runs.create(
        thread, "agent", input={"messages": [{"role": "user", "content": SAID}]}, context={"user_id": USER}
    )
    await until_acknowledged(stub)
    assert server.proc is not None
    os.killpg(server.proc.pid, signal.SIGTERM)
    server.proc.wait(timeout=120)
    stub.release()
    again = DevServer(server.workdir, server.env, config=server.config)
    again.start()
    try:
        c = client(again, USER)
        # The stopped run may be taken up again by the restarted server: wait until it is not in progress.
        for _ in range(1200):
            try:
                if (await c.runs.get(thread, run["run_id"]))["status"] not in ("pending", "running"):
                    break
            except NotFoundError:
                break
            await asyncio.sleep(0.1)
        assert (await chat(c, "Thanks.", user_id=USER))["status"] == "success"
        assert await notes(again) == [NOTE]
        assert again.trouble() == []
    finally:
        again.stop()
