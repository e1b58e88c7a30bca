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
are rows of ``mnemo_run_leases`` (:mod:`server.postgres_leases`), counted and
taken in one transaction under a per-user advisory lock, so two servers sharing
the database share the cap; a server that dies stops renewing its leases and
they lapse after ``LEASE_TTL_S``. On the in-memory store (one server process)
they are a set per user under a lock.

When PostgreSQL does not take or refuse a lease (down, silent past the
deadline, a lock held elsewhere), the run is counted on this server alone, with
the runs this server holds leases for in PostgreSQL, and recorded as a lease
once PostgreSQL answers; a lease whose release failed is given back then
(docs/security.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator, Callable
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph_sdk.runtime import ServerRuntime

from mnemo.app import MnemoError, run_caller
from server.postgres_leases import LEASE_TTL_S, LeaseNotTakenError, PostgresLeases
from server.run_cap import max_runs_per_user, refusal

logger = logging.getLogger(__name__)

#: Seconds between renewals of a running run's lease.
RENEW_EVERY_S = LEASE_TTL_S / 3


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

    def counted_here(self, owner: str, run_id: str) -> None:
        return None  # every lease is counted here

    async def renew(self, run_id: str) -> None:
        return None  # nothing lapses: the leases die with the process

    async def release(self, owner: str, run_id: str) -> None:
        with self._lock:
            self._held.get(owner, set()).discard(run_id)

    def held(self, owner: str) -> int:
        with self._lock:
            return len(self._held.get(owner, ()))


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
    except LeaseNotTakenError as exc:
        # PostgreSQL down, silent or busy: the memory is too and turns go on without it;
        # the cap does too, counted on this server alone (with the runs this server
        # holds PostgreSQL leases for: _LOCAL counts them) and recorded once it answers.
        logger.warning("run lease %s: %s; counted on this server only", run_id, exc)
        taken = await _LOCAL.acquire(owner, run_id, cap)
        if taken:
            leases.counted_here(owner, run_id)
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
        await leases.release(owner, run_id)  # a lease PostgreSQL did not take back is given back once it answers


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
