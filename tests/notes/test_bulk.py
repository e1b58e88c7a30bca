"""mnemo.notes.bulk.aremember_bulk: many notes for one user, audited and indexed
as one-by-one writes are, checked whole before anything is written, and a
failure midway says what was written."""

from __future__ import annotations

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from harness.store_backends import HashEmbeddings
from mnemo import arecall
from mnemo.audit import Origin, averify
from mnemo.audit.chain import alist_audit
from mnemo.core import InvalidInputError, NoteLimitError, PartialWriteError
from mnemo.notes import arebuild, aremember_bulk, aremember_many, arevise
from mnemo.notes import index as note_index
from mnemo.notes.model import MAX_NOTE_CHARS
from tests.conftest import CountingStore

TEXTS = [
    f"The user keeps {thing} number {i} in the {room}."
    for i, (thing, room) in enumerate(
        [
            ("a kayak", "garage"),
            ("a piano", "hall"),
            ("jazz records", "study"),
            ("a telescope", "attic"),
            ("tea", "kitchen"),
        ]
    )
]
INDEX = {"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]}


class FailingStore(InMemoryStore):
    """Fails the ``fail_at``-th batch that writes a note (from 1)."""

    def __init__(self, fail_at: int) -> None:
        super().__init__(index=INDEX)  # type: ignore[arg-type]
        self.fail_at, self.writes = fail_at, 0

    async def abatch(self, ops):
        ops = list(ops)
        if any(isinstance(op, PutOp) and op.namespace[-1] == "notes" for op in ops):
            self.writes += 1
            if self.writes == self.fail_at:
                raise OSError("disk full")
        return await super().abatch(ops)


@pytest.fixture
def store() -> InMemoryStore:
    return InMemoryStore(index=INDEX)  # type: ignore[arg-type]


async def notes_of(store, user) -> dict[str, dict]:
    return {it.key: it.value for it in await store.asearch(user.namespace("notes"), limit=100)}


async def index_items(store, user) -> dict[str, dict]:
    """The user's index items; a term's postings as a set (their order is the writes')."""
    items = await store.asearch(note_index.index_namespace(user), limit=1000)
    return {it.key: {**it.value, "p": sorted(it.value["p"])} if "p" in it.value else it.value for it in items}


async def assert_index_matches_notes(store, user) -> None:
    """The index the writes left is the one rebuilt from the stored notes."""
    written = await index_items(store, user)
    assert written  # something to compare
    await arebuild(store, user)
    assert await index_items(store, user) == written


async def test_every_note_is_stored_audited_and_indexed_across_batches(store, user):
    results = await aremember_bulk(store, user, TEXTS, batch=2)
    assert [r["status"] for r in results] == ["stored"] * 5
    notes = await notes_of(store, user)
    assert sorted(n["text"] for n in notes.values()) == sorted(TEXTS)
    trail = await alist_audit(store, user)
    assert [(r["action"], r["target"], r["after"]) for r in trail] == [
        ("note.add", r["note"]["id"], r["note"]["text"]) for r in results
    ]
    assert (await averify(store, user))["ok"]
    await assert_index_matches_notes(store, user)
    hits = await arecall(store, user, "telescope attic", limit=1)
    assert [h["text"] for h in hits] == [TEXTS[3]]


async def test_a_note_is_the_one_aremember_many_writes(store, user):
    """Same key, fields and sparse vector as the one-by-one path (its dates aside)."""
    other = InMemoryStore(index=INDEX)
    (bulk,) = await aremember_bulk(store, user, [TEXTS[0]], contexts=["Where is the kayak?"], refers_to=["2026-03-01"])
    (many,) = await aremember_many(other, user, [TEXTS[0]], contexts=["Where is the kayak?"], refers_to=["2026-03-01"])
    assert bulk["note"]["id"] == many["note"]["id"]

    def undated(values):
        return {
            k: {f: v for f, v in value.items() if f not in ("first_seen", "updated_at")} for k, value in values.items()
        }

    written = undated(await notes_of(store, user))
    assert "sparse" in written[bulk["note"]["id"]] and "context" in written[bulk["note"]["id"]]
    assert written == undated(await notes_of(other, user))


async def test_a_repeat_is_a_duplicate_and_writes_nothing(store, user):
    await aremember_bulk(store, user, TEXTS[:2])
    before_notes, before_trail = await notes_of(store, user), await alist_audit(store, user)
    assert len(before_notes) == 2 and len(before_trail) == 2
    results = await aremember_bulk(store, user, [TEXTS[1], TEXTS[2], TEXTS[2].upper(), TEXTS[0]])
    assert [r["status"] for r in results] == ["duplicate", "stored", "duplicate", "duplicate"]
    assert results[2]["note"]["id"] == results[1]["note"]["id"]
    notes = await notes_of(store, user)
    assert len(notes) == 3
    assert {k: v for k, v in notes.items() if k in before_notes} == before_notes  # not rewritten
    assert [r["target"] for r in await alist_audit(store, user)][2:] == [results[1]["note"]["id"]]
    # A load run again writes nothing.
    again = await aremember_bulk(store, user, [TEXTS[1], TEXTS[2], TEXTS[0]])
    assert {r["status"] for r in again} == {"duplicate"}
    assert await notes_of(store, user) == notes
    assert len(await alist_audit(store, user)) == 3


async def test_a_text_whose_key_holds_a_refined_note_gets_its_own_and_its_repeat_is_found(store, user):
    """The derived key of a note refined since holds another text: the text is
    stored under a key of its own, and found again by its text."""
    (first,) = await aremember_bulk(store, user, [TEXTS[0]])
    await arevise(
        store, user, first["note"]["id"], text="The user keeps a red kayak in the garage.", origin=Origin(source="tool")
    )
    (again,) = await aremember_bulk(store, user, [TEXTS[0]])
    assert again["status"] == "stored" and again["note"]["id"] != first["note"]["id"]
    (third,) = await aremember_bulk(store, user, [TEXTS[0]])
    assert third["status"] == "duplicate" and third["note"]["id"] == again["note"]["id"]
    assert len(await notes_of(store, user)) == 2


async def test_an_invalid_text_or_detail_writes_nothing(store, user):
    with pytest.raises(InvalidInputError):
        await aremember_bulk(store, user, [*TEXTS, "x" * (MAX_NOTE_CHARS + 1)])
    with pytest.raises(InvalidInputError):
        await aremember_bulk(store, user, TEXTS, contexts=[None])
    assert await notes_of(store, user) == {} and await alist_audit(store, user) == []
    assert len(await aremember_bulk(store, user, TEXTS)) == 5  # the valid ones alone are written


async def test_the_cap_counts_stored_and_new_notes_and_refuses_the_whole_load(store, user):
    await aremember_bulk(store, user, TEXTS[:3])
    with pytest.raises(NoteLimitError):
        await aremember_bulk(store, user, TEXTS, max_notes=4)  # 3 + 2 new
    assert len(await notes_of(store, user)) == 3 and len(await alist_audit(store, user)) == 3
    with pytest.raises(NoteLimitError):
        await aremember_bulk(InMemoryStore(index=INDEX), user, TEXTS, max_notes=4)  # 5 new, none stored
    results = await aremember_bulk(store, user, TEXTS, max_notes=5)  # repeats do not count
    assert [r["status"] for r in results] == ["duplicate"] * 3 + ["stored"] * 2
    assert len(await notes_of(store, user)) == 5


async def test_a_failure_midway_says_what_was_written_and_a_second_call_writes_the_rest(user):
    store = FailingStore(fail_at=2)
    with pytest.raises(PartialWriteError) as caught:
        await aremember_bulk(store, user, [TEXTS[0], TEXTS[0], *TEXTS[1:]], batch=2)
    error = caught.value
    assert isinstance(error.__cause__, OSError)
    # The first batch wrote TEXTS[0] (and its repeat) and TEXTS[1]; TEXTS[2:] were not written.
    assert error.written == 3
    assert [r["status"] for r in error.results] == ["stored", "duplicate", "stored"]
    notes = await notes_of(store, user)
    assert sorted(n["text"] for n in notes.values()) == sorted(TEXTS[:2])
    assert {r["note"]["id"] for r in error.results} == set(notes)
    assert (await averify(store, user))["ok"]
    await assert_index_matches_notes(store, user)
    results = await aremember_bulk(store, user, TEXTS, batch=2)
    assert [r["status"] for r in results] == ["duplicate"] * 2 + ["stored"] * 3
    assert len(await notes_of(store, user)) == 5 and len(await alist_audit(store, user)) == 5
    await assert_index_matches_notes(store, user)


async def test_round_trips_grow_with_batches_not_with_notes(user):
    """Per ``batch`` texts one read by key; one cap read; per ``batch`` new notes
    one read (index and audit head) and one write."""
    store = CountingStore(index=INDEX)
    await aremember_bulk(store, user, TEXTS, batch=2)
    assert store.trips == 3 + 1 + 3 * 2
    store.trips = 0
    await aremember_bulk(store, user, TEXTS, batch=5)  # all repeats: the reads by key alone
    assert store.trips == 1


async def test_without_sparse_vectors_the_notes_get_them_from_reindex(store, user):
    from mnemo.notes import arestamp

    await aremember_bulk(store, user, TEXTS[:2], sparse=False)
    assert [n for n in (await notes_of(store, user)).values() if "sparse" in n] == []
    assert await arestamp(store, user) == 2
    assert all("sparse" in n for n in (await notes_of(store, user)).values())
