"""The run lease (server/run_lease.py) without a server: taken atomically up to
the cap, given back when the run ends, shared by every pool on one PostgreSQL
and lapsing when its server stops renewing it. Through ``./scripts/dev``:
tests/e2e/test_run_cap.py."""

from __future__ import annotations

import asyncio

import pytest

from server.postgres_leases import TABLE, PostgresLeases
from server.run_cap import DEFAULT_MAX_RUNS_PER_USER
from server.run_lease import LocalLeases, RunCapReachedError, leases_for, run_lease, served

CAP = DEFAULT_MAX_RUNS_PER_USER


async def test_parallel_acquires_take_at_most_the_cap():
    leases = LocalLeases()
    got = await asyncio.gather(*(leases.acquire("alice", f"r{i}", CAP) for i in range(20)))
    assert got.count(True) == CAP and leases.held("alice") == CAP
    assert await leases.acquire("alice", "r0", CAP)  # a retried run keeps its own lease
    assert await leases.acquire("bob", "b0", CAP)  # another user is not held back
    await leases.release("alice", "r0")
    assert await leases.acquire("alice", "r19", CAP) and leases.held("alice") == CAP


async def test_a_lease_is_given_back_however_the_run_ends():
    leases = LocalLeases()
    with pytest.raises(ZeroDivisionError):
        async with run_lease(leases, "alice", "r1"):
            assert leases.held("alice") == 1
            raise ZeroDivisionError
    assert leases.held("alice") == 0
    held = [run_lease(leases, "alice", f"r{i}") for i in range(CAP)]
    for lease in held:
        await lease.__aenter__()
    with pytest.raises(RunCapReachedError, match=f"{CAP} of your runs are in progress"):
        async with run_lease(leases, "alice", "one more"):
            pass
    for lease in held:
        await lease.__aexit__(None, None, None)
    assert leases.held("alice") == 0


def _config(user: str, role: str = "user") -> dict:
    """A run's config as the server merges the authenticated user into it."""
    auth_user = {"identity": user, "role": role}
    return {"configurable": {"run_id": f"run-{user}", "langgraph_auth_user_id": user, "langgraph_auth_user": auth_user}}


async def test_the_served_graph_takes_a_lease_only_to_execute_a_users_run(monkeypatch):
    from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime

    import server.run_lease as module

    leases = LocalLeases()
    monkeypatch.setattr(module, "_LOCAL", leases)
    graph = object()
    factory = served(graph)
    execute, read = (
        _ExecutionRuntime(access_context="threads.create_run", store=None),
        _ReadRuntime(access_context="threads.read", store=None),
    )
    async with factory(_config("alice"), execute) as got:
        assert got is graph and leases.held("alice") == 1
    assert leases.held("alice") == 0
    async with factory(_config("alice"), read), factory(_config("ops", "admin"), execute):
        assert leases.held("alice") == 0 and leases.held("ops") == 0  # a state read, an admin: no lease
    for i in range(CAP):
        await leases.acquire("alice", f"other{i}", CAP)
    with pytest.raises(RunCapReachedError):
        async with factory(_config("alice"), execute):
            pass


@pytest.fixture
async def pools(pg):
    """Two pools on one PostgreSQL: two servers sharing it."""
    from mnemo.stores.postgres_setup import make_pool

    uri = pg.create_database("run_leases", vector=False)
    async with make_pool(uri, {"min_size": 8}) as a, make_pool(uri, {"min_size": 8}) as b:
        await a.wait()
        await b.wait()  # 16 connections open: the acquires below really run at once
        yield a, b


async def test_two_servers_on_one_postgres_share_the_cap(pools):
    from psycopg_pool import AsyncConnectionPool

    a, b = PostgresLeases(pools[0]), PostgresLeases(pools[1])
    await a.acquire("setup", "s0", CAP)  # the table, before the race
    for user in ("alice", *(f"u{n}" for n in range(5))):  # a few rounds: a race shows in one
        tries = [(a if i % 2 else b).acquire(user, f"{user}-r{i}", CAP) for i in range(16)]
        assert (await asyncio.gather(*tries)).count(True) == CAP, user
    assert not await a.acquire("alice", "late", CAP) and await b.acquire("bob", "b0", CAP)
    refused = [i for i in range(16) if not await (a if i % 2 else b).acquire("alice", f"x{i}", CAP)]
    assert len(refused) == 16  # still full, from either side
    async with pools[0].connection() as conn:
        held = await (await conn.execute(f"SELECT run_id FROM {TABLE} WHERE owner = 'alice'")).fetchall()
    first = next(iter(held[0].values()))
    await b.release("alice", first)
    assert await a.acquire("alice", "late", CAP)

    class Store:
        conn = pools[0]

    assert isinstance(Store.conn, AsyncConnectionPool) and leases_for(Store()) is leases_for(Store())
    assert isinstance(leases_for(object()), LocalLeases)


async def test_a_dead_servers_leases_lapse(pools):
    a = PostgresLeases(pools[0])
    for i in range(CAP):
        assert await a.acquire("carol", f"c{i}", CAP)
    assert not await a.acquire("carol", "next", CAP)
    async with pools[0].connection() as conn:  # as if no renewal came for LEASE_TTL_S
        await conn.execute(f"UPDATE {TABLE} SET expires_at = now() - interval '1 second' WHERE owner = 'carol'")
    assert await a.acquire("carol", "next", CAP)
    await a.renew("next")
    async with pools[0].connection() as conn:
        row = await (
            await conn.execute(f"SELECT expires_at > now() AS live FROM {TABLE} WHERE run_id = 'next'")
        ).fetchone()
    assert row["live"]


async def test_with_postgres_unreachable_a_run_counts_on_its_server(monkeypatch):
    """PostgreSQL down: turns go on without memory (tests/e2e/test_postgres_platform.py),
    so the cap does too, counted in this process until the database is back."""
    import server.run_lease as module
    from harness.devserver import free_port
    from mnemo.stores.postgres_setup import make_pool

    local = LocalLeases()
    monkeypatch.setattr(module, "_LOCAL", local)
    async with make_pool(f"postgresql://127.0.0.1:{free_port()}/none", {"min_size": 0}) as pool:
        down = PostgresLeases(pool)
        async with run_lease(down, "dora", "d0"):
            assert local.held("dora") == 1  # counted here, not lost
            for i in range(1, CAP):
                await local.acquire("dora", f"d{i}", CAP)
            asked = []
            monkeypatch.setattr(pool, "connection", lambda *a, **k: asked.append(a) or pytest.fail("asked again"))
            with pytest.raises(RunCapReachedError):
                async with run_lease(down, "dora", "one more"):  # at once: the failure is remembered
                    pass
        assert local.held("dora") == CAP - 1 and asked == []


async def test_a_lease_past_its_deadline_counts_here_tells_the_store_and_is_given_back_if_taken_late(
    pools, monkeypatch
):
    """PostgreSQL that answers after the deadline (a hung server, resumed): the
    acquire gives up at ``DEADLINE_S``, the store on the pool is told, and a
    lease PostgreSQL took after all is deleted, not left to count for 60 s."""
    import server.postgres_leases as module
    from server.postgres_leases import LeasesUnreachableError

    class Store:
        marked = 0

        def mark_unreachable(self) -> None:
            self.marked += 1

    store = Store()
    leases = PostgresLeases(pools[0], store)
    assert await leases.acquire("erin", "e0", CAP)  # the precondition: it answers in time
    await leases.release("erin", "e0")
    taken = []

    async def late(*args):
        try:
            await asyncio.sleep(10)  # no answer...
        except asyncio.CancelledError:  # ...until cancelled; psycopg then waits for the statement in flight,
            async with pools[0].connection() as conn:  # which lands (the acquire's COMMIT), and ends cancelled
                await conn.execute(
                    f"INSERT INTO {TABLE} (run_id, owner, expires_at) VALUES ('e1', 'erin', now() + interval '1 min')"
                )
            taken.append("e1")
            raise

    async def held() -> list:
        async with pools[0].connection() as conn:
            return await (await conn.execute(f"SELECT run_id FROM {TABLE} WHERE owner = 'erin'")).fetchall()

    monkeypatch.setattr(module, "DEADLINE_S", 0.1)
    monkeypatch.setattr(leases, "_acquire", late)
    with pytest.raises(LeasesUnreachableError, match="did not answer the lease's acquire within 0.1 s"):
        await leases.acquire("erin", "e1", CAP)
    assert store.marked == 1
    for _ in range(100):  # the lease PostgreSQL took after all is given back
        if taken and not await held():
            break
        await asyncio.sleep(0.1)
    assert taken == ["e1"] and await held() == []
