"""Where memories are kept: one factory for every backend mnemo supports.

:func:`open_store` (in memory, or PostgreSQL given a URI), :func:`open_postgres_store`
and :func:`open_checkpointer`; every backend gets the same rules and its ``dims``
checked at startup, and is valid only inside its ``async with`` block.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langgraph.store.base import BaseStore

from mnemo.stores import embedded_postgres as pgserver
from mnemo.stores.in_memory import ExpiringInMemoryStore
from mnemo.stores.settings import acheck_dims, store_index_config, ttl_config


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
        index: the embedding config, default :func:`mnemo.stores.embeddings.index_config`
            (the same as ``langgraph.json``); on PostgreSQL the HNSW/cosine
            settings are added (:func:`mnemo.stores.postgres.postgres_index_config`).
        ttl: overrides of :data:`mnemo.stores.settings.DEFAULT_TTL`.
        pool_config: overrides of :data:`mnemo.stores.postgres_setup.DEFAULT_POOL`
            (``min_size``, ``max_size``, ``kwargs``, any ``AsyncConnectionPool``
            argument).
        sweep: run the TTL sweeper task while the store is open.

    Raises:
        DimsMismatchError: the embedder's vectors do not have ``dims`` entries,
            or the PostgreSQL database was indexed with another size.
    """
    index = store_index_config(index)
    await acheck_dims(index)
    ttl_cfg = ttl_config(ttl)
    if postgres_uri is None:
        async with _open_in_memory(index, ttl_cfg, sweep) as store:
            yield store
        return
    from mnemo.stores.postgres import open_postgres, postgres_index_config  # needs the postgres extra

    async with open_postgres(postgres_uri, postgres_index_config(index), ttl_cfg, pool_config, sweep) as pg_store:
        yield pg_store


@asynccontextmanager
async def _open_in_memory(index: dict[str, Any], ttl: Any, sweep: bool) -> AsyncIterator[ExpiringInMemoryStore]:
    store = ExpiringInMemoryStore(index=index, ttl=ttl)
    if sweep:
        await store.start_ttl_sweeper()
    try:
        yield store
    finally:
        await store.stop_ttl_sweeper(timeout=5)
        store.close()


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

    from mnemo.stores.postgres_setup import SAVER_SETUP_LOCK, advisory_lock, make_pool  # needs the postgres extra

    async with make_pool(postgres_uri, pool_config) as pool:
        saver = AsyncPostgresSaver(pool)
        async with advisory_lock(postgres_uri, SAVER_SETUP_LOCK):
            await saver.setup()
        yield saver
