"""The server's own store, as every custom route of ``web/`` reaches it: :func:`get`."""

from __future__ import annotations

from langgraph.store.base import BaseStore

from mnemo.app import guarded


async def get() -> BaseStore:
    """The server's own store, as its store API routes and a run's nodes have it
    (behind :mod:`mnemo.stores.guard`): one mnemo write is one ``abatch`` (one
    transaction on PostgreSQL), all or nothing. The route checked the caller.

    Private API of langgraph-api 0.16.7 (guarded by
    tests/project/test_upstream_private_api.py): ``langgraph_api.store.get_store`` is
    what the server's own routes call. Not ``langgraph.config.get_store()``: in
    a custom route it gave a store created before the server configured its
    index (a store the runs never read)."""
    from langgraph_api.store import get_store

    return guarded(await get_store())
