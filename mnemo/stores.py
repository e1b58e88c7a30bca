"""Where memories are kept: one factory for every backend mnemo supports.

* :func:`open_store` with no URI: an in-memory store (unit tests, notebooks).
  It is an :class:`~langgraph.store.memory.InMemoryStore` that also honours
  TTLs (:class:`ExpiringInMemoryStore`), so time-bound memories behave as on
  PostgreSQL.
* :func:`open_store` with a ``postgres_uri``: an
  :class:`~langgraph.store.postgres.AsyncPostgresStore` over a connection pool,
  with a pgvector **HNSW / cosine** index built from the same embedding config
  as ``langgraph.json`` (:func:`mnemo.embeddings.index_config`), ``setup()`` run
  once at start (serialised across processes), the TTL sweeper running, and
  everything closed when the ``async with`` block ends.
* :func:`open_postgres_store`: PostgreSQL on ``$POSTGRES_URI``, else on the
  embedded server (:mod:`mnemo.pgserver`) that it starts and stops.
* :func:`open_checkpointer`: the matching thread checkpointer
  (``AsyncPostgresSaver`` on PostgreSQL, ``InMemorySaver`` otherwise).

Every backend is checked at startup: the embedder is asked to embed a probe
string and the length of the vector must equal the config's ``dims``
(:class:`DimsMismatchError`). InMemoryStore never checks ``dims`` and would
silently compare vectors of the wrong size; PostgreSQL would fail on the first
write only. On PostgreSQL the existing ``store_vectors`` column must also have
that size (a database indexed with another model is refused, not mixed).

Both backends also get the same rules where the stock stores differ
(``docs/postgres.md`` has the full table):

* every write, search filter and query is checked against PostgreSQL's rules
  (:func:`checked_ops`): a NUL character, an unpaired surrogate, NaN, a
  non-string key or a non-JSON value raises :class:`UnstorableValueError`
  before anything is written, and ``.`` in a namespace label raises
  ``InvalidNamespaceError`` even for ops passed straight to ``abatch``;
* PostgreSQL embeds search queries as *queries* like InMemoryStore does
  (:class:`QueryAwareEmbeddings`; ``AsyncPostgresStore`` embeds them as
  documents, which shifts E5 scores and breaks mnemo's thresholds);
* TTLs work in memory too, with PostgreSQL's refresh-on-read semantics.

Store objects are only valid inside their ``async with`` block: after it both
raise :class:`StoreClosedError`.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import os
import time
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.embed import ensure_embeddings
from langgraph.store.memory import InMemoryStore

from mnemo import pgserver
from mnemo.embeddings import index_config
from mnemo.errors import MnemoError, UnstorableValueError, check_storable_text

logger = logging.getLogger(__name__)

#: TTL behaviour of every store mnemo opens. Items written without a ``ttl``
#: never expire; items written with ``ttl`` (minutes) expire that long after
#: their last write **or read** (``refresh_on_read``), are invisible to reads
#: as soon as they expire (``omit_expired``) and are deleted by the sweeper.
DEFAULT_TTL: TTLConfig = {"refresh_on_read": True, "omit_expired": True, "sweep_interval_minutes": 1}

#: Connection pool of the PostgreSQL store and checkpointer.
DEFAULT_POOL: dict[str, Any] = {"min_size": 1, "max_size": 10}

#: pgvector index of the PostgreSQL store: HNSW over ``vector`` with cosine
#: distance, so scores are the same cosine similarities as InMemoryStore's.
ANN_INDEX: dict[str, Any] = {"kind": "hnsw", "vector_type": "vector"}
DISTANCE = "cosine"

#: Text embedded at startup to learn the model's real dimension.
PROBE_TEXT = "mnemo dimension probe"

# Any 64-bit constants: advisory locks that serialise setup() across processes.
_STORE_SETUP_LOCK = 0x6D6E656D6F5F7331  # "mnemo_s1"
_SAVER_SETUP_LOCK = 0x6D6E656D6F5F6331  # "mnemo_c1"


class DimsMismatchError(MnemoError):
    """The embedding model and the store's ``dims`` disagree (refused at startup)."""


class StoreClosedError(MnemoError):
    """A store was used after the ``async with`` block that opened it ended."""


# --------------------------------------------------------------------------- values

_JSON_TYPES = "dict, list, str, int, float, bool or None"


def json_value(value: Any, where: str = "value") -> Any:
    """A private copy of ``value`` as PostgreSQL's ``jsonb`` would return it
    (tuples become lists), or :class:`UnstorableValueError`.

    InMemoryStore keeps any Python object by reference; PostgreSQL stores JSON.
    mnemo checks every write against the stricter of the two, on both.
    """
    if value is None or isinstance(value, bool | int):
        return value
    if isinstance(value, str):
        check_storable_text(value, where)
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UnstorableValueError(f"{where} is {value}; JSON has no NaN or Infinity")
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise UnstorableValueError(f"{where} has a {type(key).__name__} key {key!r}; JSON keys are strings")
            check_storable_text(key, f"a key of {where}")
            out[key] = json_value(item, f"{where}[{key!r}]")
        return out
    if isinstance(value, list | tuple):
        return [json_value(item, f"{where}[{i}]") for i, item in enumerate(value)]
    raise UnstorableValueError(f"{where} is a {type(value).__name__}; store values must be JSON ({_JSON_TYPES})")


def checked_ops(ops: Iterable[Op]) -> list[Op]:
    """``ops`` with every namespace label, key and value checked the same way on
    every backend (PostgreSQL's rules); put values are copied."""
    out: list[Op] = []
    for op in ops:
        validate_op_namespace(op)
        if isinstance(op, GetOp):
            check_storable_text(op.key, "the item key")
        elif isinstance(op, SearchOp):
            if op.query:
                check_storable_text(op.query, "the search query")
            if op.filter:
                json_value(dict(op.filter), "the search filter")
        elif isinstance(op, PutOp):
            check_storable_text(op.key, "the item key")
            if op.value is not None:
                if not isinstance(op.value, Mapping):
                    raise UnstorableValueError(f"an item value is a dict, got {type(op.value).__name__}")
                op = op._replace(value=json_value(dict(op.value)))
        out.append(op)
    return out


# --------------------------------------------------------------------------- config


def postgres_index_config(index: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``index`` (default: :func:`mnemo.embeddings.index_config`) plus the pgvector
    settings: ``ann_index_config`` HNSW over ``vector``, ``distance_type`` cosine."""
    config = dict(index_config() if index is None else index)
    config.setdefault("ann_index_config", dict(ANN_INDEX))
    config.setdefault("distance_type", DISTANCE)
    return config


def ttl_config(ttl: Mapping[str, Any] | None = None) -> TTLConfig:
    """:data:`DEFAULT_TTL` updated with ``ttl``."""
    return TTLConfig(**{**DEFAULT_TTL, **(ttl or {})})  # type: ignore[typeddict-item]


async def acheck_dims(index: Mapping[str, Any]) -> int:
    """Embed :data:`PROBE_TEXT` (as a document and as a query) and compare the
    vector length with ``index["dims"]``; return the length.

    Raises:
        DimsMismatchError: the lengths differ, or ``dims``/``embed`` is missing.
    """
    dims = index.get("dims")
    if index.get("embed") is None or not isinstance(dims, int) or dims <= 0:
        raise DimsMismatchError(f"the store index needs 'embed' and a positive integer 'dims', got dims={dims!r}")
    embeddings = ensure_embeddings(index["embed"])
    doc = (await embeddings.aembed_documents([PROBE_TEXT]))[0]
    query = await embeddings.aembed_query(PROBE_TEXT)
    for kind, vector in (("document", doc), ("query", query)):
        if len(vector) != dims:
            raise DimsMismatchError(
                f"the embedding model returns {len(vector)}-dimensional {kind} vectors but the store index "
                f"is configured with dims={dims}; set \"dims\": {len(vector)} (langgraph.json / index_config) "
                "or use the model the store was built with. Vectors of two models are not comparable: "
                "a store indexed with one model must be re-indexed for another."
            )
    return dims


# --------------------------------------------------------------------------- in memory


class ExpiringInMemoryStore(InMemoryStore):
    """``InMemoryStore`` that honours TTLs the way ``AsyncPostgresStore`` does.

    The stock ``InMemoryStore`` has ``supports_ttl = False``: ``put(..., ttl=)``
    refuses the argument (the library raises "not implemented") and a ``PutOp`` with a ``ttl`` passed to
    ``batch`` is silently kept forever. Here a ``ttl`` (minutes) sets a
    deadline, reads refresh it (``refresh_on_read`` / ``refresh_ttl``),
    ``omit_expired`` hides expired items before they are swept, and
    :meth:`start_ttl_sweeper` deletes them periodically.
    """

    supports_ttl = True

    def __init__(self, *, index: Any = None, ttl: TTLConfig | None = None) -> None:
        super().__init__(index=index)
        self.ttl_config = ttl
        self._deadlines: dict[tuple[tuple[str, ...], str], tuple[float, float]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._stop_sweeping: asyncio.Event | None = None
        self._closed = False

    # reads and writes

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = self._before(ops)
        results = super().batch(ops)
        self._after(ops, results)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = self._before(ops)
        results = await super().abatch(ops)
        self._after(ops, results)
        return results

    def _before(self, ops: Iterable[Op]) -> list[Op]:
        if self._closed:
            raise StoreClosedError("this store was closed (its `async with open_store(...)` block ended)")
        ops = checked_ops(ops)
        if self.ttl_config and self.ttl_config.get("omit_expired"):
            self._delete_expired()
        return ops

    def _after(self, ops: list[Op], results: list[Result]) -> None:
        if not self._deadlines and not any(isinstance(op, PutOp) and op.ttl is not None for op in ops):
            return
        now = time.time()
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, PutOp):
                key = (tuple(op.namespace), op.key)
                if op.value is None or op.ttl is None:
                    self._deadlines.pop(key, None)
                else:
                    self._deadlines[key] = (now + float(op.ttl) * 60, float(op.ttl))
            elif isinstance(op, GetOp) and op.refresh_ttl and result is not None:
                self._refresh((tuple(op.namespace), op.key), now)
            elif isinstance(op, SearchOp) and op.refresh_ttl and result:
                for item in result:  # type: ignore[union-attr]
                    self._refresh((tuple(item.namespace), item.key), now)

    def _refresh(self, key: tuple[tuple[str, ...], str], now: float) -> None:
        # As on PostgreSQL, whose ``ttl_minutes`` column is an INT: the first
        # deadline uses the exact TTL, a read re-arms it with the TTL rounded
        # to whole minutes (so a read of an item with a TTL under 30 s expires
        # it at once).
        if key in self._deadlines:
            minutes = self._deadlines[key][1]
            self._deadlines[key] = (now + round(minutes) * 60, minutes)

    def _delete_expired(self) -> int:
        now = time.time()
        expired = [key for key, (deadline, _) in self._deadlines.items() if deadline <= now]
        if not expired:
            return 0
        for key in expired:
            del self._deadlines[key]
        super().batch([PutOp(ns, k, None) for ns, k in expired])
        return len(expired)

    # sweeper (same interface as AsyncPostgresStore)

    async def sweep_ttl(self) -> int:
        """Delete expired items now; return how many."""
        return self._delete_expired()

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None) -> asyncio.Task[None]:
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper
        interval = float(sweep_interval_minutes or (self.ttl_config or {}).get("sweep_interval_minutes") or 5) * 60
        self._stop_sweeping = stop = asyncio.Event()

        async def sweep_loop() -> None:
            while True:
                try:
                    await asyncio.wait_for(stop.wait(), timeout=interval)
                    return
                except TimeoutError:
                    pass
                try:
                    if swept := self._delete_expired():
                        logger.info("in-memory store swept %d expired items", swept)
                except Exception:  # pragma: no cover - never kill the loop
                    logger.exception("in-memory TTL sweep failed")

        self._sweeper = asyncio.create_task(sweep_loop(), name="mnemo_ttl_sweeper")
        return self._sweeper

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        if self._sweeper is None or self._sweeper.done():
            return True
        assert self._stop_sweeping is not None
        self._stop_sweeping.set()
        try:
            await asyncio.wait_for(self._sweeper, timeout=timeout)
        except TimeoutError:
            return False
        self._sweeper = None
        return True

    def close(self) -> None:
        self._closed = True


# --------------------------------------------------------------------------- PostgreSQL


#: ``hnsw.ef_search`` of every store connection (pgvector's default is 40).
#: Measured with ``python -m bench.store_scale`` on 100k notes of one user
#: (random vectors, HNSW's worst case): the source note of a query ranked
#: first for 83 % of queries at 40 (p50 12 ms), 93 % at 100 (24 ms), 100 % at
#: 400 (50 ms); at 10k notes all three found it every time.
HNSW_EF_SEARCH = 100


async def _configure_connection(conn: Any) -> None:
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


def _pool_kwargs() -> dict[str, Any]:
    from psycopg.rows import dict_row

    return {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}


@asynccontextmanager
async def _advisory_lock(uri: str, lock_id: int) -> AsyncIterator[None]:
    """Hold a session advisory lock on its own connection, polling with
    ``pg_try_advisory_lock`` (a blocked ``pg_advisory_lock`` would keep a
    snapshot open and deadlock with ``CREATE INDEX CONCURRENTLY`` in setup)."""
    import psycopg

    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        while not (await (await conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_id,))).fetchone())[0]:
            await asyncio.sleep(0.1)
        try:
            yield
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (lock_id,))


async def _check_vector_table(store: Any, index: Mapping[str, Any]) -> None:
    """The ``store_vectors.embedding`` column must hold vectors of ``dims``."""
    vector_type = index.get("ann_index_config", {}).get("vector_type", "vector")
    expected = f"{vector_type}({index['dims']})"
    async with store.conn.connection() as conn:
        row = await (
            await conn.execute(
                "SELECT format_type(atttypid, atttypmod) AS t FROM pg_attribute "
                "WHERE attrelid = to_regclass('store_vectors') AND attname = 'embedding' AND NOT attisdropped"
            )
        ).fetchone()
        index_row = await (
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
    ops = {"cosine": "_cosine_ops", "l2": "_l2_ops", "inner_product": "_ip_ops"}.get(index.get("distance_type", DISTANCE))
    if index_row is not None and ops and ops not in index_row["indexdef"]:
        logger.warning(
            "store_vectors_embedding_idx was built for another distance (%s); searches stay correct "
            "but cannot use it: drop the index and run setup() again",
            index_row["indexdef"],
        )


_EMBEDDING_QUERIES: contextvars.ContextVar[bool] = contextvars.ContextVar("mnemo_embedding_queries", default=False)


class QueryAwareEmbeddings(Embeddings):
    """Routes ``aembed_documents`` to ``aembed_query`` while a search runs.

    ``AsyncPostgresStore`` (3.2.0) embeds search *queries* with
    ``aembed_documents``; ``InMemoryStore`` uses ``aembed_query``. For an
    asymmetric model such as E5 (``query: `` / ``passage: `` prefixes) the two
    give different vectors, so the same search scored differently per backend
    (e.g. 0.887 in memory, 0.901 on PostgreSQL) and mnemo's thresholds, measured
    with query vectors, would not hold on PostgreSQL. The store's search path
    sets a context variable (per task, so concurrent writes are unaffected).
    """

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if _EMBEDDING_QUERIES.get():
            return [self.inner.embed_query(t) for t in texts]
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        if _EMBEDDING_QUERIES.get():
            return [await self.inner.aembed_query(t) for t in texts]
        return await self.inner.aembed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return await self.inner.aembed_query(text)


_PG_CLASS: type | None = None


def postgres_store_class() -> type:
    """``MnemoPostgresStore``: ``AsyncPostgresStore`` with mnemo's write checks
    (:func:`checked_ops`, also applied by :class:`ExpiringInMemoryStore`),
    search queries embedded as queries (:class:`QueryAwareEmbeddings`), and a
    :class:`StoreClosedError` after its block. Defined on first use, so that
    mnemo imports without the ``postgres`` extra."""
    global _PG_CLASS
    if _PG_CLASS is None:
        from langgraph.store.postgres import AsyncPostgresStore

        class MnemoPostgresStore(AsyncPostgresStore):
            _mnemo_closed = False

            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                if self.embeddings is not None:
                    self.embeddings = QueryAwareEmbeddings(self.embeddings)

            async def _batch_search_ops(self, *args: Any, **kwargs: Any) -> None:
                token = _EMBEDDING_QUERIES.set(True)  # queries are embedded as queries
                try:
                    await super()._batch_search_ops(*args, **kwargs)
                finally:
                    _EMBEDDING_QUERIES.reset(token)

            async def abatch(self, ops: Iterable[Op]) -> list[Result]:
                if self._mnemo_closed:
                    raise StoreClosedError("this store was closed (its `async with open_store(...)` block ended)")
                return await super().abatch(checked_ops(ops))

            async def aput(
                self,
                namespace: tuple[str, ...],
                key: str,
                value: dict[str, Any],
                index: Any = None,
                *,
                ttl: float | None | NotProvided = NOT_PROVIDED,
            ) -> None:
                # Checked before queueing: a refused value must not fail the
                # other operations batched in the same tick.
                checked_ops([PutOp(namespace, key, value, index)])
                await super().aput(namespace, key, value, index, ttl=ttl)

        _PG_CLASS = MnemoPostgresStore
    return _PG_CLASS


@asynccontextmanager
async def _open_postgres(
    uri: str, index: Mapping[str, Any], ttl: TTLConfig, pool_config: Mapping[str, Any] | None, sweep: bool
) -> AsyncIterator[BaseStore]:
    pool = {**DEFAULT_POOL, **(pool_config or {})}
    pool.setdefault("configure", _configure_connection)
    cls = postgres_store_class()
    async with cls.from_conn_string(uri, pool_config=pool, index=index, ttl=ttl) as store:  # type: ignore[attr-defined]
        try:
            async with _advisory_lock(uri, _STORE_SETUP_LOCK):
                await store.setup()
            await _check_vector_table(store, index)
            if sweep:
                await store.start_ttl_sweeper()
            yield store
        finally:
            await store.stop_ttl_sweeper(timeout=5)
            store._mnemo_closed = True


# --------------------------------------------------------------------------- factories


@asynccontextmanager
async def open_store(
    *,
    postgres_uri: str | None = None,
    index: Mapping[str, Any] | None = None,
    ttl: Mapping[str, Any] | None = None,
    pool_config: Mapping[str, Any] | None = None,
    sweep: bool = True,
) -> AsyncIterator[BaseStore]:
    """Open the memory store; close it when the block ends.

    Args:
        postgres_uri: ``None`` for the in-memory store, else a PostgreSQL URI
            (the server needs pgvector).
        index: the embedding config, default :func:`mnemo.embeddings.index_config`
            (the same as ``langgraph.json``); on PostgreSQL the HNSW/cosine
            settings are added (:func:`postgres_index_config`).
        ttl: overrides of :data:`DEFAULT_TTL`.
        pool_config: overrides of :data:`DEFAULT_POOL` (``min_size``,
            ``max_size``, ``kwargs``, any ``AsyncConnectionPool`` argument).
        sweep: run the TTL sweeper task while the store is open.

    Raises:
        DimsMismatchError: the embedder's vectors do not have ``dims`` entries,
            or the PostgreSQL database was indexed with another size.
    """
    index = dict(index_config() if index is None else index)
    await acheck_dims(index)
    ttl_cfg = ttl_config(ttl)
    if postgres_uri is None:
        store = ExpiringInMemoryStore(index=index, ttl=ttl_cfg)
        if sweep:
            await store.start_ttl_sweeper()
        try:
            yield store
        finally:
            await store.stop_ttl_sweeper(timeout=5)
            store.close()
        return
    async with _open_postgres(postgres_uri, postgres_index_config(index), ttl_cfg, pool_config, sweep) as store:
        yield store


@asynccontextmanager
async def open_postgres_store(
    *,
    datadir: str | os.PathLike[str] = pgserver.DEFAULT_DATA_DIR,
    index: Mapping[str, Any] | None = None,
    ttl: Mapping[str, Any] | None = None,
    pool_config: Mapping[str, Any] | None = None,
    sweep: bool = True,
) -> AsyncIterator[BaseStore]:
    """:func:`open_store` on ``$POSTGRES_URI`` when set, else on the embedded
    PostgreSQL of ``datadir`` (started here, and stopped when the block ends
    unless another process still uses it)."""
    uri, server = await asyncio.to_thread(pgserver.resolve_uri, datadir)
    try:
        async with open_store(postgres_uri=uri, index=index, ttl=ttl, pool_config=pool_config, sweep=sweep) as store:
            yield store
    finally:
        if server is not None:
            await asyncio.to_thread(server.stop)


@asynccontextmanager
async def open_checkpointer(
    *, postgres_uri: str | None = None, pool_config: Mapping[str, Any] | None = None
) -> AsyncIterator[Any]:
    """The thread checkpointer matching :func:`open_store`: ``InMemorySaver``
    without a URI, else ``AsyncPostgresSaver`` over a pool, ``setup()`` once."""
    if postgres_uri is None:
        from langgraph.checkpoint.memory import InMemorySaver

        yield InMemorySaver()
        return
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg_pool import AsyncConnectionPool

    pc = {**DEFAULT_POOL, **(pool_config or {})}
    async with AsyncConnectionPool(
        postgres_uri,
        min_size=pc.pop("min_size"),
        max_size=pc.pop("max_size"),
        kwargs={**_pool_kwargs(), **(pc.pop("kwargs", None) or {})},
        open=False,
        **pc,
    ) as pool:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        async with _advisory_lock(postgres_uri, _SAVER_SETUP_LOCK):
            await saver.setup()
        yield saver
