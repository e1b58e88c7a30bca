"""PostgreSQL down in the middle of a session: store calls fail within a
bounded time with ``StoreUnavailableError`` (HTTP 503 on the server), the
calls after the first fail without waiting for the pool again,
a turn answers without memory and says so, and what the user said meanwhile
is written once PostgreSQL is back."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from graphs.agent import builder
from harness.store_backends import SKIP_POSTGRES_REASON, skip_postgres
from mnemo import StoreUnavailableError, User, aget_profile, alist_notes
from mnemo.stores import embedded_postgres as pgserver
from mnemo.stores.factory import open_store
from mnemo.stores.postgres_setup import CONNECT_TIMEOUT_S, REACHABLE_CHECK_S
from tests.agent_harness import chat_prompts, memory_block, naive_extraction, say

pytestmark = pytest.mark.skipif(skip_postgres(), reason=SKIP_POSTGRES_REASON)


def goats_extractor(messages, tool_names):
    """:func:`naive_extraction`, and the goats when the user mentions them."""
    extraction = naive_extraction(messages, tool_names)
    if "keep goats" in messages[-1].text:
        extraction.tool_calls[0]["args"]["notes"] = ["The user keeps goats."]
    return extraction


async def test_a_turn_with_postgres_down_answers_and_its_words_are_written_once_it_is_back(
    tmp_path, cached_index, model, script
):
    datadir = tmp_path / "data"  # a server of its own: this test stops it
    server = await asyncio.to_thread(pgserver.start, datadir, database="outage", cleanup="stop")
    script.extract = goats_extractor
    user = User.of("u_zhou")
    try:
        async with open_store(postgres_uri=server.uri, index=cached_index) as store:
            pool = store.conn
            assert pool.kwargs["connect_timeout"] == CONNECT_TIMEOUT_S  # bounded, as the check
            assert REACHABLE_CHECK_S < pool.timeout  # PostgreSQL down is found before the pool gives up
            agent = builder.compile(checkpointer=InMemorySaver(), store=store)
            await say(agent, "Hello, I'm Zhou.")
            assert await aget_profile(store, user)  # the precondition: memory works, connections are pooled

            await asyncio.to_thread(server.stop)  # PostgreSQL down
            with pytest.raises(StoreUnavailableError):
                await aget_profile(store, user)  # PostgreSQL checked after REACHABLE_CHECK_S
            asked = pool.get_stats().get("requests_num", 0)
            reply = await say(agent, "Remember that I keep goats.")
            # The other calls did not wait for the pool: not one connection was asked of it.
            assert pool.get_stats().get("requests_num", 0) == asked
            assert reply["messages"][-1].content == "ok"  # the turn answered
            block = memory_block(chat_prompts(model)[-1])
            assert "long-term memory is unavailable" in block and "StoreUnavailableError" in block
            assert "tell the user" in block
            assert reply["memory_cursor"] < len(reply["messages"])  # what was said stays pending

            server = await asyncio.to_thread(pgserver.start, datadir, database="outage", cleanup="delete")
            assert await alist_notes(store, user) == []  # back, and the goats not written yet
            await say(agent, "What soups do you have?")
            assert [n["text"] for n in await alist_notes(store, user)] == ["The user keeps goats."]
    finally:
        await asyncio.to_thread(server.stop)


async def test_the_first_call_after_postgres_goes_down_gives_up_at_the_probe_not_the_pools_timeout(
    tmp_path, cached_index, monkeypatch
):
    """Seen through a spy on the probe, not a clock: the call waiting for
    the pool is answered by one refused probe (and the next call's probe
    comes first, before the pool is asked)."""
    from mnemo.stores import postgres as postgres_store

    server = await asyncio.to_thread(pgserver.start, tmp_path / "data", database="probe", cleanup="delete")
    probes: list[tuple[str, bool]] = []
    reachable = postgres_store._reachable

    async def spy(conninfo: str) -> bool:
        probes.append((conninfo, await reachable(conninfo)))
        return probes[-1][1]

    monkeypatch.setattr(postgres_store, "_reachable", spy)
    user = User.of("u_zhou")
    try:
        async with open_store(postgres_uri=server.uri, index=cached_index) as store:
            pool = store.conn
            assert await aget_profile(store, user) == {} and probes == []  # up: no probe
            assert REACHABLE_CHECK_S < pool.timeout  # the precondition: the probe comes first
            await asyncio.to_thread(server.stop)
            with pytest.raises(StoreUnavailableError) as down:
                await aget_profile(store, user)
            # The probe's refusal, not the pool's timeout (which names PoolTimeout and is its cause).
            assert str(down.value) == "PostgreSQL cannot be reached; try again shortly"
            assert down.value.__cause__ is None
            assert probes == [(str(pool.conninfo), False)]
            asked = pool.get_stats().get("requests_num", 0)
            with pytest.raises(StoreUnavailableError, match="nothing was read or written"):
                await aget_profile(store, user)
            assert probes[1:] == [(str(pool.conninfo), False)] and pool.get_stats().get("requests_num", 0) == asked
    finally:
        await asyncio.to_thread(server.stop)
