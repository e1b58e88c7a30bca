"""mnemo.writing.deferred: ``remember_note`` puts its note in the user's queue in
the store before it answers "will be remembered" (a rollback of the run cannot
take it); ``write_memory`` writes the queue after the reply, before the
extraction, with the tool's run as the audited origin; what a run that never
reached ``write_memory`` left is written by the user's next turn on any thread,
once; a store that is down keeps the queue for the next turn."""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.messages import AIMessage, ToolMessage

import nodes.write_memory
from harness.scripted import tool_call
from mnemo.audit import Origin
from mnemo.audit.chain import alist_audit
from mnemo.core import QUEUED_NOTES, InvalidInputError, StoreUnavailableError, User, alist_all
from mnemo.notes import alist_notes
from mnemo.writing import deferred
from mnemo.writing.deferred import STALE_S, adrain, amove_legacy, aqueue_note, defer_note, queue_notes
from tests.agent_harness import say

RUN_A = Origin(source="tool", thread_id="t1", run_id="run-a")
RUN_B = Origin(source="tool", thread_id="t2", run_id="run-b")


async def queued(store, user) -> list[dict]:
    return [it.value for it in await alist_all(store, user.namespace(QUEUED_NOTES))]


async def note_adds(store, user) -> list[tuple]:
    trail = await alist_audit(store, user)
    return [(r["source"], r["thread_id"], r["run_id"]) for r in trail if r["action"] == "note.add"]


def test_a_note_is_checked_when_queued_not_when_written():
    with pytest.raises(InvalidInputError, match="order"):
        defer_note("The user's order 8841 was refunded.")
    with pytest.raises(InvalidInputError):
        defer_note("   ")
    note = defer_note("  The user is allergic to peanuts. ", context="Any allergies?", origin=RUN_A)
    assert note["text"] == "The user is allergic to peanuts." and note["context"] == "Any allergies?"
    assert (note["thread_id"], note["run_id"]) == ("t1", "run-a")


async def test_the_queue_is_written_once_with_its_run_as_the_origin(store, user):
    first = defer_note("The user is allergic to peanuts.", context="Any allergies?", origin=RUN_A)
    await aqueue_note(store, user, first)
    assert await adrain(store, user, RUN_A) == [first["id"]]
    assert await queued(store, user) == []  # removed with the write
    assert await adrain(store, user, RUN_A) == []  # nothing left to write twice
    await aqueue_note(store, user, defer_note("The user is allergic to peanuts.", origin=RUN_A))
    await adrain(store, user, RUN_A)
    (note,) = await alist_notes(store, user)
    assert note["text"] == "The user is allergic to peanuts." and note["context"] == "Any allergies?"
    assert await note_adds(store, user) == [("tool", "t1", "run-a")]


async def test_another_runs_entries_wait_while_it_is_in_progress(store, user):
    await aqueue_note(store, user, defer_note("The user plays the violin.", origin=RUN_A))

    async def running(thread_id, run_id):
        assert (thread_id, run_id) == ("t1", "run-a")
        return True

    async def cannot_tell(thread_id, run_id):
        return None

    assert await adrain(store, user, RUN_B, in_progress=running) == []
    assert await adrain(store, user, RUN_B, in_progress=cannot_tell) == []  # young: its run may still write it
    assert await adrain(store, user, RUN_B) == []
    assert len(await queued(store, user)) == 1 and await alist_notes(store, user) == []
    later = datetime.now(UTC) + timedelta(seconds=STALE_S + 1)
    assert len(await adrain(store, user, RUN_B, in_progress=cannot_tell, now=later)) == 1  # stale: written
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]
    assert await note_adds(store, user) == [("tool", "t1", "run-a")]  # the run that queued it, not the drainer


async def test_an_ended_runs_entries_are_written_by_the_next_run(store, user):
    await aqueue_note(store, user, defer_note("The user plays the violin.", origin=RUN_A))

    async def ended(thread_id, run_id):
        return False

    assert len(await adrain(store, user, RUN_B, in_progress=ended)) == 1
    assert await queued(store, user) == []
    assert await note_adds(store, user) == [("tool", "t1", "run-a")]


async def test_two_drains_at_once_write_one_note(store, user):
    await aqueue_note(store, user, defer_note("The user plays the violin.", origin=RUN_A))
    await asyncio.gather(adrain(store, user, RUN_A), adrain(store, user, RUN_A))
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]
    assert await queued(store, user) == []


async def test_a_store_that_is_down_keeps_the_queue_for_the_next_turn(store, user, monkeypatch, caplog):
    note = defer_note("The user plays the violin.", origin=RUN_A)
    await aqueue_note(store, user, note)
    real = deferred.aremember_many

    async def down(*args, **kwargs):
        raise StoreUnavailableError("PostgreSQL cannot be reached")

    monkeypatch.setattr(deferred, "aremember_many", down)
    with caplog.at_level(logging.ERROR):
        assert await adrain(store, user, RUN_A) == []  # nothing done: all stay queued
    assert "will retry with the next turn" in caplog.text
    assert [n["id"] for n in await queued(store, user)] == [note["id"]]
    monkeypatch.setattr(deferred, "aremember_many", real)
    assert await adrain(store, user, RUN_A) == [note["id"]]
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]


async def test_a_queue_that_cannot_be_read_waits_for_the_next_turn(store, user, monkeypatch):
    await aqueue_note(store, user, defer_note("The user plays the violin.", origin=RUN_A))
    real = type(store).abatch

    async def down(self, ops):
        raise StoreUnavailableError("PostgreSQL cannot be reached")

    monkeypatch.setattr(type(store), "abatch", down)
    assert await adrain(store, user, RUN_A) == []
    monkeypatch.setattr(type(store), "abatch", real)
    assert len(await queued(store, user)) == 1


async def test_an_entry_no_longer_valid_is_dropped_and_the_others_written(store, user, caplog):
    good = defer_note("The user plays the violin.", origin=RUN_A)
    await aqueue_note(store, user, good)
    await aqueue_note(store, user, {**good, "id": "old", "text": "The user's order 8841 was refunded."})
    with caplog.at_level(logging.WARNING):
        assert sorted(await adrain(store, user, RUN_A)) == sorted([good["id"], "old"])
    assert "a queued note was dropped" in caplog.text
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]
    assert await queued(store, user) == []


async def test_a_queue_an_older_version_kept_in_the_thread_moves_to_the_store(store, user):
    legacy = [{"id": "q1", "text": "The user plays the violin.", "expires_at": None, "context": None}, "junk"]
    assert await amove_legacy(store, user, legacy, RUN_A) == ["q1"]
    assert queue_notes(legacy[:1], {"done": ["q1"]}) == []
    assert await adrain(store, user, RUN_A) == ["q1"]
    assert await note_adds(store, user) == [("tool", "t1", "run-a")]


# --------------------------------------------------------------------------- through the graph


def remembering(script, text="The user plays the violin."):
    replies = iter([tool_call("remember_note", text=text), AIMessage(content="Noted.")])
    script.chat = lambda messages: next(replies, AIMessage(content="ok"))


async def test_the_tool_answers_once_the_note_is_in_the_store_queue(agent, model, store, script, monkeypatch):
    user = User.of("u_zhou")
    remembering(script)

    async def never_reached(*args, **kwargs):  # the run is rolled back before write_memory
        return []

    monkeypatch.setattr(nodes.write_memory, "adrain", never_reached)
    out = await say(agent, "Remember that I play the violin.", memory_write_mode="hot", config={"run_id": "run-a"})
    assert out["messages"][-2].content.startswith("Will be remembered")
    (entry,) = await queued(store, user)
    assert (entry["text"], entry["thread_id"], entry["run_id"]) == ("The user plays the violin.", "t1", "run-a")
    assert "pending_notes" not in out or out["pending_notes"] == []  # not in the run's state


async def test_no_acknowledgement_when_the_queue_cannot_be_written(agent, model, store, script, monkeypatch):
    remembering(script)

    async def down(*args, **kwargs):
        raise StoreUnavailableError("PostgreSQL cannot be reached")

    monkeypatch.setattr("nodes.tools.aqueue_note", down)
    out = await say(agent, "Remember that I play the violin.", memory_write_mode="hot")
    answer = next(m for m in out["messages"] if isinstance(m, ToolMessage))
    assert answer.content == "Error: PostgreSQL cannot be reached"  # not "Will be remembered"


async def test_a_run_that_never_wrote_its_queue_is_written_by_the_next_turn_on_another_thread(
    agent, model, store, script, monkeypatch
):
    user = User.of("u_zhou")
    remembering(script)
    real = nodes.write_memory.adrain

    async def never_reached(*args, **kwargs):
        return []

    async def ended(config, thread_id, run_id):  # what the server says of a rolled-back run
        return False

    monkeypatch.setattr(nodes.write_memory, "adrain", never_reached)
    await say(agent, "Remember that I play the violin.", memory_write_mode="hot", config={"run_id": "run-a"})
    monkeypatch.setattr(nodes.write_memory, "adrain", real)
    monkeypatch.setattr(nodes.write_memory, "arun_in_progress", ended)
    await say(agent, "Thanks.", memory_write_mode="hot", thread="t2", config={"run_id": "run-b"})
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]
    assert await note_adds(store, user) == [("tool", "t1", "run-a")]
    assert await queued(store, user) == []


async def test_a_store_down_at_the_write_keeps_the_queue_and_the_next_turn_writes_it_once(
    agent, model, store, script, monkeypatch
):
    user = User.of("u_zhou")
    remembering(script)
    real = deferred.aremember_many

    async def down(*args, **kwargs):
        raise StoreUnavailableError("PostgreSQL cannot be reached")

    async def ended(config, thread_id, run_id):
        return False

    monkeypatch.setattr(deferred, "aremember_many", down)
    await say(agent, "Remember that I play the violin.", memory_write_mode="hot", config={"run_id": "run-a"})
    assert len(await queued(store, user)) == 1 and await alist_notes(store, user) == []
    monkeypatch.setattr(deferred, "aremember_many", real)
    monkeypatch.setattr(nodes.write_memory, "arun_in_progress", ended)
    await say(agent, "Thanks.", memory_write_mode="hot", config={"run_id": "run-b"})
    await say(agent, "Bye.", memory_write_mode="hot", config={"run_id": "run-c"})
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays the violin."]
    assert await note_adds(store, user) == [("tool", "t1", "run-a")] and await queued(store, user) == []


async def test_the_queue_is_written_before_the_extraction_which_only_refines_it(agent, model, store, script):
    user = User.of("u_zhou")
    remembering(script)
    script.extract = lambda messages, tools: tool_call(
        "MemoryExtraction", notes=["The user plays the violin in the city orchestra."]
    )
    await say(agent, "Remember that I play the violin in the city orchestra.", config={"run_id": "run-a"})
    notes = await alist_notes(store, user)
    assert len(notes) == 1  # one note: the extraction refined the queued one, no second copy
    trail = [(r["action"], r["source"], r["run_id"]) for r in await alist_audit(store, user)]
    assert trail[0] == ("note.add", "tool", "run-a")  # the queue first, as the tool's run
    assert all(action != "note.add" for action, _, _ in trail[1:])
    assert await queued(store, user) == []
