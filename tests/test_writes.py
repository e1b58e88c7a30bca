"""mnemo.writes: one extraction is applied in one store batch, so a store
failure leaves its profile changes and its notes both written or neither."""

from __future__ import annotations

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from mnemo import aget_profile, alist_notes
from mnemo.extraction import MemoryExtraction
from mnemo.writes import aapply_extraction


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
    assert counting_store.trips == 2
    assert {c["field"] for c in applied["profile"]} == {"city", "name"}
    assert [r["status"] for r in applied["notes"]] == ["stored"]
    assert (await aget_profile(counting_store, user))["city"]["value"] == "Hangzhou"


async def test_dated_facts_keep_the_date_they_are_about_and_a_bad_date_costs_only_the_date(store, user):
    from mnemo.extraction import DatedNote

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
