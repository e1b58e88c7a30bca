"""nodes.compact_history: the running summary counts with the messages against the thread's
token budget, both on the route to the compaction and in the compaction itself."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.runtime import Runtime

from mnemo.turn.history import count_tokens
from nodes.compact_history import compact_history, route_after_load
from nodes.context import Context

BUDGET = 1000


def runtime() -> Runtime[Context]:
    # Trimmed, with no extraction before it: the compaction calls no model.
    context = Context(history_token_budget=BUDGET, history_strategy="trim", memory_write_mode="hot")
    assert context.history_token_budget == BUDGET
    return Runtime(context=context)


def thread() -> list:
    """Eight turns of about 70 tokens each: under the budget alone."""
    said = "I would like to know when the order I placed last week will arrive at my address. " * 3
    return [
        message
        for turn in range(4)
        for message in (HumanMessage(said, id=f"h{turn}"), AIMessage(f"It ships soon. {said}", id=f"a{turn}"))
    ]


SUMMARY = "The user asked about a delayed order and a refund for a broken kettle. " * 40


def test_the_running_summary_counts_with_the_messages_on_the_route_to_compaction():
    messages = thread()
    assert count_tokens(messages) <= BUDGET < count_tokens(messages, SUMMARY)  # only with the summary over
    assert route_after_load({"messages": messages}, runtime()) == "call_model"
    assert route_after_load({"messages": messages, "summary": SUMMARY}, runtime()) == "compact_history"


async def test_the_compaction_the_summary_leads_to_removes_the_oldest_messages():
    messages = thread()
    assert await compact_history({"messages": messages}, runtime()) == {}  # under the budget alone
    update = await compact_history({"messages": messages, "summary": SUMMARY}, runtime())
    removed = [m.id for m in update["messages"] if isinstance(m, RemoveMessage)]
    assert removed and removed == [m.id for m in messages[: len(removed)]]
