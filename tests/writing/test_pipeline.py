"""mnemo.writing.pipeline: what each user message replied to (the context its notes carry),
and where the cursor stops when nothing is left to extract in the range asked."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from harness.scripted import ScriptedChatModel, tool_call
from mnemo.writing.pipeline import Progress, aextract_messages, called_remember, pending, replied_to, stamp_said_at


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

    loads = []

    async def no_model():
        loads.append(1)
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
    for end in (0, -5):  # a range ending before the thread's start is empty
        assert await aextract_messages(None, None, no_model, thread, 0, end, failures=2, **kw) == Progress(0, 2)
    assert loads == []


@pytest.mark.parametrize(
    ("broken", "logged"),
    [
        ("model", "could not build the memory extractor; will retry next turn"),
        ("read", "could not read the user's memory before extracting; will retry with the next turn"),
        ("write", "memory write failed; will retry with the next turn"),
    ],
)
async def test_a_model_or_store_failure_is_logged_and_counts_against_no_message(index, user, caplog, broken, logged):
    """The model not loading, the store failing its read
    or its write: the reason is logged with its traceback, the cursor stays and
    no failure is counted against the message."""

    class Flaky(InMemoryStore):
        async def abatch(self, ops):
            ops = list(ops)
            if broken == "read" or (broken == "write" and any(isinstance(op, PutOp) for op in ops)):
                raise OSError("the store is down")
            return await super().abatch(ops)

    def respond(messages, tool_names):
        return tool_call("MemoryExtraction", notes=["The user has a cat."])

    model = ScriptedChatModel(respond=respond)

    async def load():
        if broken == "model":
            raise RuntimeError("no such model")
        return model

    caplog.set_level(logging.INFO, logger="mnemo.writing.pipeline")
    thread = [HumanMessage("I have a cat.", id="h1")]
    progress = await aextract_messages(Flaky(index=index), user, load, thread, 0, failures=1, said_at=None, timeout_s=5)
    assert progress == Progress(0, 1)
    records = [r for r in caplog.records if r.name == "mnemo.writing.pipeline"]
    error = {"model": "RuntimeError", "read": "OSError", "write": "OSError"}[broken]
    assert [(r.levelname, r.getMessage(), r.exc_info[0].__name__ if r.exc_info else None) for r in records] == [
        ("ERROR", logged, error)
    ]


def test_only_user_messages_with_an_id_not_yet_stamped_are_stamped():
    messages = [HumanMessage("a", id="h0"), HumanMessage("b", id="h1"), AIMessage("c", id="a1"), HumanMessage("d")]
    stamped = stamp_said_at(messages, {"h0": "2026-01-01T00:00:00+00:00"})
    assert stamped is not None and set(stamped) == {"h0", "h1"} and stamped["h0"] == "2026-01-01T00:00:00+00:00"
    assert stamp_said_at([AIMessage("c", id="a1"), HumanMessage("d")], None) is None  # nothing new
    assert stamp_said_at(messages[:1], {"h0": "2026-01-01T00:00:00+00:00"}) is None


def _extractor(answer):
    """A model whose every extraction is ``answer`` (a MemoryExtraction's arguments, or an error)."""

    def respond(messages, tool_names):
        if isinstance(answer, Exception):
            raise answer
        return tool_call("MemoryExtraction", **answer)

    model = ScriptedChatModel(respond=respond)

    async def load():
        return model

    return model, load


async def test_a_backlog_of_user_messages_in_a_row_resumes_at_the_first_one_not_extracted(store, user):
    """Three calls of ten messages: the cursor stops right after the thirtieth."""
    from mnemo.writing.pipeline import MAX_EXTRACTION_CALLS, MESSAGES_PER_CALL

    thread = [HumanMessage(f"Message {i}.", id=f"h{i}") for i in range(MAX_EXTRACTION_CALLS * MESSAGES_PER_CALL + 1)]
    model, load = _extractor({})
    progress = await aextract_messages(store, user, load, thread, 0, failures=0, said_at=None, timeout_s=5)
    assert progress == Progress(MAX_EXTRACTION_CALLS * MESSAGES_PER_CALL, 0) and len(model.calls) == 3
    assert await aextract_messages(
        store, user, load, thread, progress.cursor, failures=0, said_at=None, timeout_s=5
    ) == (Progress(len(thread), 0))


async def test_a_message_given_up_moves_the_cursor_past_it_alone(store, user, caplog):
    """At its fourth failure in a row the first message is given up (logged);
    when the next one fails too, the cursor waits just after the first."""
    thread = [AIMessage("Hi!", id="a0"), HumanMessage("poison", id="h1"), HumanMessage("next", id="h2")]
    model, load = _extractor(RuntimeError("the extractor fails"))
    caplog.set_level(logging.INFO, logger="mnemo.writing.pipeline")
    progress = await aextract_messages(store, user, load, thread, 0, failures=4, said_at=None, timeout_s=5)
    assert progress == Progress(2, 1)
    (extraction,) = model.calls
    assert "next" in extraction["messages"][-1].text and "poison" not in extraction["messages"][-1].text
    assert [r.getMessage() for r in caplog.records if r.name == "mnemo.writing.pipeline"] == [
        "the extractor failed 4 times in a row on the user message at position 1; giving it up"
    ]


async def test_an_extraction_past_its_deadline_stays_pending_with_smaller_batches(store, user):
    """A model too slow for the deadline gives nothing up, however many turns
    it times out on: the batch shrinks to one message and stays there; once the
    model answers in time, every message is written."""
    import threading

    released = threading.Event()
    thread = [HumanMessage(f"I have {i} cats.", id=f"h{i}") for i in range(12)]

    def slow(messages, tool_names):
        released.wait(10)  # past the deadline below, until released
        return tool_call("MemoryExtraction", notes=["The user has cats."])

    model = ScriptedChatModel(respond=slow)

    async def load():
        return model

    failures, shown = 0, []
    for _ in range(6):  # more turns than it takes to give a failing message up
        progress = await aextract_messages(store, user, load, thread, 0, failures=failures, said_at=None, timeout_s=1)
        assert progress.cursor == 0
        failures = progress.failures
        shown.append(model.calls[-1]["messages"][-1].text.count("cats."))
    assert shown == [10, 5, 2, 1, 1, 1]  # smaller batches, never none
    released.set()
    progress = await aextract_messages(store, user, load, thread, 0, failures=failures, said_at=None, timeout_s=5)
    assert progress == Progress(len(thread), 0)  # one message, then the batches grow back


async def test_a_remember_that_the_tool_never_took_is_kept_by_the_extraction_after_the_turn(
    agent, model, store, script
):
    """A model that answers "remember that ..." in words (no remember_note call, as
    one whose calls come back as unreadable text): the after-turn extraction is
    shown the request and what it extracts is stored."""
    from mnemo.core import User
    from mnemo.notes import alist_notes
    from tests.agent_harness import say

    seen: list[str] = []

    def extract(messages, tool_names):
        seen.append(messages[-1].text)
        return tool_call("MemoryExtraction", notes=["The user cannot have lactose."])

    script.chat = lambda messages: AIMessage(content="Sure, I will keep that in mind.")
    script.extract = extract
    out = await say(agent, "Remember that I can't have anything with lactose.")
    assert not any(getattr(m, "tool_calls", None) for m in out["messages"])  # the tool never ran
    assert any("Remember that I can't have anything with lactose." in s for s in seen)
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == ["The user cannot have lactose."]


def test_the_remember_tool_answered_this_turn_only_after_the_latest_user_message():
    """write_memory drains the tool's queue when this turn called it (nodes/write_memory.py)."""
    call = {"name": "remember_note", "args": {"text": "vegan"}, "id": "c1"}
    earlier = [
        HumanMessage("Remember I'm vegan.", id="h1"),
        AIMessage("", tool_calls=[call], id="a1"),
        ToolMessage("Remembered.", name="remember_note", tool_call_id="c1"),
    ]
    assert called_remember(earlier)
    assert not called_remember([*earlier, AIMessage("Noted.", id="a2"), HumanMessage("Thanks!", id="h2")])
    other = ToolMessage("2 orders.", name="lookup_orders", tool_call_id="c2")
    assert not called_remember([HumanMessage("My orders?", id="h3"), other])
    assert not called_remember([])


async def test_a_fact_whose_remember_note_the_tool_refused_is_kept_in_the_user_s_words(agent, model, store, script):
    """Qwen2.5-Coder-1.5B called remember_note with an English paraphrase of a Chinese
    allergy, which the tool refused (not the user's words), and extracted the allergy
    wrongly (shrimp): the refused call took nothing, so the user's sentence is quoted."""
    from mnemo.core import User
    from mnemo.notes import alist_notes
    from tests.agent_harness import say

    def chat(messages):
        if isinstance(messages[-1], HumanMessage):
            return AIMessage(
                "", tool_calls=[{"name": "remember_note", "args": {"text": "I am allergic to seafood"}, "id": "c1"}]
            )
        return AIMessage(content="好的，我会注意。")

    script.chat = chat
    script.extract = lambda messages, tool_names: tool_call(
        "MemoryExtraction", name="吴婷", notes=["The user is allergic to shrimp."]
    )
    out = await say(agent, "我叫吴婷，我对海鲜过敏，推荐菜的时候注意一下。")
    refused = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [(m.name, m.status) for m in refused] == [("remember_note", "error")]
    assert [n["text"] for n in await alist_notes(store, User.of("u_zhou"))] == [
        "用户说：“我叫吴婷，我对海鲜过敏，推荐菜的时候注意一下。”"
    ]
