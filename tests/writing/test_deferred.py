"""mnemo.writing.deferred: ``remember_note`` queues its note and answers at once;
``write_memory`` writes the queue after the reply, keeps what a failing store left,
and a note already known is not written twice."""

from __future__ import annotations

import logging

import pytest
from langchain_core.messages import AIMessage

from mnemo.core import InvalidInputError, User
from mnemo.notes import alist_notes
from mnemo.writing.deferred import MAX_QUEUED_NOTES, awrite_deferred, defer_note, queue_notes
from tests.agent_harness import say
from tests.scripted import tool_call


def test_the_queue_adds_from_parallel_tools_and_drops_what_was_written():
    a, b, c = (defer_note(f"The user likes {x}.") for x in ("tea", "jazz", "cats"))
    queue = queue_notes(None, {"add": [a]})
    queue = queue_notes(queue, {"add": [b, c]})
    assert [n["text"] for n in queue] == ["The user likes tea.", "The user likes jazz.", "The user likes cats."]
    assert queue_notes(queue, {"done": [a["id"], c["id"]]}) == [b]


def test_the_queue_keeps_the_newest_at_its_bound(caplog):
    notes = [defer_note(f"The user likes song {i}.") for i in range(MAX_QUEUED_NOTES + 3)]
    with caplog.at_level(logging.WARNING):
        queue = queue_notes([], {"add": notes})
    assert queue == notes[3:]
    assert "3 queued notes dropped" in caplog.text


def test_a_note_is_checked_when_queued_not_when_written():
    with pytest.raises(InvalidInputError, match="order"):
        defer_note("The user's order 8841 was refunded.")
    with pytest.raises(InvalidInputError):
        defer_note("   ")
    queued = defer_note("  The user is allergic to peanuts. ", context="Any allergies?")
    assert queued["text"] == "The user is allergic to peanuts." and queued["context"] == "Any allergies?"


async def test_the_queue_is_written_once_and_a_known_note_not_twice(store, user):
    first = defer_note("The user is allergic to peanuts.", context="Any allergies?")
    assert await awrite_deferred(store, user, [first]) == [first["id"]]
    again = defer_note("The user is allergic to peanuts.")
    assert await awrite_deferred(store, user, [again]) == [again["id"]]
    (note,) = await alist_notes(store, user)
    assert note["text"] == "The user is allergic to peanuts." and note["context"] == "Any allergies?"


async def test_a_failing_store_keeps_the_queue(store, user, monkeypatch, caplog):
    queued = [defer_note("The user plays the violin.")]

    async def refuse(self, ops):
        raise ConnectionError("store down")

    monkeypatch.setattr(type(store), "abatch", refuse)
    with caplog.at_level(logging.ERROR):
        assert await awrite_deferred(store, user, queued) == []  # nothing done: all stay queued
    assert "will retry with the next turn" in caplog.text


async def test_the_tool_answers_before_the_write_and_a_failed_write_is_retried_next_turn(
    agent, model, store, script, monkeypatch
):
    import nodes.write_memory

    user = User.of("u_zhou")
    replies = iter([tool_call("remember_note", text="The user plays the violin."), AIMessage(content="Noted.")])
    script.chat = lambda messages: next(replies, AIMessage(content="ok"))
    real = nodes.write_memory.awrite_deferred

    async def down(store, user, queued, **kw):  # the store fails at the write, after the reply
        return []

    monkeypatch.setattr(nodes.write_memory, "awrite_deferred", down)
    out = await say(agent, "Remember that I play the violin.", memory_write_mode="hot")
    assert out["messages"][-2].content.startswith("Will be remembered")
    assert [n["text"] for n in out["pending_notes"]] == ["The user plays the violin."]
    assert await alist_notes(store, user) == []  # queued, not written
    monkeypatch.setattr(nodes.write_memory, "awrite_deferred", real)
    out = await say(agent, "Thanks.", memory_write_mode="hot")
    assert out["pending_notes"] == []
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]
