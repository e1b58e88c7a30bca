"""mnemo.notes.queued: a turn's snapshot counts the notes waiting in the user's
queue in its one batch, so ``write_memory`` knows whether to read the queue."""

from __future__ import annotations

from mnemo.audit import Origin
from mnemo.notes import MAX_QUEUED_NOTES, aremember_many
from mnemo.turn.snapshot import aload_snapshot
from mnemo.writing.deferred import aqueue_note, defer_note

RUN = Origin(source="tool", thread_id="t1", run_id="run-a")


async def test_the_snapshot_counts_the_queued_notes_in_its_one_round_trip(counting_store, user):
    store = counting_store
    await aremember_many(store, user, ["The user has two cats."])
    store.trips = 0
    assert (await aload_snapshot(store, user, "what pets do I have?"))["queued"] == 0
    assert store.trips == 1
    for text in ("The user plays the violin.", "The user has a cat."):
        await aqueue_note(store, user, defer_note(text, origin=RUN))
    store.trips = 0
    assert (await aload_snapshot(store, user, "what pets do I have?"))["queued"] == 2
    assert store.trips == 1  # no round trip of its own


async def test_another_users_queue_is_not_counted(store, user):
    from mnemo.core import User

    await aqueue_note(store, User.of("u_other"), defer_note("The user plays the violin.", origin=RUN))
    assert (await aload_snapshot(store, user, "hello"))["queued"] == 0
    assert MAX_QUEUED_NOTES > 2
