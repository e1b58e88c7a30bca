"""Run leases as rows of PostgreSQL, shared by every server on the database
(:mod:`server.run_lease` takes and gives them back around each run).

A lease is taken in one pipelined transaction under a per-user advisory lock:
the user's lapsed leases deleted, a lease inserted only while fewer than the
cap are held. Every call has a deadline on the client (:data:`DEADLINE_S`)
and waits for a lock at most :data:`LOCK_TIMEOUT_MS` on the server, below it.

One verdict on PostgreSQL for the process: the store's on the same pool
(``MnemoPostgresStore.answering``). While the store judges PostgreSQL down, no
lease call asks the pool; its shared check answers for every caller. A lease
call that misses its deadline or cannot connect tells the store.

What an outage leaves behind is reconciled once PostgreSQL answers: the lease
of a run that ended is given back (:meth:`PostgresLeases.release` remembers a
release that failed), and a run counted on this server alone while PostgreSQL
did not answer is recorded as a lease, as it still runs. A background task
tries every :data:`RECONCILE_EVERY_S` until nothing is left, and a user's next
acquire gives back that user's ended leases in its own transaction
(docs/security.md, *Fair share*).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from mnemo.app import CONNECT_TIMEOUT_S, is_outage

logger = logging.getLogger(__name__)

#: Seconds a PostgreSQL lease outlives its last renewal (a crashed server's runs stop counting then).
LEASE_TTL_S = 60
#: Seconds this process judges PostgreSQL unreachable after a failure, when no store gives the verdict.
UNREACHABLE_RETRY_S = 5.0
#: Seconds a lease call (connection, check and statements) may take on PostgreSQL
#: before the run is counted on this server instead.
DEADLINE_S = 2.0
#: ``lock_timeout`` of every lease transaction, below :data:`DEADLINE_S`: a lock
#: held elsewhere (a lock storm) refuses the lease without judging PostgreSQL down.
LOCK_TIMEOUT_MS = 1000
#: Seconds between attempts to reconcile what an outage left behind.
RECONCILE_EVERY_S = 1.0
TABLE = "mnemo_run_leases"
_SETUP_LOCK = 0x6D6E656D6F5F726C  # "mnemo_rl": serialises CREATE TABLE between servers


class LeaseNotTakenError(Exception):
    """PostgreSQL neither took nor refused the lease (the run counts on this server alone)."""


class LeasesUnreachableError(LeaseNotTakenError):
    """The database of the leases cannot be reached."""


class PostgresLeases:
    """Leases as rows in PostgreSQL, shared by every server on the database."""

    def __init__(self, pool: Any, store: Any = None) -> None:
        self._pool = pool
        self._store = store  # MnemoPostgresStore on the same pool: its verdict on PostgreSQL is this one's
        self._ready = False
        self._down_until = 0.0  # the verdict when there is no store
        self._ended: dict[str, tuple[str, int]] = {}  # run id -> (owner, mark): leases to give back
        self._here: dict[str, str] = {}  # run id -> owner: running, counted on this server alone
        self._marks = itertools.count()
        self._reconciling: asyncio.Lock | None = None
        self._keeper: asyncio.Task[None] | None = None

    async def _answering(self) -> bool:
        answering = getattr(self._store, "answering", None)
        if answering is not None:
            return bool(await answering())
        return time.monotonic() >= self._down_until

    def _outage(self) -> None:
        """PostgreSQL failed a lease call as an outage: the store's calls then fail at once, a check starts."""
        self._down_until = time.monotonic() + UNREACHABLE_RETRY_S
        if (mark := getattr(self._store, "mark_unreachable", None)) is not None:
            mark()

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
        task.add_done_callback(lambda t: _ended_late(t, after))
        self._outage()
        raise LeasesUnreachableError(f"PostgreSQL did not answer the lease's {what} within {DEADLINE_S} s")

    @contextlib.asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Any]:
        """A pooled connection in a pipelined transaction with :data:`LOCK_TIMEOUT_MS`.

        Raises:
            LeasesUnreachableError: PostgreSQL is judged down (the pool is not
                asked), or the connection failed (the verdict is told).
            LeaseNotTakenError: PostgreSQL answered with an error (a lock timeout...).
        """
        import psycopg

        if not await self._answering():
            raise LeasesUnreachableError("PostgreSQL does not answer (its check says so)")
        try:
            async with self._pool.connection(timeout=CONNECT_TIMEOUT_S) as conn:
                await self._setup(conn)
                async with conn.pipeline(), conn.transaction():
                    await conn.execute(f"SET LOCAL lock_timeout = {LOCK_TIMEOUT_MS}")
                    yield conn
        except psycopg.Error as exc:
            said = f"{type(exc).__name__}, SQLSTATE {exc.sqlstate}"
            if is_outage(exc):  # PoolTimeout included
                self._outage()
                raise LeasesUnreachableError(f"PostgreSQL cannot be reached ({said})") from exc
            raise LeaseNotTakenError(f"PostgreSQL failed the lease call ({said})") from exc

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
        return bool(await self._within("acquire", self._acquire(owner, run_id, cap), lambda: self._late(owner, run_id)))

    async def _acquire(self, owner: str, run_id: str, cap: int) -> bool:
        ended = {run: entry for run, entry in self._ended.items() if entry[0] == owner}
        async with self._transaction() as conn:
            # One transaction at a time per owner, on every server: count and take atomically
            # (the count's statement starts after the lock is held, so it sees every lease taken).
            await conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{TABLE}:{owner}",))
            await conn.execute(
                f"DELETE FROM {TABLE} WHERE owner = %s AND (expires_at < now() OR run_id = ANY(%s))",
                (owner, list(ended)),
            )
            cursor = await conn.execute(
                f"INSERT INTO {TABLE} (run_id, owner, expires_at) "
                "SELECT %s, %s, now() + make_interval(secs => %s) "
                f"WHERE (SELECT count(*) FROM {TABLE} WHERE owner = %s AND run_id <> %s) < %s "
                "ON CONFLICT (run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at RETURNING run_id",
                (run_id, owner, LEASE_TTL_S, owner, run_id, cap),
            )
            taken = await cursor.fetchone() is not None
        self._forget_ended(ended)
        return taken

    async def renew(self, run_id: str) -> None:
        await self._within("renewal", self._renew(run_id))

    async def _renew(self, run_id: str) -> None:
        async with self._transaction() as conn:
            await conn.execute(
                f"UPDATE {TABLE} SET expires_at = now() + make_interval(secs => %s) WHERE run_id = %s",
                (LEASE_TTL_S, run_id),
            )

    def counted_here(self, owner: str, run_id: str) -> None:
        """``run_id`` runs, counted on this server alone: recorded as a lease once PostgreSQL answers."""
        self._here[run_id] = owner
        self._keep_reconciling()

    async def release(self, owner: str, run_id: str) -> None:
        """Give the lease back now, or, when PostgreSQL does not, once it answers (never raises)."""
        self._here.pop(run_id, None)
        self._ended[run_id] = (owner, next(self._marks))
        try:
            await self._within("release", self._reconcile())
        except Exception as exc:
            logger.warning("run lease %s: release failed (%s); given back once PostgreSQL answers", run_id, exc)
            self._keep_reconciling()

    def _late(self, owner: str, run_id: str) -> None:
        """An acquire past its deadline has ended: the lease it may have taken is given back unless the run runs."""
        if run_id not in self._here:
            self._ended[run_id] = (owner, next(self._marks))
            self._keep_reconciling()

    def _forget_ended(self, ended: dict[str, tuple[str, int]]) -> None:
        for run_id, entry in ended.items():
            if self._ended.get(run_id) == entry:  # not ended again meanwhile
                del self._ended[run_id]

    async def _reconcile(self) -> None:
        """Delete the leases of ended runs and record the runs counted here, until none is left (one at a time)."""
        if self._reconciling is None:
            self._reconciling = asyncio.Lock()
        async with self._reconciling:
            while self._ended or self._here:
                ended, here = dict(self._ended), dict(self._here)
                async with self._transaction() as conn:
                    await conn.execute(f"DELETE FROM {TABLE} WHERE run_id = ANY(%s)", (list(ended),))
                    if here:
                        await conn.execute(
                            f"INSERT INTO {TABLE} (run_id, owner, expires_at) SELECT run_id, owner, "
                            "now() + make_interval(secs => %s) "
                            "FROM unnest(%s::text[], %s::text[]) AS held(run_id, owner) "
                            "ON CONFLICT (run_id) DO UPDATE SET expires_at = EXCLUDED.expires_at",
                            (LEASE_TTL_S, list(here), list(here.values())),
                        )
                self._forget_ended(ended)
                for run_id, owner in here.items():
                    if self._here.pop(run_id, None) is None:  # it ended meanwhile: its lease was just written
                        self._ended[run_id] = (owner, next(self._marks))

    def _keep_reconciling(self) -> None:
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.ensure_future(self._reconcile_until_done())
            self._keeper.add_done_callback(lambda t: _ended_late(t, None))

    async def _reconcile_until_done(self) -> None:
        while self._ended or self._here:
            await asyncio.sleep(RECONCILE_EVERY_S)
            try:
                await self._within("reconciliation", self._reconcile())
            except LeaseNotTakenError as exc:
                logger.info("run leases: reconciliation not done yet (%s)", exc)


def _ended_late(task: asyncio.Future[Any], after: Callable[[], None] | None) -> None:
    """A lease call that ended after its deadline (or in the background): its error logged, then ``after``."""
    if not task.cancelled() and (exc := task.exception()) is not None:
        logger.info("run lease: a call past its deadline ended with %s", type(exc).__name__)
    if after is not None:
        after()
