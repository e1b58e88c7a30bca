"""Connections to PostgreSQL, shared by the store and the checkpointer: pool
defaults, per-connection pgvector tuning, ``setup()`` serialised across
processes (two servers starting on one database at once), and the check that
the vector table fits the configured model."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, cast

from mnemo.core import DimsMismatchError

if TYPE_CHECKING:
    from langgraph.store.postgres import AsyncPostgresStore
    from psycopg_pool import AsyncConnectionPool

logger = logging.getLogger(__name__)

#: Distance of the pgvector index: cosine, so scores are InMemoryStore's.
DISTANCE = "cosine"

#: Seconds a store call runs before the store checks that PostgreSQL can be
#: reached at all (one direct connection, shared by the calls waiting), and
#: then again every as many seconds: a call fails with ``StoreUnavailableError``
#: within about this long when PostgreSQL is down, while a call that waits for
#: a busy pool keeps waiting (the pool's own ``timeout``, 30 s). Before, with
#: PostgreSQL down a store call failed only at the pool's timeout, and a turn
#: (three store calls) took 90 s.
REACHABLE_CHECK_S = 2.0

#: Seconds the pool keeps retrying one failed connection (psycopg_pool's default
#: is 5 min, with backoff doubling to minutes between attempts, so a pool could
#: still be waiting long after PostgreSQL came back); after it, a connection is
#: made afresh when a caller needs one.
RECONNECT_TIMEOUT_S = 5.0

#: ``connect_timeout`` of every connection (libpq waits forever by default: an
#: unreachable host held a pool worker for the OS's TCP timeout).
CONNECT_TIMEOUT_S = 3

#: ``statement_timeout`` and ``lock_timeout`` of every pooled connection
#: (PostgreSQL's defaults are none): a statement of a live server that runs or
#: waits for a lock longer is ended by the server. They cannot end a statement
#: of a server that does not answer at all (stopped, partitioned): the client's
#: deadlines do (``REACHABLE_CHECK_S`` for the store, ``server/run_lease.py``).
#: ``setup()`` runs on a connection of its own without them (a migration or an
#: index build may take longer). Rationale: docs/postgres.md.
STATEMENT_TIMEOUT_S = 10
LOCK_TIMEOUT_S = 5

#: Connection pool of the PostgreSQL store and checkpointer.
DEFAULT_POOL: dict[str, Any] = {
    "min_size": 1,
    "max_size": 10,
    "reconnect_timeout": RECONNECT_TIMEOUT_S,
}

#: ``hnsw.ef_search`` of every store connection (pgvector's default is 40).
#: Measured with ``python -m bench.store_scale`` on 100k notes of one user
#: (random vectors, HNSW's worst case): the source note of a query ranked
#: first for 83 % of queries at 40 (p50 12 ms), 93 % at 100 (24 ms), 100 % at
#: 400 (50 ms); at 10k notes all three found it every time.
HNSW_EF_SEARCH = 100

# Any 64-bit constants: advisory locks that serialise setup() across processes.
STORE_SETUP_LOCK = 0x6D6E656D6F5F7331  # "mnemo_s1"
SAVER_SETUP_LOCK = 0x6D6E656D6F5F6331  # "mnemo_c1"


async def configure_connection(conn: Any) -> None:
    """Per-connection settings of the store pool.

    ``hnsw.iterative_scan``: without it an HNSW scan returns at most
    ``hnsw.ef_search`` nearest vectors of the *whole table* and only then
    applies the namespace filter, so a user whose notes are not among those
    nearest of all users would get no hits at all once the planner uses the
    index. Iterative scans (pgvector >= 0.8) keep scanning until the filtered
    query has its ``LIMIT``. ``hnsw.ef_search``: :data:`HNSW_EF_SEARCH`.
    Ignored (logged) on older pgvector.
    """
    try:
        await conn.execute("SET hnsw.iterative_scan = strict_order")
        await conn.execute(f"SET hnsw.ef_search = {int(HNSW_EF_SEARCH)}")
    except Exception as exc:  # pragma: no cover - old pgvector
        logger.warning("could not configure pgvector's HNSW search (pgvector < 0.8?): %s", exc)


def connection_kwargs() -> dict[str, Any]:
    """What ``AsyncPostgresSaver`` / ``AsyncPostgresStore`` expect of a pooled
    connection, and :data:`CONNECT_TIMEOUT_S`."""
    from psycopg.rows import dict_row

    return {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row, "connect_timeout": CONNECT_TIMEOUT_S}


def deadline_options() -> str:
    """libpq ``options`` setting :data:`STATEMENT_TIMEOUT_S` and :data:`LOCK_TIMEOUT_S` for a session."""
    return f"-c statement_timeout={STATEMENT_TIMEOUT_S * 1000} -c lock_timeout={LOCK_TIMEOUT_S * 1000}"


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` says PostgreSQL cannot be reached
    (:func:`mnemo.stores.postgres_errors.is_connection_failure`), for callers
    that need no psycopg until PostgreSQL is used (the run leases)."""
    if "psycopg" not in sys.modules:
        return False  # not a PostgreSQL error
    from mnemo.stores.postgres_errors import is_connection_failure  # deferred: it imports psycopg

    return is_connection_failure(exc)


def make_pool(uri: str, overrides: Mapping[str, Any] | None = None) -> Any:
    """An ``AsyncConnectionPool`` on ``uri`` (not open yet: ``async with`` it):
    :data:`DEFAULT_POOL` with ``overrides``, :func:`connection_kwargs` and
    :func:`deadline_options` (plus ``overrides["kwargs"]``, whose ``options``
    come after the deadlines', so they may change them but never drop them)
    and a ``check`` of every connection before the pool hands it out.

    The check is psycopg_pool's ``check_connection`` (one round trip; a broken
    connection is replaced). When one fails, the pool is drained: a failed
    check almost always means the server restarted, and then every idle
    connection is stale. Without the drain, the pool sleeps its backoff (1 s,
    2 s, 4 s, ...) between checking one stale connection and the next, so the
    first read after a restart took ~7 s and failed once the pool's timeout
    was short; without the check, each stale connection failed the
    operation that got it (7 of 15 reads)."""
    from psycopg_pool import AsyncConnectionPool

    options = {**DEFAULT_POOL, **(overrides or {})}

    async def check(conn: Any) -> None:
        try:
            await AsyncConnectionPool.check_connection(conn)
        except Exception:
            logger.warning("a pooled PostgreSQL connection was broken; replacing every idle connection")
            await pool.drain()
            raise

    kwargs = {**connection_kwargs(), **(options.pop("kwargs", None) or {})}
    kwargs["options"] = f"{deadline_options()} {kwargs.get('options') or ''}".strip()
    pool: AsyncConnectionPool = AsyncConnectionPool(
        uri,
        min_size=options.pop("min_size"),
        max_size=options.pop("max_size"),
        kwargs=kwargs,
        check=options.pop("check", check),
        open=False,
        **options,
    )
    return pool


@asynccontextmanager
async def setup_connection(uri: str) -> AsyncIterator[Any]:
    """A connection for ``setup()`` alone: as the pool's (:func:`connection_kwargs`)
    but without :func:`deadline_options`."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(uri, **connection_kwargs()) as conn:
        yield conn


@asynccontextmanager
async def advisory_lock(uri: str, lock_id: int) -> AsyncIterator[None]:
    """Hold a session advisory lock on its own connection, polling with
    ``pg_try_advisory_lock`` (a blocked ``pg_advisory_lock`` would keep a
    snapshot open and deadlock with ``CREATE INDEX CONCURRENTLY`` in setup)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        while not await _try_lock(conn, lock_id):
            await asyncio.sleep(0.1)
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id,))


async def _try_lock(conn: Any, lock_id: int) -> bool:
    row = await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_id,))).fetchone()
    return bool(row[0])


#: mnemo's own index on the store table (``langgraph-checkpoint-postgres``'s
#: migrations own the table; this index is additive, named apart, and
#: ``IF NOT EXISTS``). The exact-duplicate lookup of every note write is
#: ``filter={"norm": ...}``, which the store renders as
#: ``value -> 'norm' = '<json>'::jsonb``: without an index it scanned the
#: user's rows, so a write slowed down as the user's notes grew. A hash index
#: on that expression makes it one probe (hash, not btree: a 1,000-character
#: Chinese note exceeds btree's ~2.7 kB entry limit).
NORM_INDEX_SQL = "CREATE INDEX CONCURRENTLY IF NOT EXISTS mnemo_store_norm_idx ON store USING hash ((value -> 'norm'))"


async def ensure_mnemo_indexes(conn: Any) -> None:
    """Create mnemo's indexes on the store table (after ``setup()``, under
    its advisory lock; ``conn`` in autocommit, as ``CONCURRENTLY`` needs)."""
    await conn.execute(NORM_INDEX_SQL)


async def check_vector_table(store: AsyncPostgresStore, index: Mapping[str, Any]) -> None:
    """The ``store_vectors.embedding`` column must hold vectors of ``dims``.

    Reads through ``store.conn`` (the pool ``from_conn_string`` made; an
    undocumented attribute of ``AsyncPostgresStore``, guarded by
    tests/project/test_upstream_private_api.py): the same pool, no second connection.

    Raises:
        DimsMismatchError: the database was indexed with another model.
    """
    vector_type = index.get("ann_index_config", {}).get("vector_type", "vector")
    expected = f"{vector_type}({index['dims']})"
    async with cast("AsyncConnectionPool", store.conn).connection() as conn:
        row: dict[str, Any] | None = await (  # type: ignore[assignment]  # the pool's rows are dicts (dict_row)
            await conn.execute(
                "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute "
                "WHERE attrelid = to_regclass('store_vectors') AND attname = 'embedding' AND NOT attisdropped"
            )
        ).fetchone()
        index_row: dict[str, Any] | None = await (  # type: ignore[assignment]
            await conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'store_vectors_embedding_idx' "
                "AND schemaname = ANY (current_schemas(false))"
            )
        ).fetchone()
    if row is None:
        raise DimsMismatchError("store_vectors has no 'embedding' column after setup(); is pgvector installed?")
    if row["t"] != expected:
        raise DimsMismatchError(
            f"this database's vector index holds {row['t']} but the store is configured for {expected}: "
            "it was indexed with another embedding model. Use the same model and dims, "
            "or a new database (vectors of two models are not comparable)."
        )
    ops = {"cosine": "_cosine_ops", "l2": "_l2_ops", "inner_product": "_ip_ops"}.get(
        index.get("distance_type", DISTANCE)
    )
    if index_row is not None and ops and ops not in index_row["indexdef"]:
        logger.warning(
            "store_vectors_embedding_idx was built for another distance (%s); searches stay correct "
            "but cannot use it: drop the index and run setup() again",
            index_row["indexdef"],
        )
