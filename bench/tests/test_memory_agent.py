"""bench/memory_agent.py: LangChain's memory-agent template as the overhead benchmark serves it,
on the store mnemo opens (in memory, PostgreSQL), against the stub model."""

from __future__ import annotations

import asyncio
import re
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from bench import memory_agent
from harness.stub_openai import StubServer
from mnemo.stores import open_store

SAID = "Remember that my locker number is 10001"


def test_a_kept_memory_is_embedded_whole_and_found_by_the_next_turn(postgres_uri, monkeypatch):
    """A "Remember ..." turn calls ``upsert_memory`` (the stub answers it as a model would), the
    memory is put as the template puts it, its whole value embedded although the store's index
    is mnemo's ``["text"]``; the next turn's prompt shows it with a similarity."""
    with StubServer() as stub:
        monkeypatch.setenv("MNEMO_MODEL", "openai:stub-model")
        monkeypatch.setenv("OPENAI_API_KEY", "stub-key")
        monkeypatch.setenv("OPENAI_BASE_URL", stub.base_url)
        memory_agent._model.cache_clear()

        async def converse() -> tuple[list[Any], list[Any], list[Any]]:
            async with open_store(postgres_uri=postgres_uri, sweep=False) as store:
                graph: Any = memory_agent.builder.compile(checkpointer=InMemorySaver(), store=store)
                config: Any = {"configurable": {"thread_id": "t"}}
                context = memory_agent.Context(user_id="u1")
                said = {"messages": [{"role": "user", "content": SAID}]}
                first = (await graph.ainvoke(said, config, context=context))["messages"]
                asked = {"messages": [{"role": "user", "content": "What is my locker number?"}]}
                await graph.ainvoke(asked, config, context=context)
                kept = await store.asearch(("memories", "u1"), query="locker number", limit=10)
                return first, kept, stub.requests

        try:
            first, kept, requests = asyncio.run(converse())
        finally:
            memory_agent._model.cache_clear()
    assert [m.type for m in first] == ["human", "ai", "tool", "ai"]
    assert [c["name"] for c in first[1].tool_calls] == ["upsert_memory"]
    assert first[3].content.startswith("ok: Stored memory ")
    assert [item.value for item in kept] == [{"content": "my locker number is 10001", "context": SAID}]
    assert kept[0].score is not None and kept[0].score > 0.5  # embedded: a vector to compare with
    prompt = requests[-1]["messages"][0]["content"]
    assert prompt.startswith("You are a helpful and friendly chatbot. Get to know the user!")
    line = re.escape(f"[{kept[0].key}]: {kept[0].value}") + r" \(similarity: 0\.\d+\)"
    assert re.search(r"<memories>\n" + line + r"\n</memories>", prompt), prompt
