"""The PostgreSQL backend: ``AsyncPostgresStore`` + pgvector, with mnemo's rules.

Needs the ``postgres`` extra (imported only when a PostgreSQL URI is given); every op
is checked as on the in-memory store, queries are embedded as queries, and listings
are in a total order.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, cast

import psycopg
from langgraph.store.base import NOT_PROVIDED, NotProvided, Op, PutOp, Result, SearchOp, TTLConfig
from langgraph.store.postgres import AsyncPostgresStore
from psycopg_pool import AsyncConnectionPool

from mnemo.core import StoreClosedError, StoreOperationError, StoreUnavailableError, checked_ops
from mnemo.stores.postgres_errors import (
    CONFLICT_ATTEMPTS,
    CONFLICT_RETRY_WITHIN_S,
    CONFLICTS,
    conflict_pause,
    failure_message,
    is_conflict,
    is_connection_failure,
)
from mnemo.stores.postgres_search import aexact_searches
from mnemo.stores.postgres_setup import (
    CONNECT_TIMEOUT_S,
    DISTANCE,
    REACHABLE_CHECK_S,
    STORE_SETUP_LOCK,
    advisory_lock,
    check_vector_table,
    configure_connection,
    ensure_mnemo_indexes,
    make_pool,
    setup_connection,
)
from mnemo.stores.postgres_vectors import EARLY_VECTORS, QUERY_VECTORS, QueryAwareEmbeddings, start_queries

logger = logging.getLogger(__name__)

#: A probe that failed after this many seconds got no answer (a refusal takes milliseconds).
SILENT_AFTER_S = 1.0

#: pgvector index of the PostgreSQL store: HNSW over ``vector`` with cosine
#: distance, so scores are the same cosine similarities as InMemoryStore's.
ANN_INDEX: dict[str, Any] = {"kind": "hnsw", "vector_type": "vector"}


def postgres_index_config(index: Mapping[str, Any]) -> dict[str, Any]:
    """``index`` plus the pgvector settings: ``ann_index_config`` HNSW over
    ``vector``, ``distance_type`` cosine."""
    config = dict(index)
    config.setdefault("ann_index_config", dict(ANN_INDEX))
    config.setdefault("distance_type", DISTANCE)
    return config


class MnemoPostgresStore(AsyncPostgresStore):
    """``AsyncPostgresStore`` with mnemo's write checks, query embeddings, a
    total listing order and a closed state. Open it with :func:`open_postgres`."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # One call, one transaction: upstream's ``_cursor(pipeline=True)`` runs
        # a batch in ``conn.transaction()`` when pipelining is off. Pipelined
        # (upstream's default), a call interrupted between its statements (a
        # cancelled run or request) had its pipeline synced on exit, which
        # committed what was sent: a note without its vector or its audit record.
        # Private API of langgraph-checkpoint-postgres 3.2.0 (guarded by
        # tests/project/test_upstream_private_api.py); rationale: docs/postgres.md.
        self.supports_pipeline = False
        self._closed = False
        self._down = False
        self._probe: asyncio.Future[bool] | None = None
        self._probed_at = 0.0
        self._silent_until = 0.0  # believed unreachable until then (it did not answer: see _areachable)
        if self.embeddings is not None:
            self.embeddings = QueryAwareEmbeddings(self.embeddings)

    # Private API of langgraph-checkpoint-postgres 3.2.0 (guarded by
    # tests/project/test_upstream_private_api.py): upstream's search path calls
    # ``self.embeddings.aembed_documents`` for the *queries* (it should call
    # ``aembed_query``, as InMemoryStore does). Overriding the one method that
    # embeds queries is the narrowest fix until upstream changes.
    #
    # The same override chooses, per search, how it reads (exactly or through
    # HNSW: mnemo.stores.postgres_search), and runs a search through HNSW that
    # came back short again exactly: a user never gets fewer hits than asked
    # because the approximate scan filtered them out.
    async def _batch_search_ops(
        self, search_ops: Sequence[tuple[int, SearchOp]], results: list[Result], cur: Any
    ) -> None:
        early = EARLY_VECTORS.get()  # queries are embedded as queries, each text once, from the call's start
        token = QUERY_VECTORS.set(dict(await early) if early is not None else {})
        try:
            exact = await aexact_searches(cur, search_ops)
            rest = [(idx, op) for idx, op in search_ops if idx not in exact]
            await self._asearch(rest, results, cur, exactly=False)
            short = [(idx, op) for idx, op in rest if op.query and len(cast(list, results[idx])) < op.limit]
            await self._asearch([*(p for p in search_ops if p[0] in exact), *short], results, cur, exactly=True)
        finally:
            QUERY_VECTORS.reset(token)

    async def _asearch(
        self, search_ops: Sequence[tuple[int, SearchOp]], results: list[Result], cur: Any, *, exactly: bool
    ) -> None:
        if not search_ops:
            return
        if exactly:
            await cur.execute("SET enable_indexscan = off")  # HNSW is index-scan only
        try:
            await super()._batch_search_ops(search_ops, results, cur)
        finally:
            if exactly:
                await cur.execute("RESET enable_indexscan")

    # Private API of langgraph-checkpoint-postgres 3.2.0 (guarded by
    # tests/project/test_upstream_private_api.py): upstream orders a search without a
    # query by ``updated_at DESC`` alone. Every item of one batch shares its
    # ``updated_at`` (the transaction's time), and PostgreSQL's top-N sort
    # returns such ties in an order that differs between LIMIT/OFFSET windows,
    # so offset paging repeated some items and skipped others (1,000 notes of
    # one batch paged by 100: one item four times, three never). ``prefix,
    # key`` after ``updated_at`` makes the order total, so the pages of
    # ``mnemo.core.reads.alist_all`` partition the namespace; the most
    # recent still come first. Searches by meaning keep upstream's order.
    def _prepare_batch_search_queries(
        self, search_ops: Sequence[tuple[int, SearchOp]]
    ) -> tuple[list[tuple[str, list[None | str | list[float]]]], list[tuple[int, str]]]:
        queries, embedding_requests = super()._prepare_batch_search_queries(search_ops)
        by_meaning = {idx for idx, _ in embedding_requests}
        return [
            (sql if idx in by_meaning else total_order(sql), params) for idx, (sql, params) in enumerate(queries)
        ], embedding_requests

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Upstream's ``abatch``, checked; fails fast while PostgreSQL is down;
        its search queries embedded from its start (:func:`start_queries`).

        A call still running after :data:`REACHABLE_CHECK_S` checks that
        PostgreSQL can be reached (one direct connection, refused at once
        when the server is down, shared by the calls waiting); if not, or if
        the connection failed, it raises :class:`StoreUnavailableError` and
        marks the store down. While down, a call checks first, so the other
        calls of a turn fail in milliseconds, and the first call after the
        server is back goes through. A call waiting for a busy pool keeps
        waiting (the pool's ``timeout``). A deadlock, a serialization failure
        or a lock timeout runs the call again (:data:`~mnemo.stores.postgres_errors.CONFLICT_ATTEMPTS`
        in all, none started :data:`~mnemo.stores.postgres_errors.CONFLICT_RETRY_WITHIN_S`
        after the call's first conflict); any other error of a reachable server is a
        :class:`StoreOperationError` naming it, the store not marked down."""
        if self._closed:
            raise StoreClosedError("this store was closed (its `async with open_store(...)` block ended)")
        ops = checked_ops(ops)
        queries = [op.query for op in ops if isinstance(op, SearchOp) and op.query]
        early = start_queries(self.embeddings, queries) if queries and self.embeddings is not None else None
        token = EARLY_VECTORS.set(early)
        first_conflict: float | None = None
        try:
            for attempt in range(1, CONFLICT_ATTEMPTS + 1):
                try:
                    return await self._abatch_once(ops)
                except CONFLICTS as exc:
                    pause, now = conflict_pause(attempt - 1), time.monotonic()
                    first_conflict = now if first_conflict is None else first_conflict
                    if attempt == CONFLICT_ATTEMPTS or now + pause - first_conflict >= CONFLICT_RETRY_WITHIN_S:
                        raise StoreOperationError(failure_message(exc, attempts=attempt)) from exc
                    logger.info("store call hit %s; running it again (%d)", type(exc).__name__, attempt)
                    await asyncio.sleep(pause)
            raise AssertionError("unreachable")
        finally:
            EARLY_VECTORS.reset(token)
            if early is not None:
                early.cancel()  # done: no effect; else the call failed before it needed them

    async def _abatch_once(self, ops: list[Op]) -> list[Result]:
        if self._down and not await self._areachable():
            raise StoreUnavailableError("PostgreSQL cannot be reached; nothing was read or written, try again shortly")
        call = asyncio.ensure_future(super().abatch(ops))
        try:
            while not (await asyncio.wait({call}, timeout=REACHABLE_CHECK_S))[0]:
                if not await self._areachable():
                    self._down = True
                    raise StoreUnavailableError("PostgreSQL cannot be reached; try again shortly")
            results = call.result()
        except psycopg.OperationalError as exc:  # PoolTimeout is one, with no SQLSTATE
            self._down = is_connection_failure(exc)
            if self._down:
                raise StoreUnavailableError(
                    f"PostgreSQL cannot be reached ({type(exc).__name__}); try again shortly"
                ) from exc
            if is_conflict(exc):
                raise
            raise StoreOperationError(failure_message(exc)) from exc
        finally:
            call.cancel()  # done: no effect; else abandoned (down, or this call cancelled)
        self._down, self._silent_until = False, 0.0
        return results

    async def _areachable(self) -> bool:
        """Whether PostgreSQL takes a new connection: one check at a time; a yes
        reused for :data:`REACHABLE_CHECK_S`, a refusal never (the server back is
        seen at once), no answer at all for :data:`REACHABLE_CHECK_S` (docs/postgres.md)."""
        if time.monotonic() < self._silent_until:
            return False
        probe = self._probe
        if probe is None or (
            probe.done() and (not probe.result() or time.monotonic() - self._probed_at >= REACHABLE_CHECK_S)
        ):
            probe = self._check()
        return await asyncio.shield(probe)

    def _check(self) -> asyncio.Future[bool]:
        conninfo = str(cast(AsyncConnectionPool, self.conn).conninfo)
        self._probe, self._probed_at = asyncio.ensure_future(_reachable(conninfo)), time.monotonic()
        self._probe.add_done_callback(self._heard)
        return self._probe

    def _heard(self, probe: asyncio.Future[bool]) -> None:
        answered = not probe.cancelled() and probe.result()
        silent = not probe.cancelled() and not answered and time.monotonic() - self._probed_at >= SILENT_AFTER_S
        self._silent_until = time.monotonic() + REACHABLE_CHECK_S if silent else 0.0
        if answered:
            self._down = False  # back: the next calls go to the pool

    def mark_unreachable(self) -> None:
        """PostgreSQL did not answer a run lease on this pool: calls fail at once
        while a check runs, which only a refusal or a yes lifts (docs/postgres.md)."""
        self._down = True
        self._silent_until = time.monotonic() + CONNECT_TIMEOUT_S + REACHABLE_CHECK_S
        if self._probe is None or self._probe.done():
            self._check()

    def unreachable(self) -> bool:
        """Whether PostgreSQL did not answer moments ago (:meth:`mark_unreachable`)."""
        return time.monotonic() < self._silent_until

    async def answering(self) -> bool:
        """This process's one verdict on PostgreSQL, for callers beside the store
        (the run leases): yes unless it is marked down; while it is, the answer
        of the check every caller shares (never the pool: docs/postgres.md)."""
        return not self._down or await self._areachable()

    async def sweep_ttl(self) -> int:
        """Upstream's sweep, without ``statement_timeout`` (a backlog may take longer)
        for its own transaction only: the pooled connection keeps it, however the sweep ends."""
        async with cast(AsyncConnectionPool, self.conn).connection() as conn, conn.transaction():
            await conn.execute("SET LOCAL statement_timeout = 0")
            cur = await conn.execute("DELETE FROM store WHERE expires_at IS NOT NULL AND expires_at < NOW()")
            return cur.rowcount

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Any = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        # Checked before queueing: a refused value must not fail the
        # other operations batched in the same tick.
        checked_ops([PutOp(namespace, key, cast(dict[str, Any], value), index)])
        await super().aput(namespace, key, value, index, ttl=ttl)

    def close(self) -> None:
        """Refuse every later op (the pool is closed by the block that opened it)."""
        self._closed = True


#: Upstream's order of a search without a query, and mnemo's total one
#: (``MnemoPostgresStore._prepare_batch_search_queries``).
UPSTREAM_LIST_ORDER = "ORDER BY store.updated_at DESC"
TOTAL_LIST_ORDER = "ORDER BY store.updated_at DESC, store.prefix, store.key"


def total_order(sql: str) -> str:
    """``sql`` (upstream's search without a query) ordered totally.

    Raises:
        RuntimeError: upstream's SQL no longer holds its ``ORDER BY`` once (a
            new version): paging would be unsafe, so nothing runs.
    """
    if sql.count(UPSTREAM_LIST_ORDER) != 1:
        raise RuntimeError(
            "langgraph-checkpoint-postgres changed its search SQL; re-check "
            "MnemoPostgresStore._prepare_batch_search_queries"
        )
    return sql.replace(UPSTREAM_LIST_ORDER, TOTAL_LIST_ORDER)


async def _reachable(conninfo: str) -> bool:
    """Whether a new connection to ``conninfo`` opens (and is closed again)."""
    try:
        conn = await psycopg.AsyncConnection.connect(conninfo, connect_timeout=CONNECT_TIMEOUT_S)
    except Exception:  # whatever kept it from connecting
        return False
    await conn.close()
    return True


@asynccontextmanager
async def open_postgres(
    uri: str, index: Mapping[str, Any], ttl: TTLConfig, pool_config: Mapping[str, Any] | None, sweep: bool
) -> AsyncIterator[MnemoPostgresStore]:
    """A :class:`MnemoPostgresStore` on ``uri`` (``index`` with the pgvector
    settings of :func:`postgres_index_config`), set up, checked and swept."""
    async with make_pool(uri, {"configure": configure_connection, **(pool_config or {})}) as pool:
        store = MnemoPostgresStore(conn=pool, index=cast(Any, index), ttl=ttl)
        try:
            async with advisory_lock(uri, STORE_SETUP_LOCK), setup_connection(uri) as conn:
                await MnemoPostgresStore(conn=conn, index=cast(Any, index), ttl=ttl).setup()
                await ensure_mnemo_indexes(conn)
            await check_vector_table(store, index)
            if sweep:
                await store.start_ttl_sweeper()
            yield store
        finally:
            await store.stop_ttl_sweeper(timeout=5)
            store.close()
