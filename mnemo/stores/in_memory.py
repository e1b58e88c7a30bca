"""The in-memory backend: ``InMemoryStore`` with TTLs and PostgreSQL's value rules.

For unit tests and notebooks (:func:`mnemo.stores.factory.open_store` without a URI).
No server uses it: ``langgraph dev`` runs the platform's own store.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any, cast

from langgraph.store.base import GetOp, Item, Op, PutOp, Result, SearchOp, TTLConfig
from langgraph.store.memory import InMemoryStore

from mnemo.core import StoreClosedError, checked_ops

logger = logging.getLogger(__name__)

_ItemKey = tuple[tuple[str, ...], str]


class ExpiringInMemoryStore(InMemoryStore):
    """``InMemoryStore`` that honours TTLs the way ``AsyncPostgresStore`` does.

    The stock ``InMemoryStore`` has ``supports_ttl = False``: ``put(..., ttl=)``
    refuses the argument (the library raises "not implemented") and a ``PutOp`` with a ``ttl`` passed to
    ``batch`` is silently kept forever. Here a ``ttl`` (minutes) sets a
    deadline, reads refresh it (``refresh_on_read`` / ``refresh_ttl``),
    ``omit_expired`` hides expired items before they are swept, and
    :meth:`start_ttl_sweeper` deletes them periodically.

    Every op is checked by :func:`mnemo.core.storable.checked_ops` first, and after
    :meth:`close` every read or write raises :class:`StoreClosedError`.
    """

    supports_ttl = True

    def __init__(self, *, index: Any = None, ttl: TTLConfig | None = None) -> None:
        super().__init__(index=index)
        self.ttl_config = ttl
        #: (namespace, key) -> (deadline as a UNIX time, ttl in minutes)
        self._deadlines: dict[_ItemKey, tuple[float, float]] = {}
        self._sweeper: asyncio.Task[None] | None = None
        self._stop_sweeping: asyncio.Event | None = None
        self._closed = False

    # reads and writes

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        checked = self._before(ops)
        results = super().batch(checked)
        self._after(checked, results)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        checked = self._before(ops)
        results = await super().abatch(checked)
        self._after(checked, results)
        return results

    def _before(self, ops: Iterable[Op]) -> list[Op]:
        if self._closed:
            raise StoreClosedError("this store was closed (its `async with open_store(...)` block ended)")
        checked = checked_ops(ops)
        if self.ttl_config and self.ttl_config.get("omit_expired"):
            self._delete_expired()
        return checked

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
                for item in cast(list[Item], result):
                    self._refresh((tuple(item.namespace), item.key), now)

    def _refresh(self, key: _ItemKey, now: float) -> None:
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
        self._sweeper = asyncio.create_task(self._sweep_until(stop, interval), name="mnemo_ttl_sweeper")
        return self._sweeper

    async def _sweep_until(self, stop: asyncio.Event, interval: float) -> None:
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
