"""The store backends the conformance suite runs every case on, built the way
each is built in use.

* ``memory``: :func:`mnemo.stores.factory.open_store` without a URI (mnemo's
  ``ExpiringInMemoryStore``: unit tests, notebooks).
* ``postgres``: :func:`mnemo.stores.factory.open_store` on the embedded PostgreSQL
  (what ``langgraph.postgres.json`` serves).
* ``platform``: what ``langgraph dev`` with the default ``langgraph.json``
  really runs: ``langgraph_runtime_inmem``'s disk-backed ``InMemoryStore``
  behind its ``AsyncBatchedBaseStore`` wrapper, with the ``store.index`` of
  ``langgraph.json`` (as ``set_store_config`` builds it at server start).
  mnemo does not open or wrap it; mnemo's API is all that guards it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, Op, Result

from mnemo.stores.factory import open_store

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["memory", "postgres", "platform"]


#: Why the PostgreSQL cases did not run (tests/skips.py names it at the end).
SKIP_POSTGRES_REASON = "MNEMO_SKIP_POSTGRES=1 — unset it to enable"


def terminate_connections(pg: Any, database: str) -> int:
    """What a PostgreSQL restart does to pooled connections: every server
    process of ``database`` is ended. Returns how many there were."""
    with psycopg.connect(pg.admin_uri, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = %s", (database,)
        ).fetchone()
    return int(row[0]) if row else 0


def skip_postgres() -> bool:
    """``MNEMO_SKIP_POSTGRES=1`` skips the PostgreSQL cases deliberately
    (otherwise a PostgreSQL that cannot start fails the suite)."""
    return os.environ.get("MNEMO_SKIP_POSTGRES") == "1"


class HashEmbeddings(Embeddings):
    """Deterministic unit vectors of any size (for tests that need no meaning)."""

    def __init__(self, dims: int):
        self.dims = dims

    def _vec(self, text: str) -> list[float]:
        raw = hashlib.sha256(text.encode()).digest() * (self.dims // 32 + 1)
        v = [b - 127.5 for b in raw[: self.dims]]
        norm = sum(x * x for x in v) ** 0.5
        return [x / norm for x in v]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vec(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vec(text)


class CachedEmbeddings(Embeddings):
    """``inner`` embedding each text once per session, queries and passages
    apart (E5 embeds a text differently as each). Written here: LangChain's
    ``CacheBackedEmbeddings`` lives in ``langchain-classic``, which nothing
    else needs."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.vectors: dict[tuple[str, str], list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if ("p", t) not in self.vectors]
        if missing:
            self.vectors.update(zip([("p", t) for t in missing], self.inner.embed_documents(missing), strict=True))
        return [self.vectors[("p", t)] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        if ("q", text) not in self.vectors:
            self.vectors[("q", text)] = self.inner.embed_query(text)
        return self.vectors[("q", text)]

    # In the calling thread: a hit answers in microseconds, and a miss is rare
    # once the first backend has asked.
    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


class RacingWriter(BaseStore):
    """``inner`` with another writer racing the caller: after each batch that
    ``when(ops)`` picks, ``write(inner, ops, results)`` runs (at most ``times``
    times, ``None``: every time), before the caller sees the results."""

    def __init__(
        self,
        inner: BaseStore,
        when: Callable[[list[Op]], bool],
        write: Callable[[BaseStore, list[Op], list[Result]], Awaitable[None]],
        *,
        times: int | None = 1,
    ) -> None:
        self.inner, self.when, self.write, self.times = inner, when, write, times
        self.writes = 0

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise TypeError("async only")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        results = await self.inner.abatch(ops)
        if (self.times is None or self.writes < self.times) and self.when(ops):
            self.writes += 1
            await self.write(self.inner, ops, results)
        return results


async def truncate(uri: str) -> None:
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        await conn.execute("TRUNCATE store CASCADE")


def platform_index(embed: Embeddings) -> dict[str, Any]:
    """``langgraph.json``'s ``store.index`` with ``embed`` resolved to an object
    (the server resolves ``./mnemo/stores/embeddings.py:embeddings``; the tests pass
    the same model behind a cache)."""
    index = json.loads((ROOT / "langgraph.json").read_text())["store"]["index"]
    return {**index, "embed": embed}


@asynccontextmanager
async def open_platform_store(index: Mapping[str, Any], datadir: Path) -> AsyncIterator[BaseStore]:
    """The store of ``langgraph dev`` (``langgraph_runtime_inmem.store``),
    persisted under ``datadir`` instead of ``./.langgraph_api``."""
    from langgraph_runtime_inmem import store as inmem

    saved = inmem._STORE_FILE, inmem._VECTOR_FILE
    inmem._STORE_FILE, inmem._VECTOR_FILE = str(datadir / "store.pckl"), str(datadir / "store.vectors.pckl")
    try:
        disk_backed = inmem.DiskBackedInMemStore(index=dict(index))
    finally:
        inmem._STORE_FILE, inmem._VECTOR_FILE = saved
    batched = inmem.BatchedStore(disk_backed)
    await batched.start_ttl_sweeper()  # what the server's lifespan does (a no-op here)
    try:
        yield batched
    finally:
        # The server's flush thread syncs every registered store file every 10 s,
        # for the server's lifetime, through the same temporary file as close():
        # a sync racing close() lost it, and a later one wrote into the removed
        # directory. Unregistered first, a sync in progress is let finish
        # (stop_flush_loop joins the thread; the next store registered restarts it).
        from langgraph_runtime_inmem import _persistence

        for name in (datadir / "store.pckl", datadir / "store.vectors.pckl"):
            _persistence._stores.pop(str(name), None)
        _persistence.stop_flush_loop()
        batched.close()


def open_backend(backend: str, uri: str | None, index, tmp_path, request):
    """A fresh store of ``backend`` with ``index``, opened as in use."""
    if backend == "platform":
        request.getfixturevalue("platform_dir")
        return open_platform_store(platform_index(index["embed"]) | {"dims": index["dims"]}, tmp_path)
    return open_store(postgres_uri=uri, index=index)


def import_platform_store_module(workdir: Path) -> None:
    """Import ``langgraph_runtime_inmem.store`` with ``workdir`` as the current
    directory: at import it creates ``.langgraph_api/`` and loads the store
    files found there, which must not be the repository's own."""
    import sys

    if "langgraph_runtime_inmem.store" in sys.modules:
        return
    cwd = os.getcwd()
    os.chdir(workdir)
    try:
        import langgraph_runtime_inmem.store  # noqa: F401
    finally:
        os.chdir(cwd)
