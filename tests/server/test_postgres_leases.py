"""PostgreSQL's run leases (server/postgres_leases.py) across an outage: one verdict
on PostgreSQL for the process (the store's), a lock wait bounded below the call's
deadline, and what an outage leaves behind reconciled once PostgreSQL answers.
Through ``./scripts/dev``: tests/e2e/test_postgres_frozen.py."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

import server.postgres_leases as module
from harness.store_backends import HashEmbeddings
from server.postgres_leases import TABLE, LeaseNotTakenError, LeasesUnreachableError, PostgresLeases
from server.run_cap import DEFAULT_MAX_RUNS_PER_USER
from server.run_lease import LocalLeases, run_lease

CAP = DEFAULT_MAX_RUNS_PER_USER


class Verdict:
    """A store's verdict on PostgreSQL as the test sets it (``MnemoPostgresStore.answering``)."""

    def __init__(self) -> None:
        self.answers = True
        self.asked = 0
        self.marked = 0

    async def answering(self) -> bool:
        self.asked += 1
        return self.answers

    def mark_unreachable(self) -> None:
        self.marked += 1


@pytest.fixture
async def db(pg):
    """A database for the leases, and a pool on it whose own ``lock_timeout`` is a minute."""
    from mnemo.stores.postgres_setup import make_pool

    uri = pg.create_database("postgres_leases", vector=False)
    async with make_pool(uri, {"min_size": 2, "kwargs": {"options": "-c lock_timeout=60000"}}) as pool:
        await pool.wait()
        yield uri, pool
    pg.drop_database("postgres_leases")


@pytest.fixture
def made(monkeypatch):
    """The leases a test makes; their background reconciliation cancelled after it."""
    made: list[PostgresLeases] = []
    yield made
    for leases in made:
        if leases._keeper is not None:
            leases._keeper.cancel()


async def held(pool, owner: str) -> list[str]:
    async with pool.connection() as conn:
        rows = await (
            await conn.execute(f"SELECT run_id FROM {TABLE} WHERE owner = %s ORDER BY run_id", (owner,))
        ).fetchall()
    return [row["run_id"] for row in rows]


async def until(check, what: str) -> None:
    for _ in range(300):
        if await check():
            return
        await asyncio.sleep(0.05)
    pytest.fail(what)


async def test_a_release_postgres_did_not_take_is_given_back_once_it_answers(db, made, monkeypatch):
    monkeypatch.setattr(module, "RECONCILE_EVERY_S", 0.05)
    _, pool = db
    verdict = Verdict()
    leases = PostgresLeases(pool, verdict)
    made.append(leases)
    runs = [f"f{i}" for i in range(CAP)]
    for run in runs:
        assert await leases.acquire("fay", run, CAP)
    verdict.answers = False  # the runs end while PostgreSQL does not answer
    for run in runs:
        await leases.release("fay", run)  # never raises
    asked = verdict.asked

    async def tried_again() -> bool:
        return verdict.asked >= asked + 3

    await until(tried_again, "the release is not tried again")
    assert await held(pool, "fay") == runs  # not given back while PostgreSQL does not answer
    assert verdict.marked == 0  # the pool was not asked
    verdict.answers = True

    async def given_back() -> bool:
        return await held(pool, "fay") == []

    await until(given_back, "the ended runs' leases are still held once PostgreSQL answers")


async def test_the_users_next_acquire_gives_back_their_ended_leases(db, made, monkeypatch):
    """Before the background reconciliation, the user's own next acquire deletes
    the leases this server failed to give back, in its own transaction."""
    monkeypatch.setattr(module, "RECONCILE_EVERY_S", 3600)
    _, pool = db
    verdict = Verdict()
    leases = PostgresLeases(pool, verdict)
    made.append(leases)
    for i in range(CAP):
        assert await leases.acquire("gil", f"g{i}", CAP)
        assert await leases.acquire("hal", f"h{i}", CAP)
    verdict.answers = False
    for i in range(CAP):
        await leases.release("gil", f"g{i}")
        await leases.release("hal", f"h{i}")
    verdict.answers = True
    assert len(await held(pool, "gil")) == CAP  # the precondition: nothing given back yet
    assert await leases.acquire("gil", "g-next", CAP)
    assert await held(pool, "gil") == ["g-next"]
    assert len(await held(pool, "hal")) == CAP  # another user's are left to the reconciliation
    assert await leases.acquire("hal", "h-next", CAP) and await held(pool, "hal") == ["h-next"]


async def test_a_run_counted_here_is_recorded_once_postgres_answers(db, made, monkeypatch):
    monkeypatch.setattr(module, "RECONCILE_EVERY_S", 0.05)
    import server.run_lease as run_lease_module

    monkeypatch.setattr(run_lease_module, "_LOCAL", LocalLeases())
    _, pool = db
    verdict = Verdict()
    leases = PostgresLeases(pool, verdict)
    made.append(leases)
    assert await leases.acquire("setup", "s0", CAP)  # the table
    verdict.answers = False
    async with run_lease(leases, "ida", "i0"):
        assert run_lease_module._LOCAL.held("ida") == 1  # counted here
        assert await held(pool, "ida") == []
        verdict.answers = True

        async def recorded() -> bool:
            return await held(pool, "ida") == ["i0"]

        await until(recorded, "the run counted here is not recorded as a lease")  # it still runs: it counts
    assert await held(pool, "ida") == [] and run_lease_module._LOCAL.held("ida") == 0


async def test_with_the_store_judging_postgres_down_no_lease_asks_the_pool(pg, made, monkeypatch):
    """One verdict for the process: while the store judges PostgreSQL down, the
    leases wait for its check (one, shared by every caller), never for the pool;
    once the check answers, they take leases again."""
    import mnemo.stores.postgres as store_module
    from mnemo.stores.factory import open_store

    uri = pg.create_database("leases_verdict")
    index = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
    async with open_store(postgres_uri=uri, index=index) as store:
        leases = PostgresLeases(store.conn, store)
        made.append(leases)
        assert await leases.acquire("jo", "j0", CAP)  # the precondition: it asks the pool and takes
        connection, asked_pool, checks = store.conn.connection, [], []
        gate = asyncio.Event()
        answer = [False]

        def asking(*args, **kwargs):
            asked_pool.append(args)
            return connection(*args, **kwargs)

        async def check(conninfo: str) -> bool:
            checks.append(conninfo)
            await gate.wait()
            return answer[0]

        monkeypatch.setattr(store.conn, "connection", asking)
        monkeypatch.setattr(store_module, "_reachable", check)
        store._down = True  # the store's verdict: PostgreSQL refused a call
        tries = [asyncio.ensure_future(leases.acquire("jo", f"j{i}", CAP)) for i in range(1, 8)]
        await until(lambda: _true(checks), "no check started")
        gate.set()
        results = await asyncio.gather(*tries, return_exceptions=True)
        assert all(isinstance(r, LeasesUnreachableError) for r in results), results
        assert len(checks) == 1 and asked_pool == []  # one check for all, the pool never asked
        answer[0] = True
        assert await leases.acquire("jo", "j1", CAP)  # the check answers: the pool is asked again
        assert len(checks) == 2 and len(asked_pool) >= 1 and store._down is False
    pg.drop_database("leases_verdict")


async def _true(items: list) -> bool:
    return bool(items)


async def test_a_lock_held_elsewhere_refuses_the_lease_before_its_deadline(db, made, monkeypatch):
    """The lease's lock wait is bounded on the server below the client's deadline:
    a lock held elsewhere ends the acquire as PostgreSQL's lock timeout, which
    judges nothing down; the run counts here and the next acquire asks the pool."""
    assert module.LOCK_TIMEOUT_MS < module.DEADLINE_S * 1000
    uri, pool = db
    monkeypatch.setattr(module, "DEADLINE_S", 20.0)  # only the lock timeout can end the wait (the pool's is 60 s)
    verdict = Verdict()
    leases = PostgresLeases(pool, verdict)
    made.append(leases)
    assert await leases.acquire("kim", "k0", CAP)
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as holder:
        await holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (f"{TABLE}:kim",))
        with pytest.raises(LeaseNotTakenError) as raised:
            await leases.acquire("kim", "k1", CAP)
        assert type(raised.value) is LeaseNotTakenError and "LockNotAvailable" in str(raised.value)
        assert verdict.marked == 0  # not judged unreachable
        assert await leases.acquire("lee", "l0", CAP)  # another user's lease is taken meanwhile
    asked = verdict.asked
    assert await leases.acquire("kim", "k1", CAP) and verdict.asked == asked + 1
    assert await held(pool, "kim") == ["k0", "k1"]
