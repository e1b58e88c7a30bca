"""The thread checkpointer :func:`mnemo.stores.factory.open_checkpointer` gives on PostgreSQL."""

from __future__ import annotations

import time

from mnemo.stores.factory import open_checkpointer


async def test_postgres_checkpointer_keeps_threads_across_reopen(pg):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class S(TypedDict):
        n: int

    builder = StateGraph(S)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", END)
    config = {"configurable": {"thread_id": f"t-{time.time_ns()}"}}
    async with open_checkpointer(postgres_uri=pg.uri) as saver:
        assert (await builder.compile(checkpointer=saver).ainvoke({"n": 41}, config))["n"] == 42
    async with open_checkpointer(postgres_uri=pg.uri) as saver:
        assert (await builder.compile(checkpointer=saver).aget_state(config)).values == {"n": 42}
