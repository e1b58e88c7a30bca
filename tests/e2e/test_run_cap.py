"""The run cap through ``./scripts/dev`` (server/run_cap.py, server/run_lease.py):
however a user's runs are created, in a batch or in parallel, on one server or
on two sharing one PostgreSQL, at most the cap of them run at once; the others
are refused (429) or end at once as errors saying why. Counted, not timed: the
stub model holds every "linger" request until released, so a run that got
through is one the stub is holding."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from langgraph_sdk.errors import APIStatusError

from harness.devserver import DevServer, client, server_environment, token, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
from server.run_cap import DEFAULT_MAX_RUNS_PER_USER

pytestmark = pytest.mark.e2e

LINGER = {"messages": [{"role": "user", "content": "linger"}]}
REFUSED = "of your runs are in progress"


def lingering(stub) -> int:
    """Chat requests the stub is holding (or held): runs that got through the cap."""
    return sum(1 for r in stub.requests if r["messages"][-1].get("content") == "linger")


async def flood(server: DevServer, user: str, *, batch: int, parallel: int) -> tuple[list[dict], int]:
    """``batch`` stateless runs in one ``POST /runs/batch`` and ``parallel``
    ``POST /threads/{id}/runs`` at once: the runs created, and how many were refused with 429."""
    c = client(server, user)
    payload = {"assistant_id": "agent", "input": LINGER, "context": {"user_id": user}, "on_completion": "keep"}
    async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
        made = await http.post("/runs/batch", json=[payload] * batch, headers={"X-Api-Key": token(user)})
    assert made.status_code == 200, made.text
    runs = list(made.json())
    threads = await asyncio.gather(*(c.threads.create() for _ in range(parallel)))

    async def one(thread: dict) -> dict | None:
        try:
            return await c.runs.create(thread["thread_id"], "agent", input=LINGER, context={"user_id": user})
        except APIStatusError as exc:
            assert exc.status_code == 429 and REFUSED in str(exc.response.json()), exc
            return None

    created = await asyncio.gather(*(one(t) for t in threads))
    runs += [r for r in created if r is not None]
    return runs, sum(1 for r in created if r is None)


async def mcp_call(server: DevServer, user: str) -> dict:
    """An MCP ``tools/call`` of the agent with a held message; what it answered."""
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "agent", "arguments": LINGER}}
    headers = {"X-Api-Key": token(user), "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=server.url, timeout=300) as http:
        got = await http.post("/mcp", json=call, headers=headers)
    assert got.status_code == 200, got.text  # never the platform's 500
    return got.json()


def answered_only_at_the_end(server: DevServer, user: str) -> list[asyncio.Task]:
    """Runs whose request answers when the run ends: an MCP ``tools/call``, a
    stateless ``runs/wait`` and ``runs/stream``; each task returns what the client got."""
    c = client(server, user)

    async def mcp() -> object:
        return await mcp_call(server, user)

    async def wait() -> object:
        try:
            return await c.runs.wait(None, "agent", input=LINGER, context={"user_id": user}, raise_error=False)
        except httpx.HTTPStatusError as exc:  # 429: refused when created
            return exc.response.status_code, exc.response.text

    async def stream() -> object:
        try:
            return [part async for part in c.runs.stream(None, "agent", input=LINGER, context={"user_id": user})]
        except APIStatusError as exc:
            return exc.status_code, str(exc)

    return [asyncio.create_task(f()) for f in (mcp, wait, stream)]


async def settle(runs: list[tuple[DevServer, dict]], waiting: list[asyncio.Task], user: str, stub) -> list[str]:
    """Wait until every run failed or is held by the stub (a request still
    waiting for its run is one the stub holds); the runs' statuses."""
    deadline = time.monotonic() + 180
    while True:
        statuses = [(await client(s, user).runs.get(r["thread_id"], r["run_id"]))["status"] for s, r in runs]
        running, held = statuses.count("running"), sum(not t.done() for t in waiting)
        if statuses.count("error") + running == len(runs) and running + held == lingering(stub):
            return statuses
        assert time.monotonic() < deadline, (statuses, held, lingering(stub), runs[0][0].output())
        await asyncio.sleep(0.5)


async def check_cap(servers: list[DevServer], stub) -> None:
    user, cap = "u_hog", DEFAULT_MAX_RUNS_PER_USER
    waiting = [task for server in servers for task in answered_only_at_the_end(server, user)]
    floods = await asyncio.gather(*(flood(s, user, batch=4, parallel=5) for s in servers))
    runs = [(server, run) for server, (made, _) in zip(servers, floods, strict=True) for run in made]
    refused = sum(n for _, n in floods)
    statuses = await settle(runs, waiting, user, stub)
    assert len(runs) + refused == 9 * len(servers)
    assert lingering(stub) == cap, (statuses, refused, [t.done() for t in waiting])
    assert statuses.count("error") == len(runs) - statuses.count("running"), statuses
    for task in (t for t in waiting if t.done()):  # refused, saying so (MCP names a run's error only)
        assert REFUSED in str(task.result()) or "RunCapReachedError" in str(task.result()), task.result()
    # At the cap, an MCP tools/call answers that its run was refused (the platform's handler
    # would turn a 429 into a 500).
    mcp = await mcp_call(servers[0], user)
    assert mcp["result"]["isError"] and "RunCapReachedError" in str(mcp), mcp
    # A run past the cap failed saying why.
    server, run = runs[statuses.index("error")]
    joined = await client(server, user).runs.join(run["thread_id"], run["run_id"])
    assert REFUSED in str(joined), joined
    # Another user is not held back; once released, the user runs again.
    other = client(servers[-1], "u_other")
    thread = await other.threads.create()
    done = await other.runs.wait(
        thread["thread_id"], "agent", input={"messages": [("user", "hello")]}, context={"user_id": "u_other"}
    )
    assert done["messages"][-1]["content"] == "ok", done
    stub.release()
    for server, run in runs:
        await client(server, user).runs.join(run["thread_id"], run["run_id"])
    await asyncio.gather(*waiting)
    again = await client(servers[0], user).runs.wait(
        None, "agent", input={"messages": [("user", "and now?")]}, context={"user_id": user}
    )
    assert again["messages"][-1]["content"] == "ok", again


async def test_a_batch_and_parallel_runs_of_one_user_run_at_most_the_cap(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        await check_cap([server], stub)
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


@pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)
async def test_two_servers_on_one_postgres_share_the_cap(workdir, stub, tmp_path):
    write_dotenv(workdir, stub, MNEMO_PGDATA=str(tmp_path / "shared-pgdata"), POSTGRES_URI="")
    env = server_environment()
    a, b = (DevServer(workdir, env, config="langgraph.postgres.json") for _ in range(2))
    a.launch()
    b.launch()
    try:
        a.wait_ready()
        b.wait_ready()
        await check_cap([a, b], stub)
        for server in (a, b):
            assert server.trouble() == [], server.trouble()
    finally:
        a.stop()
        b.stop()
