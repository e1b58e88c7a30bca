"""memory_write_mode: hot, after_turn, background (scripted models; the
platform scheduling itself is shown under ``langgraph dev`` in
tests/e2e/test_background.py)."""

from __future__ import annotations

import logging
from dataclasses import asdict

from graphs.memory_writer import builder as writer_builder
from mnemo import User, aget_profile, alist_notes
from nodes import background_writer
from nodes.context import Context
from tests.agent_harness import extraction_prompts, said_in, say

ON_PLATFORM = {"langgraph_request_id": "req-1"}


async def test_hot_mode_writes_only_through_the_tools(agent, model, store):
    await say(agent, "I live in Hangzhou.", memory_write_mode="hot")
    assert extraction_prompts(model) == []
    assert await aget_profile(store, User.of("u_zhou")) == {}
    # Switching the assistant to after_turn later does not replay the hot turns.
    await say(agent, "I'm Zhou.", memory_write_mode="after_turn")
    assert "Hangzhou" not in extraction_prompts(model)[-1] and "I'm Zhou" in extraction_prompts(model)[-1]


async def test_background_outside_a_server_falls_back_to_after_turn_and_says_so(agent, model, store, caplog):
    with caplog.at_level(logging.INFO, logger="nodes.write_memory"):
        out = await say(agent, "I live in Hangzhou.", memory_write_mode="background")
    assert "writing after the turn instead" in caplog.text
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"
    assert out["memory_cursor"] == len(out["messages"])


async def test_background_turns_do_not_wait_and_a_burst_is_extracted_once(agent, model, store, fake_platform):
    for text in ("I'm Zhou.", "I live in Hangzhou.", "I'm allergic to peanuts."):
        out = await say(agent, text, memory_write_mode="background", memory_write_delay_s=7, config=ON_PLATFORM)
        assert out["messages"][-1].content == "ok"
    assert extraction_prompts(model) == []  # no turn waited for extraction
    assert await aget_profile(store, User.of("u_zhou")) == {}
    assert len(fake_platform.scheduled) == 3
    run = fake_platform.scheduled[-1]
    assert run["assistant_id"] == "memory_writer" and run["after_seconds"] == 7
    assert run["multitask_strategy"] == "rollback" and run["if_not_exists"] == "create"
    assert run["thread_id"] == background_writer.writer_thread_id("t1") != "t1"
    assert run["context"]["user_id"] == "u_zhou" and run["input"] == {"thread_id": "t1"}
    # the writer's context is this run's Context, every field of it
    expected = Context(user_id="u_zhou", model="scripted", memory_write_mode="background", memory_write_delay_s=7)
    assert run["context"] == asdict(expected)

    # Only the last scheduled run survives the debounce: it reads all three turns.
    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)
    wcfg = {"configurable": {"thread_id": run["thread_id"]}}
    await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))
    prompts = extraction_prompts(model)
    assert len(prompts) == 1 and all(t in prompts[0] for t in ("I'm Zhou.", "Hangzhou", "peanuts"))
    profile = await aget_profile(store, User.of("u_zhou"))
    assert profile["city"]["value"] == "Hangzhou" and profile["name"]["value"] == "Zhou"
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["The user is allergic to peanuts."]

    # A later writer run only extracts what is new.
    await say(agent, "I live in Suzhou now.", memory_write_mode="background", config=ON_PLATFORM)
    await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))
    prompts = extraction_prompts(model)
    assert len(prompts) == 2 and "Hangzhou" not in prompts[1] and "Suzhou" in prompts[1]
    city = (await aget_profile(store, User.of("u_zhou")))["city"]
    assert city["value"] == "Suzhou" and [h["value"] for h in city["history"]] == ["Hangzhou"]


async def test_a_background_writer_never_overwrites_a_newer_value(agent, model, store, fake_platform):
    from mnemo import aupdate_profile

    await say(agent, "I live in Hangzhou.", memory_write_mode="background", config=ON_PLATFORM)
    # Before the writer runs, the user corrects the city elsewhere (another thread, the UI).
    await aupdate_profile(store, User.of("u_zhou"), {"city": "Beijing"})
    run = fake_platform.scheduled[-1]

    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)
    await writer.ainvoke(
        run["input"], {"configurable": {"thread_id": run["thread_id"]}}, context=Context(**run["context"])
    )
    assert len(extraction_prompts(model)) == 1  # the writer did run on "Hangzhou"
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Beijing"


async def test_a_writer_run_for_another_user_never_reads_the_thread(agent, model, store, fake_platform):
    import pytest

    from mnemo.core import ForeignThreadError
    from nodes.context import Context

    await say(agent, "I live in Hangzhou.", memory_write_mode="background", config=ON_PLATFORM)
    run = fake_platform.scheduled[-1]
    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)
    wcfg = {"configurable": {"thread_id": "w-intruder"}}
    # u_li names u_zhou's conversation thread: refused before any extraction.
    with pytest.raises(ForeignThreadError):
        await writer.ainvoke(run["input"], wcfg, context=Context(**{**run["context"], "user_id": "u_li"}))
    assert extraction_prompts(model) == []
    assert await aget_profile(store, User.of("u_li")) == {}
    # The owner's own run reads it (the thread and its words were there to take).
    await writer.ainvoke(
        run["input"], {"configurable": {"thread_id": run["thread_id"]}}, context=Context(**run["context"])
    )
    assert len(extraction_prompts(model)) == 1
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"
    assert await aget_profile(store, User.of("u_li")) == {}


async def test_the_writer_drains_a_backlog_over_runs_and_gives_up_one_failing_message(
    agent, model, store, script, fake_platform, monkeypatch
):
    from langchain_core.messages import AIMessage

    # One way of structured output: one model call per extraction (a failed one would try them all).
    monkeypatch.setenv("MNEMO_STRUCTURED_OUTPUT", "function_calling")

    from mnemo.writing.pipeline import MAX_EXTRACTION_CALLS, MESSAGES_PER_CALL
    from tests.agent_harness import naive_extraction

    def picky(messages, tool_names):
        return AIMessage("no tool call") if "poison" in messages[-1].text else naive_extraction(messages, tool_names)

    script.extract = picky
    backlog = [f"message number {i}" for i in range(MESSAGES_PER_CALL * MAX_EXTRACTION_CALLS)]
    for text in ["A poison pill.", *backlog, "I live in Hangzhou."]:
        await say(agent, text, memory_write_mode="background", config=ON_PLATFORM)
    run = fake_platform.scheduled[-1]
    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)
    wcfg = {"configurable": {"thread_id": run["thread_id"]}}

    calls = []
    for _ in range(6):
        before = len(extraction_prompts(model))
        await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))
        calls.append([said_in(p) for p in extraction_prompts(model)[before:]])
    poison = ["A poison pill."]
    assert calls[:4] == [[poison + backlog[:9]], [poison + backlog[:4]], [poison + backlog[:1]], [poison]]
    assert calls[4] == [backlog[i : i + MESSAGES_PER_CALL] for i in range(0, len(backlog), MESSAGES_PER_CALL)]
    assert calls[5] == [["I live in Hangzhou."]]
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"
    state = (await writer.aget_state(wcfg)).values
    assert state["failures"] == 0 and state["failing"] == ""


async def test_the_writers_failures_count_only_against_the_message_they_were_on(
    agent, model, store, script, fake_platform
):
    """Four failures on one message, then that message written by a turn:
    the next message starts afresh (a count carried over would give it up)."""
    from langchain_core.messages import AIMessage

    from tests.agent_harness import naive_extraction

    script.extract = lambda m, t: AIMessage("no tool call")
    await say(agent, "I live in Hangzhou.", memory_write_mode="background", config=ON_PLATFORM)
    run = fake_platform.scheduled[-1]
    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)
    wcfg = {"configurable": {"thread_id": run["thread_id"]}}
    for _ in range(4):
        await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))
    assert (await writer.aget_state(wcfg)).values["failures"] == 4

    script.extract = naive_extraction
    out = await say(agent, "Thanks!", memory_write_mode="after_turn")  # writes the thread, Hangzhou included
    assert out["memory_cursor"] == len(out["messages"])
    assert (await aget_profile(store, User.of("u_zhou")))["city"]["value"] == "Hangzhou"
    await say(agent, "I'm Zhou.", memory_write_mode="background", config=ON_PLATFORM)
    await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))
    assert (await aget_profile(store, User.of("u_zhou")))["name"]["value"] == "Zhou"
