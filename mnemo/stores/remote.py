"""A ``BaseStore`` that reaches a running LangGraph server's store through ``langgraph_sdk``.

Each op becomes the matching SDK call, so mnemo's functions run through the server's
auth with the caller's token; written by hand because neither LangGraph nor the SDK
ships such an adapter. Async only. Every op is checked first as every backend
checks it (:func:`mnemo.core.checked_ops`): a key that is not text (an unpaired
surrogate) is an :class:`mnemo.UnstorableValueError`, not an encoding crash.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import httpx
from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from mnemo.core import StoreUnavailableError, checked_ops


def _when(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))


class ServerStore(BaseStore):
    """The store of the LangGraph server ``client`` talks to (a ``langgraph_sdk`` async client)."""

    supports_ttl = True  # the server decides; it rejects a TTL it cannot honour

    def __init__(self, client: Any) -> None:
        self._store = client.store

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        raise TypeError("ServerStore is async only: use abatch / the a* methods")

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        checked = checked_ops(ops)  # what the server's store would refuse, refused here first, saying why
        try:
            return [await self._run(op) for op in checked]
        except httpx.HTTPStatusError as exc:
            if exc.response.status_code == 503:  # the server's store is down (StoreUnavailableError there)
                raise StoreUnavailableError(f"the server's store is unavailable: {exc.response.text[:200]}") from exc
            raise

    async def _run(self, op: Op) -> Result:
        s = self._store
        if isinstance(op, PutOp):
            if op.value is None:
                await s.delete_item(list(op.namespace), key=op.key)
            else:
                ttl = None if op.ttl is None else int(round(op.ttl))
                await s.put_item(list(op.namespace), key=op.key, value=dict(op.value), index=op.index, ttl=ttl)
            return None
        if isinstance(op, SearchOp):
            found = await s.search_items(
                list(op.namespace_prefix), filter=op.filter, limit=op.limit, offset=op.offset, query=op.query
            )
            return [
                SearchItem(
                    namespace=tuple(it["namespace"]),
                    key=it["key"],
                    value=it["value"],
                    created_at=_when(it["created_at"]),
                    updated_at=_when(it["updated_at"]),
                    score=it.get("score"),
                )
                for it in found["items"]
            ]
        if isinstance(op, GetOp):
            try:
                it = await s.get_item(list(op.namespace), key=op.key)
            except httpx.HTTPStatusError as exc:
                if exc.response.status_code == 404:
                    return None
                raise
            if not it:
                return None
            return Item(
                namespace=tuple(it["namespace"]),
                key=it["key"],
                value=it["value"],
                created_at=_when(it["created_at"]),
                updated_at=_when(it["updated_at"]),
            )
        if isinstance(op, ListNamespacesOp):
            conditions = {c.match_type: [str(p) for p in c.path] for c in op.match_conditions or ()}
            found = await s.list_namespaces(
                prefix=conditions.get("prefix"),
                suffix=conditions.get("suffix"),
                max_depth=op.max_depth,
                limit=op.limit,
                offset=op.offset,
            )
            return [tuple(ns) for ns in found["namespaces"]]
        raise TypeError(f"unknown store op {type(op).__name__}")
