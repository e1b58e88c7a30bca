"""mnemo.writing.apply: one extraction is applied in one store batch, so a store
failure leaves its profile changes and its notes both written or neither."""

from __future__ import annotations

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from mnemo import aget_profile, alist_notes
from mnemo.writing.apply import aapply_extraction
from mnemo.writing.extraction import MemoryExtraction


class FailsOnNoteWrites(InMemoryStore):
    """A store that fails every batch writing a note (after the profile's, if separate)."""

    batches: list[list] = []

    async def abatch(self, ops):
        ops = list(ops)
        self.batches.append(ops)
        if any(isinstance(op, PutOp) and op.namespace[-1] == "notes" and op.value is not None for op in ops):
            raise ConnectionError("store went away")
        return await super().abatch(ops)


async def test_a_store_failure_writes_neither_the_profile_nor_the_notes(index, user):
    store = FailsOnNoteWrites(index=index)
    extraction = MemoryExtraction(city="Hangzhou", notes=["The user is allergic to peanuts."])
    with pytest.raises(ConnectionError):
        await aapply_extraction(store, user, extraction)
    assert await aget_profile(store, user) == {}  # not half-applied
    assert await alist_notes(store, user) == []


async def test_one_batch_of_reads_and_one_of_writes(counting_store, user):
    extraction = MemoryExtraction(city="Hangzhou", name="Zhou", notes=["The user is allergic to peanuts."])
    applied = await aapply_extraction(counting_store, user, extraction)
    assert counting_store.trips == 2  # the reads with the audit chain's head, the writes
    assert {c["field"] for c in applied["profile"]} == {"city", "name"}
    assert [r["status"] for r in applied["notes"]] == ["stored"]
    assert (await aget_profile(counting_store, user))["city"]["value"] == "Hangzhou"


async def test_dated_facts_keep_the_date_they_are_about_and_a_bad_date_costs_only_the_date(store, user):
    from mnemo.writing.extraction import DatedNote

    extraction = MemoryExtraction(
        notes=["The user has a dog."],
        dated_notes=[
            DatedNote(text="The user moved to Suzhou.", refers_to="2024-03"),
            DatedNote(text="The user got married.", refers_to="last spring"),  # unreadable: the fact stays
        ],
    )
    applied = await aapply_extraction(store, user, extraction)
    assert [r["status"] for r in applied["notes"]] == ["stored"] * 3
    dates = {n["text"]: n.get("refers_to") for n in await alist_notes(store, user)}
    assert dates == {"The user has a dog.": None, "The user moved to Suzhou.": "2024-03", "The user got married.": None}


async def test_each_note_gets_the_context_of_the_message_it_came_from(store, user):
    from mnemo.core import NOTES
    from mnemo.writing.apply import Said

    said = [
        Said("Yes, a cat called Mia.", in_reply_to="Do you have any pets at home?"),
        Said("I can't eat peanuts, I'm allergic.", in_reply_to="Any dietary restrictions for the hamper?"),
        Said("Thanks! Jazz on hold is lovely.", in_reply_to=None),
    ]
    extraction = MemoryExtraction(
        notes=["The user has a cat called Mia.", "The user is allergic to peanuts.", "The user likes jazz."]
    )
    applied = await aapply_extraction(store, user, extraction, said=said)
    assert [r["status"] for r in applied["notes"]] == ["stored"] * 3
    contexts = {it.value["text"]: it.value.get("context") for it in await store.asearch(user.namespace(NOTES))}
    assert contexts == {
        "The user has a cat called Mia.": "Do you have any pets at home?",
        "The user is allergic to peanuts.": "Any dietary restrictions for the hamper?",
        "The user likes jazz.": None,  # its message replied to nothing: no context rather than a wrong one
    }


def test_a_note_is_placed_by_shared_words_and_the_latest_message_wins_a_tie():
    from mnemo.writing.apply import Said, source_message

    said = [Said("I live in Hangzhou.", "a"), Said("My cat Mia lives with me in Hangzhou.", "b")]
    assert source_message("The user is from Hangzhou.", said) == 1  # one shared word each: the latest
    assert source_message("The user's cat is called Mia.", said) == 1
    assert source_message("The user's home is Hangzhou; they live there.", said) == 0  # "live", "Hangzhou"
    assert source_message("用户对花生过敏。", said) is None
    assert source_message("anything", [Said("hi", None)]) == 0  # the only message
    assert source_message("anything", []) is None


async def test_the_profile_read_with_the_notes_is_what_the_changes_apply_to(store, user):
    """Without a profile shown to the extractor, the one read in the batch is
    the current one: a field forgotten goes, a value said again is unchanged."""
    await aapply_extraction(store, user, MemoryExtraction(city="Hangzhou", name="Zhou"))
    assert set(await aget_profile(store, user)) == {"city", "name"}
    applied = await aapply_extraction(
        store, user, MemoryExtraction(city="Hangzhou", forget_fields=["name"], notes=["The user has a dog."])
    )
    assert applied["profile"] == [{"field": "name", "before": "Zhou", "after": None}]
    assert set(await aget_profile(store, user)) == {"city"}
