"""The custom store of ``langgraph.postgres.json``: mnemo's memories in PostgreSQL.

:func:`generate_store` yields the server's ``BaseStore`` on ``$POSTGRES_URI`` or else
the embedded PostgreSQL, with the index of the config file and its own TTL sweeper.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from langgraph.store.base import BaseStore

from mnemo.app import DEFAULT_DATA_DIR, PGDATA_ENV, env, open_postgres_store, postgres_env_uri

logger = logging.getLogger("server.store")  # the server loads this file under a random module name


# Private API of langgraph-api 0.16.7, in one place (guarded by
# tests/project/test_upstream_private_api.py): the server calls ``generate_store()``
# with no argument, so the only way to read the ``store`` section of the
# config it runs (index, ttl) is its module-level ``config.STORE_CONFIG``, and
# ``graph.resolve_embeddings`` is how it turns ``"embed": "./path.py:attr"``
# into an ``Embeddings`` object for its own store.


def _server_store_config() -> Mapping[str, Any]:
    """The ``store`` section of the config the server was started with (``{}``
    outside a LangGraph server)."""
    try:
        from langgraph_api import config
    except ImportError:
        return {}
    return config.STORE_CONFIG or {}


def _index(store_config: Mapping[str, Any]) -> dict[str, Any] | None:
    index = store_config.get("index")
    if not index:
        return None  # open_store falls back to mnemo.stores.embeddings.index_config()
    index = dict(index)
    from langchain_core.embeddings import Embeddings

    if not isinstance(index.get("embed"), Embeddings):
        from langgraph_api.graph import resolve_embeddings

        index["embed"] = resolve_embeddings(index)
    return index


@asynccontextmanager
async def generate_store() -> AsyncIterator[BaseStore]:
    """The server's store: ``AsyncPostgresStore`` (pool, HNSW/cosine index,
    ``setup()`` once, TTL sweeper), closed when the server shuts down."""
    store_config = _server_store_config()
    datadir = env.text(PGDATA_ENV, strip=True) or DEFAULT_DATA_DIR
    where = "POSTGRES_URI" if postgres_env_uri() else f"embedded PostgreSQL in {datadir}"
    logger.info("mnemo store: PostgreSQL (%s)", where)
    started = False
    try:
        async with open_postgres_store(
            datadir=datadir, index=_index(store_config), ttl=store_config.get("ttl")
        ) as store:
            started = True
            yield store
    except Exception as exc:
        if not started:
            _end_the_server(exc)
        raise


def _end_the_server(exc: BaseException) -> None:
    """The store could not be opened: the server cannot start. Say why, and under
    ``langgraph dev``'s reloader (this process its spawned worker) stop the
    reloader too, which would otherwise wait for a file change, serving nothing."""
    print(f"mnemo: the server cannot start: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid is not None:
        os.kill(parent.pid, signal.SIGTERM)
