"""nodes.call_model: a model that keeps calling tools is asked without them after
``MAX_TOOL_ROUNDS`` rounds, so the turn ends with an answer (issue 42: a small model
called a tool again and again until the server's context was full)."""

from __future__ import annotations

import asyncio
import logging

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from harness.scripted import tool_call
from mnemo.turn import MAX_TOOL_ROUNDS, tool_rounds
from nodes.context import Context


def test_the_rounds_are_counted_from_the_latest_user_message():
    call = AIMessage("", tool_calls=[{"name": "recall_notes", "args": {"query": "x"}, "id": "c"}])
    result = ToolMessage("none", tool_call_id="c")
    earlier = [HumanMessage("hi"), call, result, AIMessage("ok")]
    assert tool_rounds(earlier) == 1
    assert tool_rounds([*earlier, HumanMessage("again")]) == 0  # a new turn
    assert tool_rounds([*earlier, HumanMessage("again"), call, result, call, result]) == 2


async def test_a_model_that_keeps_calling_tools_is_asked_to_answer_without_them(agent, model, caplog):
    def respond(messages, tools):
        if "MemoryExtraction" in tools:
            return tool_call("MemoryExtraction")
        # Calls a tool whenever it is offered one, as Qwen2.5-Coder-1.5B did.
        return tool_call("recall_notes", query="pets") if tools else AIMessage(content="Here is my answer.")

    model.respond = respond
    with caplog.at_level(logging.WARNING):
        # A step limit of the run's own, so that a model left looping fails here rather than hangs.
        out = await agent.ainvoke(
            {"messages": [HumanMessage("What pets do I have?")]},
            {"configurable": {"thread_id": "t1"}, "recursion_limit": 2 * MAX_TOOL_ROUNDS + 8},
            context=Context(user_id="u_zhou", model="scripted", memory_write_mode="hot"),
        )
    assert out["messages"][-1].content == "Here is my answer."
    chats = [c for c in model.calls if "MemoryExtraction" not in c["tool_names"]]
    # The tools were offered for MAX_TOOL_ROUNDS calls (each answered with a call), then not.
    assert [bool(c["tool_names"]) for c in chats] == [True] * MAX_TOOL_ROUNDS + [False]
    assert tool_rounds(out["messages"]) == MAX_TOOL_ROUNDS
    assert f"{MAX_TOOL_ROUNDS} rounds of tool calls this turn" in caplog.text


async def _turn(agent, text="What pets do I have?"):
    return await agent.ainvoke(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": "t1"}},
        context=Context(user_id="u_zhou", model="scripted", memory_write_mode="hot"),
    )


def _chats(model):
    return [c for c in model.calls if "MemoryExtraction" not in c["tool_names"]]


async def test_the_entitlements_and_the_instructions_are_read_at_once(agent, model, monkeypatch):
    """Each read waits for the other to have started: read one after the other, they would never end."""
    import nodes.call_model as node

    started = {"tools": asyncio.Event(), "learned": asyncio.Event()}

    def meeting(name, other, read):
        async def wrapped(*args, **kwargs):
            started[name].set()
            await asyncio.wait_for(started[other].wait(), 5)
            return await read(*args, **kwargs)

        return wrapped

    monkeypatch.setattr(node, "aavailable_tools", meeting("tools", "learned", node.aavailable_tools))
    monkeypatch.setattr(node, "aload_learned", meeting("learned", "tools", node.aload_learned))
    out = await _turn(agent)
    assert out["messages"][-1].content and _chats(model)[0]["tool_names"]  # answered, with its tools
    assert "(unavailable this turn)" not in _chats(model)[0]["messages"][0].text


async def test_a_failed_read_costs_only_what_it_reads(agent, model, monkeypatch, caplog):
    """No entitlements: no tools, the instructions still read; no instructions: the tools still offered."""
    import nodes.call_model as node

    async def refuse(*args, **kwargs):
        raise ConnectionError("store down")

    read_tools = node.aavailable_tools
    monkeypatch.setattr(node, "aavailable_tools", refuse)
    with caplog.at_level(logging.ERROR):
        await _turn(agent)
    first = _chats(model)[-1]
    assert first["tool_names"] == [] and "(unavailable this turn)" not in first["messages"][0].text
    assert "could not read entitlements" in caplog.text

    monkeypatch.setattr(node, "aavailable_tools", read_tools)
    monkeypatch.setattr(node, "aload_learned", refuse)
    await _turn(agent, "And my cat?")
    second = _chats(model)[-1]
    assert second["tool_names"] and "(unavailable this turn)" in second["messages"][0].text
    assert "could not load the learned instructions" in caplog.text


async def test_after_the_last_tool_round_no_call_is_recovered_from_text(agent, model):
    """Issue 57.12: a model that writes its calls as text (Qwen2.5-Coder on llama-server),
    round after round; past ``MAX_TOOL_ROUNDS`` no tool is offered, so the same text is
    the answer and no call is made of it."""
    written = '```json\n{"name": "recall_notes", "arguments": {"query": "pets"}}\n```'

    def respond(messages, tools):
        return tool_call("MemoryExtraction") if "MemoryExtraction" in tools else AIMessage(content=written)

    model.respond = respond
    out = await agent.ainvoke(
        {"messages": [HumanMessage("What pets do I have?")]},
        {"configurable": {"thread_id": "t1"}, "recursion_limit": 2 * MAX_TOOL_ROUNDS + 8},
        context=Context(user_id="u_zhou", model="scripted", memory_write_mode="hot"),
    )
    # Recovered while tools were offered (the precondition): MAX_TOOL_ROUNDS calls ran.
    assert [m.name for m in out["messages"] if isinstance(m, ToolMessage)] == ["recall_notes"] * MAX_TOOL_ROUNDS
    assert [bool(c["tool_names"]) for c in _chats(model)] == [True] * MAX_TOOL_ROUNDS + [False]
    last = out["messages"][-1]
    assert isinstance(last, AIMessage) and last.content == written and not last.tool_calls
