"""A store wrapper that keeps mnemo's writes alive on the platform's store.

Every call becomes an ``abatch`` of the wrapper (never merged with other callers'),
a text is never put twice in one batch, and a batch still hit by the upstream bug
(langgraph#8822) is retried a bounded number of times. Details: ``docs/design.md``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import weakref
from collections.abc import Iterable
from typing import Any

from langgraph.store.base import BaseStore, Op, PutOp, Result

from mnemo.core import checked_ops
from mnemo.stores.embeddings import INDEXED_FIELDS

logger = logging.getLogger(__name__)

#: Attempts in all (the first included) before the error is raised.
ATTEMPTS = 6
#: Upper bound of the first random pause, in seconds; doubled at each attempt
#: (at most ~1.3 s of waiting over all attempts).
BASE_DELAY_S = 0.02

_UPSTREAM_ERROR = re.compile(r"Number of embeddings \(\d+\) does not match number of indices \(\d+\)")

#: Indexed text -> the lock its writers take (entries go when no one holds them).
_text_locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()


def is_duplicate_text_batch(exc: BaseException) -> bool:
    """Whether ``exc`` is the upstream error of a batch with a text put twice."""
    return isinstance(exc, ValueError) and bool(_UPSTREAM_ERROR.search(str(exc)))


def indexed_texts(ops: Iterable[Op]) -> list[str]:
    """The distinct texts the store will embed for ``ops``, sorted: the
    fields a put names in ``index``, else ``text`` (mnemo's configured field,
    ``mnemo.stores.embeddings.INDEXED_FIELDS``)."""
    texts: set[str] = set()
    for op in ops:
        if not isinstance(op, PutOp) or op.value is None or op.index is False:
            continue
        for field in op.index if isinstance(op.index, list) else INDEXED_FIELDS:
            if isinstance(text := op.value.get(field), str):
                texts.add(text)
    return sorted(texts)


class GuardedStore(BaseStore):
    """``store``, with every op checked by :func:`mnemo.core.checked_ops`, batches
    that put the same indexed text never in flight together, and retried
    (bounded, jittered) when they failed on the upstream duplicate-text error;
    any other error is raised at once."""

    def __init__(self, store: BaseStore) -> None:
        self._store = store  # the name mnemo.core.reads.require_index looks through
        self.supports_ttl = store.supports_ttl
        self.ttl_config = store.ttl_config

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return self._store.batch(ops)  # mnemo is async; the sync path is the store's own

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # PostgreSQL's rules on the platform's store too (its InMemoryStore under
        # `langgraph dev` keeps anything): a key or filter that is not text is
        # refused here, saying why, not answered as "not found".
        ops = checked_ops(ops)
        async with contextlib.AsyncExitStack() as held:
            for text in indexed_texts(ops):
                lock = _text_locks.get(text)
                if lock is None:
                    lock = _text_locks[text] = asyncio.Lock()
                await held.enter_async_context(lock)
            for attempt in range(ATTEMPTS):
                try:
                    return await self._store.abatch(ops)
                except ValueError as exc:
                    if not is_duplicate_text_batch(exc) or attempt == ATTEMPTS - 1:
                        raise
                    logger.info("store batch hit langgraph#8822 (a text put twice); retrying (%d)", attempt + 1)
                    await asyncio.sleep(random.uniform(0, BASE_DELAY_S * 2**attempt))
        raise AssertionError("unreachable")


_wrapped: weakref.WeakKeyDictionary[Any, GuardedStore] = weakref.WeakKeyDictionary()


def guarded(store: BaseStore) -> BaseStore:
    """``store`` wrapped in :class:`GuardedStore`, one wrapper per store (the
    wrapper is what per-store caches such as the policy seeding see)."""
    if isinstance(store, GuardedStore):
        return store
    wrapper = _wrapped.get(store)
    if wrapper is None:
        wrapper = _wrapped[store] = GuardedStore(store)
    return wrapper
