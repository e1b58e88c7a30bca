"""mnemo.stores.postgres_errors on the PostgreSQL store: only a failed
connection is an outage; a deadlock, a serialization failure or a lock timeout
runs the call again, within the call's deadline; any other error is named as
it is, the store not marked down."""

from __future__ import annotations

import asyncio

import psycopg
import pytest
from langgraph.store.postgres import AsyncPostgresStore
from psycopg import errors

import mnemo.stores.postgres_errors as errors_module
from harness.store_backends import SKIP_POSTGRES_REASON, HashEmbeddings, skip_postgres
from mnemo import StoreOperationError, StoreUnavailableError
from mnemo.stores.factory import open_store
from mnemo.stores.guard import guarded
from mnemo.stores.postgres_errors import CONFLICT_ATTEMPTS, is_connection_failure

pytestmark = pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)

INDEX = {"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}
NS = ("u_errors", "notes")


@pytest.fixture
async def store(pg):
    uri = pg.create_database("store_errors")
    async with open_store(postgres_uri=uri, index=INDEX) as opened:
        yield opened
    pg.drop_database("store_errors")


def failing(monkeypatch, *raised: BaseException, taking: float = 0) -> list[int]:
    """Upstream's ``abatch`` raises ``raised`` one per call (each after ``taking``
    seconds), then runs; the calls made, as a one-item list."""
    upstream = AsyncPostgresStore.abatch
    calls = [0]

    async def abatch(self, ops):
        calls[0] += 1
        if calls[0] <= len(raised):
            await asyncio.sleep(taking)
            raise raised[calls[0] - 1]
        return await upstream(self, ops)

    monkeypatch.setattr(AsyncPostgresStore, "abatch", abatch)
    return calls


async def test_a_deadlock_is_run_again_and_succeeds(store, monkeypatch):
    calls = failing(monkeypatch, errors.DeadlockDetected("deadlock detected"))
    await store.aput(NS, "k", {"text": "kept"})
    assert calls == [2]
    assert (await store.aget(NS, "k")).value == {"text": "kept"}
    assert store._down is False


async def test_a_serialization_failure_is_run_again_and_succeeds(store, monkeypatch):
    calls = failing(monkeypatch, *[errors.SerializationFailure("could not serialize access")] * 2)
    await store.aput(NS, "k", {"text": "kept"})
    assert calls == [3]
    assert (await store.aget(NS, "k")).value == {"text": "kept"}


async def test_a_lock_timeout_is_run_again_and_succeeds(store, monkeypatch):
    calls = failing(monkeypatch, errors.LockNotAvailable("canceling statement due to lock timeout"))
    await store.aput(NS, "k", {"text": "kept"})
    assert calls == [2] and store._down is False
    assert (await store.aget(NS, "k")).value == {"text": "kept"}


async def test_a_conflict_is_not_run_again_past_the_calls_deadline(store, monkeypatch):
    """Each attempt waits as a lock wait does; none starts ``CONFLICT_RETRY_WITHIN_S``
    after the call's first conflict, whatever attempts are left."""
    import mnemo.stores.postgres as store_module

    monkeypatch.setattr(store_module, "CONFLICT_RETRY_WITHIN_S", 0.5)
    lock_timeout = errors.LockNotAvailable("canceling statement due to lock timeout")
    calls = failing(monkeypatch, *[lock_timeout] * CONFLICT_ATTEMPTS, taking=0.4)
    with pytest.raises(StoreOperationError, match=r"lock timeout \(LockNotAvailable, SQLSTATE 55P03\)"):
        await store.aput(NS, "k", {"text": "x"})
    assert 2 <= calls[0] < CONFLICT_ATTEMPTS  # run again, then stopped by the deadline, not by the count
    from mnemo.stores.postgres_setup import LOCK_TIMEOUT_S, STATEMENT_TIMEOUT_S

    assert errors_module.CONFLICT_RETRY_WITHIN_S == STATEMENT_TIMEOUT_S >= 2 * LOCK_TIMEOUT_S  # a lock wait run again


async def test_a_conflict_that_stays_is_named_after_the_bounded_attempts(store, monkeypatch):
    calls = failing(monkeypatch, *[errors.DeadlockDetected("deadlock detected")] * CONFLICT_ATTEMPTS)
    with pytest.raises(StoreOperationError) as raised:
        await store.aget(NS, "k")
    assert str(raised.value) == (
        f"PostgreSQL is up but failed this store call after {CONFLICT_ATTEMPTS} attempts: "
        "deadlock detected (DeadlockDetected, SQLSTATE 40P01); try again"
    )
    assert calls == [CONFLICT_ATTEMPTS] and store._down is False
    assert await store.aget(NS, "k") is None  # the next call runs


@pytest.mark.parametrize(
    ("error", "named"),
    [
        (errors.QueryCanceled("canceling statement due to statement timeout"), "QueryCanceled, SQLSTATE 57014"),
        (errors.DiskFull("could not extend file: No space left on device"), "DiskFull, SQLSTATE 53100"),
        (errors.TooManyConnections("sorry, too many clients already"), "TooManyConnections, SQLSTATE 53300"),
    ],
)
async def test_other_errors_of_a_reachable_server_are_named_not_an_outage(store, monkeypatch, error, named):
    calls = failing(monkeypatch, error)
    with pytest.raises(StoreOperationError) as raised:
        await store.aput(NS, "k", {"text": "x"})
    assert str(raised.value) == f"PostgreSQL is up but failed this store call: {error} ({named}); try again"
    assert calls == [1] and store._down is False  # not run again, not down


@pytest.mark.parametrize(
    "error",
    [
        psycopg.OperationalError('connection to server at "127.0.0.1", port 5 failed: Connection refused'),
        errors.AdminShutdown("terminating connection due to administrator command"),
        errors.ConnectionFailure("server closed the connection unexpectedly"),
    ],
)
async def test_a_failed_connection_is_an_outage(store, monkeypatch, error):
    failing(monkeypatch, error)
    with pytest.raises(StoreUnavailableError, match=rf"^PostgreSQL cannot be reached \({type(error).__name__}\)"):
        await store.aget(NS, "k")
    assert store._down is True
    assert await store.aget(NS, "k") is None  # reachable again: the next call checks, then runs
    assert store._down is False


def test_only_connection_errors_are_connection_failures():
    from psycopg_pool import PoolTimeout

    assert is_connection_failure(PoolTimeout("couldn't get a connection after 30.00 sec"))
    assert is_connection_failure(errors.CannotConnectNow("the database system is starting up"))
    assert not is_connection_failure(errors.DeadlockDetected("deadlock detected"))
    assert not is_connection_failure(errors.LockNotAvailable("lock timeout"))
    assert errors_module.is_conflict(errors.LockNotAvailable("lock timeout"))
    assert not is_connection_failure(ValueError("not a database error"))


async def test_a_real_lock_timeout_is_run_again_and_the_write_lands(pg, monkeypatch):
    """A row another transaction holds past the store's ``lock_timeout``
    (PostgreSQL's own error, not a mock): the put is run again, and lands once
    the row is free; the store stays up."""
    uri = pg.create_database("lock_timeout")
    async with open_store(
        postgres_uri=uri, index=INDEX, pool_config={"kwargs": {"options": "-c lock_timeout=300"}}
    ) as store:
        await store.aput(NS, "k", {"text": "first"})
        upstream, calls = AsyncPostgresStore.abatch, []

        async def counted(self, ops):
            calls.append(ops)
            return await upstream(self, ops)

        async with await psycopg.AsyncConnection.connect(uri) as holder:
            await holder.execute("SELECT 1 FROM store WHERE key = 'k' FOR UPDATE")  # held until rollback
            monkeypatch.setattr(AsyncPostgresStore, "abatch", counted)
            write = asyncio.ensure_future(store.aput(NS, "k", {"text": "second"}))
            while len(calls) < 2 and not write.done():  # the first attempt timed out on the lock
                await asyncio.sleep(0.01)
            await holder.rollback()
            await write
        assert len(calls) >= 2 and store._down is False
        assert (await store.aget(NS, "k")).value == {"text": "second"}
    pg.drop_database("lock_timeout")


async def test_a_lock_that_stays_is_named_after_the_calls_deadline(pg, monkeypatch):
    import mnemo.stores.postgres as store_module

    monkeypatch.setattr(store_module, "CONFLICT_RETRY_WITHIN_S", 0.5)
    uri = pg.create_database("lock_stays")
    async with open_store(
        postgres_uri=uri, index=INDEX, pool_config={"kwargs": {"options": "-c lock_timeout=200"}}
    ) as store:
        await store.aput(NS, "k", {"text": "first"})
        async with await psycopg.AsyncConnection.connect(uri) as holder:
            await holder.execute("SELECT 1 FROM store WHERE key = 'k' FOR UPDATE")
            with pytest.raises(StoreOperationError, match=r"lock timeout \(LockNotAvailable, SQLSTATE 55P03\)"):
                await store.aput(NS, "k", {"text": "second"})
            assert store._down is False
            await holder.rollback()
        assert (await store.aget(NS, "k")).value == {"text": "first"}
    pg.drop_database("lock_stays")


async def test_the_upstream_large_batches_pass_through_the_guard(pg):
    """langgraph's ``test_large_batches_async`` (libs/checkpoint-postgres),
    over :func:`mnemo.stores.guard.guarded` as the graph uses the store:
    every call its own transaction, reads refreshing TTLs (UPDATEs) while
    others put and delete the same rows: deadlocks, run again. (Upstream's
    N=1000 is ten times this; at 100, before the fix, 2 of the 4 runs tried
    failed; a deadlock every time: test_a_real_deadlock_is_run_again...; later,
    in a fresh clone on a loaded machine, a lock wait past ``lock_timeout``:
    now run again too)"""
    n, m = 100, 10
    uri = pg.create_database("large_batches")
    # 6,000 calls queue for 10 connections: on a loaded machine the last waited past the pool's
    # 30 s (PoolTimeout, an outage); the queue is not what this test is about.
    queue = {"timeout": 300}
    async with open_store(postgres_uri=uri, index=INDEX, ttl={"default_ttl": 5}, pool_config=queue) as raw:
        store = guarded(raw)
        calls = []
        for j in range(m):
            ns = ("test", "foo", "bar", "baz", str(j % 2))
            for i in range(n):
                calls += [
                    store.aput(ns, f"key{i}", value={"foo": f"bar{i}"}),
                    store.aget(ns, f"key{i}"),
                    store.alist_namespaces(prefix=None, max_depth=j + 1),
                    store.asearch(("test",)),
                    store.aput(ns, f"key{i}", value={"foo": f"bar{i}"}),
                    store.adelete(ns, f"key{i}"),
                ]
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert [r for r in results if isinstance(r, BaseException)] == []
        assert len(results) == m * n * 6
    pg.drop_database("large_batches")


async def test_a_real_deadlock_is_run_again_and_the_write_lands(pg):
    """PostgreSQL's own deadlock: another transaction holds row ``a`` and
    then wants ``b``, which the store's put of ``b`` and ``a`` (one statement)
    already holds; the store's statement, waiting first, is the one aborted."""
    from langgraph.store.base import PutOp

    uri = pg.create_database("deadlock")
    async with open_store(postgres_uri=uri, index=INDEX) as store:
        await store.abatch([PutOp(NS, "a", {"text": "a0"}), PutOp(NS, "b", {"text": "b0"})])
        async with await psycopg.AsyncConnection.connect(uri) as holder:
            await holder.execute("UPDATE store SET value = '{\"text\": \"a1\"}' WHERE key = 'a'")
            write = asyncio.ensure_future(
                store.abatch([PutOp(NS, "b", {"text": "b2"}), PutOp(NS, "a", {"text": "a2"})])
            )
            async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as watcher:
                while not await (
                    await watcher.execute("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
                ).fetchone():
                    await asyncio.sleep(0.05)  # the store's put holds b and waits for a
            await holder.execute("UPDATE store SET value = '{\"text\": \"b1\"}' WHERE key = 'b'")  # the cycle
            await holder.commit()
            await write
        assert {k: (await store.aget(NS, k)).value["text"] for k in "ab"} == {"a": "a2", "b": "b2"}
        assert store._down is False
    pg.drop_database("deadlock")
