"""Meters of what the agent asks per graph node, for the per-turn cost benchmark.

:class:`CountingEmbeddings` and :class:`CountingStore` record every call into the
embedder and every store round trip (no cache: the cost is what is measured),
:class:`SparseMeter` the CPU time of the learned sparse encoder, :class:`NodeTimer`
the wall time of each node run; each call is filed under the node whose code made
it (:func:`current_node`).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.embeddings import Embeddings
from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, Op, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore


@dataclass
class EmbedCall:
    """One call into the embedder, as the per-turn benchmark records it."""

    node: str
    kind: str  # "query" | "documents"
    texts: int
    seconds: float


class CountingEmbeddings(Embeddings):
    """Passes every call to ``inner`` and records it, under the node that made it."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.calls: list[EmbedCall] = []

    def _record(self, kind: str, n: int, seconds: float) -> None:
        self.calls.append(EmbedCall(current_node(), kind, n, seconds))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        start = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self._record("documents", len(texts), time.perf_counter() - start)
        return out

    def embed_query(self, text: str) -> list[float]:
        start = time.perf_counter()
        out = self.inner.embed_query(text)
        self._record("query", 1, time.perf_counter() - start)
        return out

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        start = time.perf_counter()
        out = await self.inner.aembed_documents(texts)
        self._record("documents", len(texts), time.perf_counter() - start)
        return out

    async def aembed_query(self, text: str) -> list[float]:
        start = time.perf_counter()
        out = await self.inner.aembed_query(text)
        self._record("query", 1, time.perf_counter() - start)
        return out


def current_node() -> str:
    """Name of the graph node whose code is running, or ``"outside"``.

    LangGraph keeps the running task's config in a context variable; a store
    or embedder call made by a node (or a tool inside the ``tools`` node)
    sees that node's ``langgraph_node`` metadata, including inside
    ``asyncio.to_thread`` (context variables are copied to the thread).
    """
    try:
        from langgraph.config import get_config

        return str(get_config().get("metadata", {}).get("langgraph_node") or "outside")
    except Exception:  # no runnable context: a call made by the benchmark itself
        return "outside"


def op_kind(op: Op) -> str:
    """A short label of a store operation, for the op counts."""
    if isinstance(op, SearchOp):
        if op.query:
            return "search_query"
        return "search_filter" if op.filter else "search_list"
    if isinstance(op, PutOp):
        return "delete" if op.value is None else "put"
    if isinstance(op, GetOp):
        return "get"
    if isinstance(op, ListNamespacesOp):
        return "list_namespaces"
    return type(op).__name__


@dataclass
class StoreCall:
    """One round trip to the store: a ``batch``/``abatch`` call."""

    node: str
    ops: Counter
    seconds: float


class CountingStore(InMemoryStore):
    """An :class:`InMemoryStore` that records every round trip.

    Every public method of ``BaseStore`` (``asearch``, ``aput``, ``aget``,
    ``adelete``, ...) goes through ``abatch``/``batch``, so counting those two
    counts round trips exactly once each; on a networked backend
    (PostgreSQL) each of them is one query round trip.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.calls: list[StoreCall] = []

    async def abatch(self, ops: Iterable[Op]) -> list[Any]:
        ops = list(ops)
        start = time.perf_counter()
        try:
            return await super().abatch(ops)
        finally:
            self.calls.append(StoreCall(current_node(), Counter(op_kind(o) for o in ops), time.perf_counter() - start))

    def batch(self, ops: Iterable[Op]) -> list[Any]:
        ops = list(ops)
        start = time.perf_counter()
        try:
            return super().batch(ops)
        finally:
            self.calls.append(StoreCall(current_node(), Counter(op_kind(o) for o in ops), time.perf_counter() - start))


class NodeTimer(BaseCallbackHandler):
    """Wall time of each graph node run, from LangChain's chain callbacks.

    A node's runnable reports ``on_chain_start`` with its own name and
    ``metadata["langgraph_node"]`` equal to it; runnables inside the node
    (the model, the parser) carry the same metadata under other names and
    are ignored.
    """

    def __init__(self, nodes: tuple[str, ...]) -> None:
        self.nodes = nodes
        self._open: dict[Any, tuple[str, float]] = {}
        self.runs: list[tuple[str, float]] = []

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, tags=None, metadata=None, **kwargs):
        name = kwargs.get("name")
        if name in self.nodes and (metadata or {}).get("langgraph_node") == name:
            self._open[run_id] = (name, time.perf_counter())

    def on_chain_end(self, outputs, *, run_id, **kwargs):
        if run_id in self._open:
            name, start = self._open.pop(run_id)
            self.runs.append((name, time.perf_counter() - start))

    def on_chain_error(self, error, *, run_id, **kwargs):
        self.on_chain_end(None, run_id=run_id)


class SparseMeter:
    """CPU time of every text the learned sparse encoder (SPLADE,
    :mod:`mnemo.stores.splade`) encodes, with the graph node that asked: the
    encoder runs in a worker thread, whose own CPU time is what is measured
    (numpy's BLAS limited to one thread: ``OPENBLAS_NUM_THREADS=1``); inside
    a ``with`` block."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, float]] = []
        self._patch: Any = None

    def __enter__(self) -> SparseMeter:
        from unittest import mock

        from mnemo.stores import SpladeEncoder

        original = SpladeEncoder.encode

        def metered(encoder: SpladeEncoder, text: str) -> dict[str, float]:
            # mnemo.notes.sparse_vectors encodes a query in _query_vector, a note in _stamp.
            kind = "query" if sys._getframe(1).f_code.co_name == "_query_vector" else "write"
            start = time.thread_time()
            try:
                return original(encoder, text)
            finally:
                self.calls.append((current_node(), kind, time.thread_time() - start))

        self._patch = mock.patch.object(SpladeEncoder, "encode", metered)
        self._patch.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._patch is not None:
            self._patch.stop()


class CountedStore:
    """Counts the round trips and their ops of any store, PostgreSQL's too
    (wraps the instance: every method goes through ``abatch``)."""

    def __init__(self, store: BaseStore) -> None:
        self.store = store
        self.trips = 0
        self.ops: Counter[str] = Counter()
        original = store.abatch

        async def abatch(ops: Any) -> Any:
            ops = list(ops)
            self.trips += 1
            self.ops.update(type(op).__name__ for op in ops)
            return await original(ops)

        store.abatch = abatch  # type: ignore[method-assign]

    def reset(self) -> None:
        self.trips = 0
        self.ops.clear()
