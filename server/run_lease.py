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

from mnemo.core import MnemoError, run_caller
from server.run_cap import max_runs_per_user, refusal

logger = logging.getLogger(__name__)

#: Seconds a PostgreSQL lease outlives its last renewal (a crashed server's runs stop counting then).
LEASE_TTL_S = 60
#: Seconds between renewals of a running run's lease.
RENEW_EVERY_S = LEASE_TTL_S / 3
#: Seconds leases are kept in this process after PostgreSQL could not be reached.
UNREACHABLE_RETRY_S = 5.0
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

    def __init__(self, pool: Any) -> None:
        self._pool = pool
        self._ready = False
        self._down_until = 0.0

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A pooled connection within ``CONNECT_TIMEOUT_S``, or :class:`LeasesUnreachableError`
        (at once for :data:`UNREACHABLE_RETRY_S` after a failure, so runs do not each wait)."""
        import psycopg
        from psycopg_pool import PoolTimeout

        from mnemo.stores import CONNECT_TIMEOUT_S

        if time.monotonic() < self._down_until:
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
        async with self._connection() as conn:
            await self._setup(conn)
            async with conn.transaction():
                # One transaction at a time per owner, on every server: count and take atomically.
                await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{TABLE}:{owner}",))
                await conn.execute(f"DELETE FROM {TABLE} WHERE owner = %s AND expires_at < now()", (owner,))
                cursor = await conn.execute(
                    f"SELECT count(*) AS n FROM {TABLE} WHERE owner = %s AND run_id <> %s", (owner, run_id)
                )
                row = await cursor.fetchone()
                if _first(row) >= cap:
                    return False
                await conn.execute(
                    f"INSERT INTO {TABLE} (run_id, owner, expires_at) "
                    "VALUES (%s, %s, now() + make_interval(secs => %s)) "
                    "ON CONFLICT (run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at",
                    (run_id, owner, LEASE_TTL_S),
                )
                return True

    async def renew(self, run_id: str) -> None:
        async with self._connection() as conn:
            await conn.execute(
                f"UPDATE {TABLE} SET expires_at = now() + make_interval(secs => %s) WHERE run_id = %s",
                (LEASE_TTL_S, run_id),
            )

    async def release(self, owner: str, run_id: str) -> None:
        async with self._connection() as conn:
            await conn.execute(f"DELETE FROM {TABLE} WHERE run_id = %s", (run_id,))


def _first(row: Any) -> int:
    return int(next(iter(row.values())) if isinstance(row, dict) else row[0])


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
        return _POSTGRES.setdefault(id(pool), PostgresLeases(pool))
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
        # PostgreSQL down: the memory is down too and turns go on without it;
        # the cap does too, counted on this server alone until it is back.
        logger.warning("run lease %s: %s; counted on this server only", run_id, exc)
        leases = _LOCAL
        taken = await leases.acquire(owner, run_id, cap)
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
