"""mnemo.writing.pipeline: what each user message replied to (the context its notes carry),
and where the cursor stops when nothing is left to extract in the range asked."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from mnemo.writing.pipeline import Progress, aextract_messages, pending, replied_to


def test_a_message_replied_to_the_assistants_last_words_before_it():
    thread = [
        HumanMessage("Hi", id="h1"),
        AIMessage("Hello! Do you have any pets?", id="a1"),
        HumanMessage("Yes, a cat.", id="h2"),
        HumanMessage("Her name is Mia.", id="h3"),
        AIMessage("", tool_calls=[{"name": "recall_notes", "args": {"query": "pets"}, "id": "c1"}], id="a2"),
        ToolMessage("nothing", tool_call_id="c1", id="t1"),
        AIMessage("Lovely. Anything else?", id="a3"),
        HumanMessage("No.", id="h4"),
    ]
    said = pending(thread, 0)
    assert [m.id for m in said] == ["h1", "h2", "h3", "h4"]
    assert replied_to(thread, said) == [
        None,  # the thread's first message replied to nothing
        "Hello! Do you have any pets?",
        "Hello! Do you have any pets?",  # two in a row answer the same question
        "Lovely. Anything else?",  # a tool call has no words to reply to
    ]


def test_words_no_store_may_keep_cost_the_context_not_the_note():
    thread = [AIMessage("Any pets?\x00", id="a1"), HumanMessage("A cat.", id="h1")]
    assert replied_to(thread, pending(thread, 0)) == [None]
    long = [AIMessage("word " * 400, id="a1"), HumanMessage("Yes.", id="h1")]
    (context,) = replied_to(long, pending(long, 0))
    assert context is not None and context.startswith("word word") and len(context) <= 301  # cut, not refused


async def test_a_range_with_nothing_to_extract_moves_the_cursor_and_keeps_the_failures_ahead():
    """Failures belong to the first pending user message: a range before it
    (a compaction's cut) keeps them; the thread's end clears them. No model is loaded."""

    async def no_model():
        raise AssertionError("nothing to extract: no model")

    thread = [
        HumanMessage("hi", id="h1"),
        AIMessage("hello", id="a1"),
        AIMessage("more", id="a2"),
        HumanMessage("I'm Zhou.", id="h2"),
    ]
    kw = {"said_at": None, "timeout_s": 1}
    assert await aextract_messages(None, None, no_model, thread, 1, 3, failures=2, **kw) == Progress(3, 2)
    assert await aextract_messages(None, None, no_model, thread, 3, 2, failures=2, **kw) == Progress(3, 2)
    assert await aextract_messages(None, None, no_model, thread, 4, failures=2, **kw) == Progress(4, 0)
