"""A PostgreSQL that hangs rather than refuses, under ``./scripts/dev --config langgraph.postgres.json``.

The embedded PostgreSQL's postmaster and every backend are stopped (``SIGSTOP``:
a full disk, a lock storm, a partition without RST look the same from the
client: a socket that never answers). Every statement a run makes there has a
deadline (server/run_lease.py, mnemo/stores/postgres.py), so two users' turns
still reach the model within seconds, without memory and saying so, and the
cap still holds, counted on this server; once resumed, memory is back, and a
user whose runs ended meanwhile has their leases back (given back, not lapsed).
``SIGCONT`` is sent whatever happens.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import psutil
import pytest

from harness.devserver import DevServer, chat, client, server_environment, system_prompts, write_dotenv
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
from tests.e2e.test_run_cap import REFUSED, flood, lingering

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)]

#: Seconds within which a turn on a frozen database reaches the model (the
#: guarantee is 5 s; the margin is for a loaded test machine).
FROZEN_TURN_S = 6.0
UNAVAILABLE = "long-term memory is unavailable this turn"
LINGER = {"messages": [{"role": "user", "content": "linger"}]}


def database_processes(pgdata: Path) -> list[psutil.Process]:
    """The embedded PostgreSQL's postmaster and its children."""
    from mnemo.stores.embedded_postgres import server_info

    info = server_info(pgdata)
    assert info is not None, "the embedded PostgreSQL is not running"
    postmaster = psutil.Process(info.pid)
    return [postmaster, *postmaster.children(recursive=True)]


def signal_each(processes: list[psutil.Process], sig: signal.Signals) -> None:
    """``sig`` to each of ``processes``, leaving out one that has ended since it was listed (a
    backend already exiting then: once the postmaster runs again, it reaps it)."""
    for proc in processes:
        try:
            os.kill(proc.pid, sig)
        except ProcessLookupError:
            pass


async def reached_model(stub, text: str, started: float, limit: float) -> float:
    """Seconds after ``started`` at which the model received a turn saying ``text``."""
    while not any(text in str(r["messages"][-1].get("content")) for r in stub.requests):
        assert time.monotonic() - started < limit, f"{text!r} has not reached the model after {limit} s"
        await asyncio.sleep(0.1)
    return time.monotonic() - started


async def linger(c, user: str) -> dict:
    """A run of ``user`` the stub model holds until released, on a new thread."""
    thread = (await c.threads.create())["thread_id"]
    return await c.runs.create(thread, "agent", input=LINGER, context={"user_id": user})


async def until(check, what: str, server: DevServer, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not await check():
        assert time.monotonic() < deadline, f"{what} after {limit} s:\n{server.output()}"
        await asyncio.sleep(0.2)


async def test_a_frozen_postgres_holds_no_turn_and_the_cap_still_holds(workdir, stub, tmp_path):
    pgdata = tmp_path / "pgdata"
    write_dotenv(workdir, stub, MNEMO_PGDATA=str(pgdata), POSTGRES_URI="")
    server = DevServer(workdir, server_environment(), config="langgraph.postgres.json")
    server.start()
    frozen: list[psutil.Process] = []
    try:
        zhou, li, hog = client(server, "u_zhou"), client(server, "u_li"), client(server, "u_hog")
        started = time.monotonic()
        run = await chat(zhou, "Hello, I'm Zhou and I live in Hangzhou.", user_id="u_zhou")
        healthy_s = time.monotonic() - started
        assert run["status"] == "success", server.output()
        await chat(li, "Hello, I'm Li.", user_id="u_li")  # the precondition: memory works on this PostgreSQL
        assert UNAVAILABLE not in system_prompts(stub)[-1]
        await chat(zhou, "Where do I live?", user_id="u_zhou")
        assert 'city: "Hangzhou"' in system_prompts(stub)[-1], server.output()
        # Two of u_hog's runs hold their leases in PostgreSQL when it freezes.
        held = [await linger(hog, "u_hog") for _ in range(2)]

        async def both_held() -> bool:
            return lingering(stub) == 2

        await until(both_held, "the two runs are not held", server)

        threads = [(await c.threads.create())["thread_id"] for c in (zhou, li)]
        frozen = database_processes(pgdata)
        signal_each(frozen, signal.SIGSTOP)
        started = time.monotonic()
        runs = await asyncio.gather(
            *(
                c.runs.create(
                    thread, "agent", input={"messages": [{"role": "user", "content": text}]}, context={"user_id": u}
                )
                for c, u, thread, text in (
                    (zhou, "u_zhou", threads[0], "Frozen one: what is my city?"),
                    (li, "u_li", threads[1], "Frozen two: hello again."),
                )
            )
        )
        seen = await asyncio.gather(*(reached_model(stub, text, started, 60) for text in ("Frozen one", "Frozen two")))
        for c, r in zip((zhou, li), runs, strict=True):
            await asyncio.wait_for(c.runs.join(r["thread_id"], r["run_id"]), 60)
        ended = time.monotonic() - started
        print(
            f"healthy turn {healthy_s:.1f} s; frozen: reached the model after {seen[0]:.1f} / {seen[1]:.1f} s, "
            f"both runs ended after {ended:.1f} s"
        )
        for c, r in zip((zhou, li), runs, strict=True):
            assert (await c.runs.get(r["thread_id"], r["run_id"]))["status"] == "success", server.output()
        prompts = [p for p in system_prompts(stub) if UNAVAILABLE in p]
        assert len(prompts) == 2, server.output()  # both turns answered without memory, saying so
        assert max(seen) < FROZEN_TURN_S, (seen, server.output())

        # The cap while PostgreSQL is silent: counted on this server, with the runs
        # holding PostgreSQL leases, so of two more runs one gets through.
        more, _ = await flood(server, "u_hog", batch=2, parallel=0)  # one batch: both pass the 429's count

        async def settled() -> bool:
            statuses = [(await hog.runs.get(r["thread_id"], r["run_id"]))["status"] for r in more]
            return sorted(statuses) == ["error", "running"] and lingering(stub) == 3

        await until(settled, "of two more runs, not one through and one refused", server)
        statuses = [(await hog.runs.get(r["thread_id"], r["run_id"]))["status"] for r in more]
        refused = more[statuses.index("error")]
        assert REFUSED in str(await hog.runs.join(refused["thread_id"], refused["run_id"]))

        signal_each(frozen, signal.SIGCONT)
        frozen = []
        stub.release()
        for r in [*held, *more]:
            await asyncio.wait_for(hog.runs.join(r["thread_id"], r["run_id"]), 60)
        run = await chat(zhou, "And now, where do I live?", user_id="u_zhou")
        assert run["status"] == "success", server.output()
        assert 'city: "Hangzhou"' in system_prompts(stub)[-1], server.output()  # memory is back
    finally:
        signal_each(frozen, signal.SIGCONT)  # never leave a stopped PostgreSQL behind
        stub.release()
        server.stop()


async def test_a_user_whose_runs_ended_while_postgres_was_frozen_is_not_locked_out(workdir, stub, tmp_path):
    """Issue 56 point 5: a user's runs holding every lease of the cap end while
    PostgreSQL is stopped, so their releases miss the deadline; once it is resumed
    the user's next turn is accepted while those leases would still hold (before,
    refused "3 of your runs are in progress" until their 60 s lifetime ran out),
    and the ended runs' rows are deleted."""
    import psycopg

    from mnemo.stores.embedded_postgres import DEFAULT_DATABASE, server_info
    from server.postgres_leases import TABLE
    from server.run_cap import DEFAULT_MAX_RUNS_PER_USER as CAP

    pgdata = tmp_path / "pgdata"
    write_dotenv(workdir, stub, MNEMO_PGDATA=str(pgdata), POSTGRES_URI="")
    server = DevServer(workdir, server_environment(), config="langgraph.postgres.json")
    server.start()
    frozen: list[psutil.Process] = []
    try:
        back = client(server, "u_back")
        held = [await linger(back, "u_back") for _ in range(CAP)]

        async def all_held() -> bool:
            return lingering(stub) == CAP

        await until(all_held, "the runs are not held", server)
        info = server_info(pgdata)
        assert info is not None
        uri = info.get_uri(database=DEFAULT_DATABASE)

        async def leases() -> list[tuple[str, object, object]]:
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
                return await (
                    await conn.execute(f"SELECT run_id, expires_at, now() FROM {TABLE} WHERE owner = 'u_back'")
                ).fetchall()

        before = await leases()
        assert sorted(row[0] for row in before) == sorted(r["run_id"] for r in held)  # the cap, in PostgreSQL
        lapse = min(row[1] for row in before)  # the earliest they would lapse: no renewal while frozen

        frozen = database_processes(pgdata)
        signal_each(frozen, signal.SIGSTOP)
        stub.release()
        for r in held:
            await asyncio.wait_for(back.runs.join(r["thread_id"], r["run_id"]), 60)

        async def releases_failed() -> bool:
            return server.output(tail=200_000).count("release failed") >= CAP

        await until(releases_failed, "the releases did not fail while frozen", server)
        signal_each(frozen, signal.SIGCONT)
        frozen = []
        thawed = time.monotonic()

        async def reconciled() -> bool:
            return not {row[0] for row in await leases()} & {r["run_id"] for r in held}

        await until(reconciled, "the ended runs' leases are still in PostgreSQL", server)
        reconciled_s = time.monotonic() - thawed
        async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
            now = (await (await conn.execute("SELECT now()")).fetchone())[0]
        print(f"the ended runs' leases given back {reconciled_s:.1f} s after SIGCONT (lapsing at {lapse}, now {now})")
        assert now < lapse, server.output()  # given back, not lapsed
        # The user has the whole cap again, taken in PostgreSQL (not counted on this server alone).
        stub.released.clear()
        again = [await linger(back, "u_back") for _ in range(CAP)]

        async def all_taken() -> bool:
            return lingering(stub) == 2 * CAP and len(await leases()) == CAP

        await until(all_taken, "the user's next runs are not all running, or not in PostgreSQL", server)
        assert sorted(row[0] for row in await leases()) == sorted(r["run_id"] for r in again)
        stub.release()
        for r in again:
            await asyncio.wait_for(back.runs.join(r["thread_id"], r["run_id"]), 60)
            assert (await back.runs.get(r["thread_id"], r["run_id"]))["status"] == "success", server.output()
    finally:
        signal_each(frozen, signal.SIGCONT)  # never leave a stopped PostgreSQL behind
        stub.release()
        server.stop()
