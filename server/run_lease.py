"""The run cap, held where a run enters the graph: every run of a user takes a
lease when the server starts its graph and gives it back when the run ends.

The 429 of ``create_run`` (``server/auth.py``) answers the common case early,
but it counts busy threads, which is not atomic: the runs of one
``/runs/batch``, or parallel requests, are all counted before any is busy, and
some routes (MCP) cannot carry a 429. The lease is the bound itself: :func:`served` wraps each graph of
``langgraph.json`` in a factory that the server enters for every run it
executes, whatever created it, and whose exit it awaits when the run ends
(done, failed or cancelled). A run over the cap fails at once with
:class:`RunCapReachedError`, before any node, so it holds no worker.

Leases live beside the store. On PostgreSQL (``langgraph.postgres.json``) they
are rows of ``mnemo_run_leases``, counted and taken in one transaction under a
per-user advisory lock, so two servers sharing the database share the cap; a
server that dies stops renewing its leases and they lapse after
:data:`LEASE_TTL_S`. On the in-memory store (one server process) they are a
set per user under a lock.

Every lease call on PostgreSQL has a deadline (:data:`DEADLINE_S`, on the
client: a server that does not answer never ends a statement itself). Past it,
or when PostgreSQL refuses, the run is counted on this server alone, with the
runs this server holds leases for in PostgreSQL, until PostgreSQL answers
again (docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph_sdk.runtime import ServerRuntime

from mnemo import MnemoError, run_caller
from server.run_cap import max_runs_per_user, refusal

logger = logging.getLogger(__name__)

#: Seconds a PostgreSQL lease outlives its last renewal (a crashed server's runs stop counting then).
LEASE_TTL_S = 60
#: Seconds between renewals of a running run's lease.
RENEW_EVERY_S = LEASE_TTL_S / 3
#: Seconds leases are kept in this process after PostgreSQL could not be reached.
UNREACHABLE_RETRY_S = 5.0
#: Seconds a lease call (connection, check and statements) may take on PostgreSQL
#: before the run is counted on this server instead.
DEADLINE_S = 2.0
#: ``lock_timeout`` of the lease's transaction: a live server that holds the
#: per-user lock longer (a lock storm) says so before :data:`DEADLINE_S`.
LOCK_TIMEOUT_MS = 1000
TABLE = "mnemo_run_leases"
_SETUP_LOCK = 0x6D6E656D6F5F726C  # "mnemo_rl": serialises CREATE TABLE between servers


class LeasesUnreachableError(Exception):
    """The database of the leases cannot be reached (the run counts on this server alone)."""


class RunCapReachedError(MnemoError, RuntimeError):
    """The user already has the cap's number of runs in progress (the run ends at once, as an error).
    A ``RuntimeError``: the platform shows the run's client the message of those only."""


class LocalLeases:
    """One server process's leases (the in-memory store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # runs may start on other threads' loops
        self._held: dict[str, set[str]] = {}

    async def acquire(self, owner: str, run_id: str, cap: int) -> bool:
        with self._lock:
            held = self._held.setdefault(owner, set())
            if run_id not in held and len(held) >= cap:
                return False
            held.add(run_id)
            return True

    def add(self, owner: str, run_id: str) -> None:
        """Count ``run_id`` whatever the cap (a run holding a lease in PostgreSQL)."""
        with self._lock:
            self._held.setdefault(owner, set()).add(run_id)

    async def renew(self, run_id: str) -> None:
        return None  # nothing lapses: the leases die with the process

    async def release(self, owner: str, run_id: str) -> None:
        with self._lock:
            self._held.get(owner, set()).discard(run_id)

    def held(self, owner: str) -> int:
        with self._lock:
            return len(self._held.get(owner, ()))


class PostgresLeases:
    """Leases as rows in PostgreSQL, shared by every server on the database."""

    def __init__(self, pool: Any, store: Any = None) -> None:
        self._pool = pool
        self._store = store  # MnemoPostgresStore on the same pool: one verdict on PostgreSQL for both
        self._ready = False
        self._down_until = 0.0

    def _unreachable(self) -> bool:
        return time.monotonic() < self._down_until or bool(getattr(self._store, "unreachable", bool)())

    def _silent(self, what: str) -> LeasesUnreachableError:
        """PostgreSQL did not answer ``what`` within :data:`DEADLINE_S`."""
        self._down_until = time.monotonic() + UNREACHABLE_RETRY_S
        if (mark := getattr(self._store, "mark_unreachable", None)) is not None:
            mark()  # the run's store calls then fail at once instead of each waiting
        return LeasesUnreachableError(f"PostgreSQL did not answer the lease's {what} within {DEADLINE_S} s")

    async def _within(self, what: str, call: Any, after: Callable[[], None] | None = None) -> Any:
        """``call``'s result, or :class:`LeasesUnreachableError` after
        :data:`DEADLINE_S`. Past it the call is cancelled, not awaited:
        psycopg's cancellation of a query on a server that does not answer
        waits up to 10 s for it (a statement in flight, a COMMIT, may still
        land) before closing the connection; ``after`` runs once it has ended."""
        task = asyncio.ensure_future(call)
        try:
            done, _ = await asyncio.wait({task}, timeout=DEADLINE_S)
        except asyncio.CancelledError:
            task.cancel()
            raise
        if done:
            return task.result()
        task.cancel()
        task.add_done_callback(lambda t: _after_deadline(t, after))
        raise self._silent(what)

    @contextlib.asynccontextmanager
    async def _connection(self, *, anyway: bool = False) -> AsyncIterator[Any]:
        """A pooled connection within ``CONNECT_TIMEOUT_S``, or :class:`LeasesUnreachableError`
        (at once for :data:`UNREACHABLE_RETRY_S` after a failure, so runs do not each wait)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        from mnemo import CONNECT_TIMEOUT_S

        if self._unreachable() and not anyway:
            raise LeasesUnreachableError("PostgreSQL was unreachable moments ago")
        try:
            async with self._pool.connection(timeout=CONNECT_TIMEOUT_S) as conn:
                yield conn
        except (PoolTimeout, psycopg.OperationalError) as exc:
            self._down_until = time.monotonic() + UNREACHABLE_RETRY_S
            raise LeasesUnreachableError(f"PostgreSQL cannot be reached ({type(exc).__name__})") from exc

    async def _setup(self, conn: Any) -> None:
        if self._ready:
            return
        async with conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SETUP_LOCK,))
            await conn.execute(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (run_id text PRIMARY KEY, owner text NOT NULL, "
                "expires_at timestamptz NOT NULL)"
            )
            await conn.execute(f"CREATE INDEX IF NOT EXISTS {TABLE}_owner_idx ON {TABLE} (owner)")
        self._ready = True

    async def acquire(self, owner: str, run_id: str, cap: int) -> bool:
        # Past the deadline the run counts here; a lease PostgreSQL took after all is given back.
        return bool(
            await self._within(
                "acquire", self._acquire(owner, run_id, cap), lambda: _background(self._give_back(run_id))
            )
        )

    async def _acquire(self, owner: str, run_id: str, cap: int) -> bool:
        async with self._connection() as conn:
            await self._setup(conn)
            # Pipelined: the statements go out together and the answer comes back once.
            async with conn.pipeline(), conn.transaction():
                await conn.execute(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}")
                # One transaction at a time per owner, on every server: count and take atomically
                # (the count's statement starts after the lock is held, so it sees every lease taken).
                await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{TABLE}:{owner}",))
                await conn.execute(f"DELETE FROM {TABLE} WHERE owner = %s AND expires_at < now()", (owner,))
                cursor = await conn.execute(
                    f"INSERT INTO {TABLE} (run_id, owner, expires_at) "
                    "SELECT %s, %s, now() + make_interval(secs => %s) "
                    f"WHERE (SELECT count(*) FROM {TABLE} WHERE owner = %s AND run_id <> %s) < %s "
                    "ON CONFLICT (run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at RETURNING run_id",
                    (run_id, owner, LEASE_TTL_S, owner, run_id, cap),
                )
                return await cursor.fetchone() is not None

    async def renew(self, run_id: str) -> None:
        await self._within(
            "renewal",
            self._execute(
                f"UPDATE {TABLE} SET expires_at = now() + make_interval(secs => %s) WHERE run_id = %s",
                (LEASE_TTL_S, run_id),
            ),
        )

    async def release(self, owner: str, run_id: str) -> None:
        await self._within("release", self._execute(f"DELETE FROM {TABLE} WHERE run_id = %s", (run_id,)))

    async def _give_back(self, run_id: str) -> None:
        """Delete a lease an acquire past its deadline may have taken (tried even while unreachable)."""
        await self._within("give-back", self._execute(f"DELETE FROM {TABLE} WHERE run_id = %s", (run_id,), anyway=True))

    async def _execute(self, sql: str, params: tuple[Any, ...], *, anyway: bool = False) -> None:
        async with self._connection(anyway=anyway) as conn:
            await conn.execute(sql, params)


_tasks: set[asyncio.Task[Any]] = set()  # background calls, kept from the garbage collector


def _background(call: Any) -> None:
    task = asyncio.ensure_future(call)
    _tasks.add(task)
    task.add_done_callback(_tasks.discard)
    task.add_done_callback(lambda t: _after_deadline(t, None))


def _after_deadline(task: asyncio.Future[Any], after: Callable[[], None] | None) -> None:
    """A lease call that ended after its deadline (or in the background): its error logged, then ``after``."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.info("run lease: a call past its deadline ended with %s", type(exc).__name__)
    if after is not None:
        after()


_LOCAL = LocalLeases()
_POSTGRES: dict[int, PostgresLeases] = {}


def leases_for(store: Any) -> LocalLeases | PostgresLeases:
    """Where the leases of a server on ``store`` are kept: its PostgreSQL
    (the pool of an ``AsyncPostgresStore``), else this process."""
    try:
        from psycopg_pool import AsyncConnectionPool
    except ImportError:  # no PostgreSQL extra: no PostgreSQL store either
        return _LOCAL
    pool = getattr(store, "conn", None)
    if isinstance(pool, AsyncConnectionPool):
        return _POSTGRES.setdefault(id(pool), PostgresLeases(pool, store))
    return _LOCAL


@contextlib.asynccontextmanager
async def run_lease(leases: LocalLeases | PostgresLeases, owner: str, run_id: str) -> AsyncIterator[None]:
    """Hold one of ``owner``'s :func:`max_runs_per_user` run leases while the block runs.

    Raises:
        RunCapReachedError: ``owner`` holds them all.
    """
    cap = max_runs_per_user()
    try:
        taken = await leases.acquire(owner, run_id, cap)
    except LeasesUnreachableError as exc:
        # PostgreSQL down or silent: the memory is too and turns go on without it;
        # the cap does too, counted on this server alone until it answers (with
        # the runs this server holds PostgreSQL leases for: _LOCAL counts them).
        logger.warning("run lease %s: %s; counted on this server only", run_id, exc)
        leases = _LOCAL
        taken = await leases.acquire(owner, run_id, cap)
    else:
        if taken and leases is not _LOCAL:
            _LOCAL.add(owner, run_id)
    if not taken:
        raise RunCapReachedError(refusal(cap))

    async def renew() -> None:
        while True:
            await asyncio.sleep(RENEW_EVERY_S)
            try:
                await leases.renew(run_id)
            except Exception:  # a missed renewal is retried; the lease lapses only after LEASE_TTL_S
                logger.warning("run lease %s: renewal failed", run_id, exc_info=True)

    renewer = asyncio.create_task(renew())
    try:
        yield
    finally:
        renewer.cancel()
        await _LOCAL.release(owner, run_id)
        try:
            await leases.release(owner, run_id)
        except Exception:  # the lease lapses by itself
            logger.warning("run lease %s: release failed", run_id, exc_info=True)


def served(graph: Any) -> Callable[..., Any]:
    """The factory ``langgraph.json`` names for ``graph``: the graph itself,
    inside a :func:`run_lease` of the run's user when the server executes a run
    of a (non-admin) user. Schemas, state reads and updates take no lease.
    ``ServerRuntime`` is the platform's documented (beta) factory API: its
    ``execution_runtime`` is set only when the factory is entered to run."""

    @contextlib.asynccontextmanager
    async def factory(config: RunnableConfig, runtime: ServerRuntime) -> AsyncIterator[Any]:
        caller = run_caller(config) if runtime.execution_runtime is not None else None
        if caller is None or caller.admin:
            yield graph
            return
        run_id = str(config["configurable"]["run_id"])
        async with run_lease(leases_for(runtime.store), caller.user_id, run_id):
            yield graph

    return factory
