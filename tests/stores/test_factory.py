"""The thread checkpointer :func:`mnemo.stores.factory.open_checkpointer` gives on PostgreSQL."""

from __future__ import annotations

import time
from typing import TypedDict

from langgraph.graph import END, START, StateGraph

from harness.store_backends import terminate_connections
from mnemo.stores.factory import open_checkpointer


class Count(TypedDict):
    n: int


def incrementer() -> StateGraph:
    """A one-step graph that adds 1 to ``n``: state a checkpointer must keep."""
    builder = StateGraph(Count)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", END)
    return builder


async def test_postgres_checkpointer_keeps_threads_across_reopen(pg):
    builder = incrementer()
    config = {"configurable": {"thread_id": f"t-{time.time_ns()}"}}
    async with open_checkpointer(postgres_uri=pg.uri) as saver:
        assert (await builder.compile(checkpointer=saver).ainvoke({"n": 41}, config))["n"] == 42
    async with open_checkpointer(postgres_uri=pg.uri) as saver:
        assert (await builder.compile(checkpointer=saver).aget_state(config)).values == {"n": 42}


async def test_stale_pooled_connections_cost_no_turn(pg):
    """What a PostgreSQL restart does to the checkpointer's pool: every pooled
    connection's server process is gone. Each is checked before use and
    replaced, as the store's pool does (tests/stores/test_postgres.py)."""
    import asyncio

    builder = incrementer()
    uri = pg.create_database("stale_saver", vector=False)
    async with open_checkpointer(postgres_uri=uri) as saver:
        graph = builder.compile(checkpointer=saver)
        threads = [{"configurable": {"thread_id": f"t{i}"}} for i in range(8)]
        for t in threads:
            await graph.ainvoke({"n": 0}, t)

        async def hold() -> None:
            async with saver.conn.connection() as conn:
                await conn.execute("SELECT pg_sleep(0.05)")

        await asyncio.gather(*(hold() for _ in range(4)))  # several connections, as under load
        assert saver.conn.get_stats()["pool_size"] > 1  # the precondition: connections wait in the pool
        assert terminate_connections(pg, "stale_saver") > 1
        outcomes = [await asyncio.gather(graph.aget_state(threads[i % 8]), return_exceptions=True) for i in range(15)]
        assert [o for (o,) in outcomes if isinstance(o, BaseException)] == []
        assert [o.values for (o,) in outcomes] == [{"n": 1}] * 15
    pg.drop_database("stale_saver")
