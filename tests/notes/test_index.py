"""mnemo.notes.index: the write-time recency and BM25 index (backend-independent
cases; tests/stores/conformance/test_memory.py runs it on every backend)."""

import logging
import math

import pytest
from langgraph.store.base import SearchOp

from harness.store_backends import HashEmbeddings
from mnemo import aforget, arecall, aremember, aremember_many
from mnemo.core.text import bm25_tokens
from mnemo.notes import index as note_index
from mnemo.notes.index import IndexState, NoteChange, bm25_ranking, query_terms, write_ops
from mnemo.turn.snapshot import aload_snapshot
from tests.conftest import CountingStore

TEXTS = [
    "The user's dog is named Biscuit and loves the beach.",
    "The user is allergic to peanuts and to cats.",
    "The user went to the beach with Biscuit last summer.",
    "用户家的净化器型号是 AP-2024。",
    "用户每个月去上海出差，住在杭州。",
    "The user prefers email over phone calls.",
    "The user's daughter Mia plays the piano every evening.",
    "The user bought a piano for Mia.",
]


def index_of(texts: list[str]) -> IndexState:
    return note_index.index_of({f"n{i}": t for i, t in enumerate(texts)})


def note_index_user():
    from mnemo import User

    return User.of("u_index")


async def test_index_of_is_the_index_the_writes_leave(user):
    """The in-memory index (for a replay) is what writing the notes stores."""
    store = CountingStore(index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]})
    results = await aremember_many(store, user, TEXTS)
    state = note_index.index_of({r["note"]["id"]: r["note"]["text"] for r in results})
    stored = {it.key: it.value for it in await store.asearch(note_index.index_namespace(user), limit=1000)}
    assert stored and set(stored) == {note_index.HEAD_KEY} | {note_index.term_key(t) for t in state.postings}
    assert {t: sorted(p["p"]) for t, p in state.postings.items()} == {
        k[2:]: sorted(v["p"]) for k, v in stored.items() if k != note_index.HEAD_KEY
    }
    assert state.head is not None
    assert (state.head["count"], state.head["total_len"]) == (len(TEXTS), stored["head"]["total_len"])


#: Notes in a script the words do not index (Cyrillic) and four short ones: an average under one token.
SHORT = ["Kiwi.", "Plum jam.", "Kiwi jam.", "Kiwi tart."] + [f"Пользователь любит чай номер {c}." for c in "абвгдежзик"]


#: Shopping lists: words repeated in a note and across notes, so that each part of the score counts.
LISTS = [
    "plum coffee plum",
    "tea bread",
    "tea tea jam kiwi kiwi coffee",
    "tea",
    "plum plum plum",
    "kiwi coffee tea tea tea coffee",
    "kiwi",
]


@pytest.mark.parametrize(
    ("texts", "query"),
    [
        *((TEXTS, q) for q in ["Biscuit beach", "piano Mia", "净化器型号", "上海出差", "peanuts cats beach"]),
        (TEXTS, "Mia piano evening"),
        (TEXTS, "unicorn Biscuit beach"),  # a word no note has, first
        (SHORT, "kiwi plum"),
        (LISTS, "tea"),
        (LISTS, "tea coffee"),
    ],
)
def test_bm25_from_postings_ranks_as_bm25s_does(texts, query):
    import bm25s

    corpus = [bm25_tokens(t) for t in texts]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    known = [t for t in bm25_tokens(query) if t in retriever.vocab_dict]
    assert known  # the query shares words with the corpus
    scores = retriever.get_scores(known)
    expected = [f"n{i}" for i in sorted(range(len(texts)), key=lambda i: (-scores[i], f"n{i}")) if scores[i] > 0]
    assert bm25_ranking(query_terms(query), index_of(texts), limit=50) == expected


def test_bm25_needs_the_head_and_reads_one_note():
    state = index_of(["The user likes green tea."])
    assert bm25_ranking(["tea"], state, limit=5) == ["n0"]
    # Postings without their head (a rebuild cut short): the index counts as missing.
    assert bm25_ranking(["tea"], IndexState(head=None, postings=state.postings, read=state.read), limit=5) == []


def test_a_term_in_too_many_notes_keeps_its_most_recent_postings_and_true_frequency(monkeypatch):
    monkeypatch.setattr(note_index, "POSTINGS_KEEP", 3)
    texts = [f"Coffee, coffee, coffee number {i}." for i in range(10)]
    texts.append("The user drinks green tea with lemon and honey at noon.")
    state = index_of(texts)
    posting = state.postings["coffee"]
    assert posting["df"] == 10 and [e[0] for e in posting["p"]] == ["n7", "n8", "n9"]
    assert state.head is not None and state.head["count"] == 11
    # Ranked by the true frequency, as bm25s ranks them among every note (the kept ones would weigh more).
    assert bm25_ranking(query_terms("coffee tea"), state, limit=10) == ["n10", "n7", "n8", "n9"]


def test_writing_postings_that_were_not_read_is_refused():
    change = NoteChange(key="n0", before=None, after={"id": "n0", "text": "Tea, cake, jam, bread, kiwi, plum, rice."})
    with pytest.raises(ValueError) as refused:
        write_ops(note_index_user(), IndexState(head=None, postings={}, read=frozenset({"tea"})), [change])
    # The first five unread terms, sorted.
    assert (
        str(refused.value)
        == "the postings of ['bread', 'cake', 'jam', 'kiwi', 'plum'] were not read before being written"
    )


@pytest.fixture
def hash_store() -> CountingStore:
    return CountingStore(index={"dims": 64, "embed": HashEmbeddings(64), "fields": ["text"]})


async def test_a_turn_costs_two_round_trips_and_no_listing_at_any_size(hash_store, user):
    """No cliff: past the old 2,000-note cap, words still find a note, and the
    read stays two round trips without listing the notes."""
    store = hash_store
    # Past the per-user cap (mnemo.notes.model.MAX_NOTES_PER_USER), which is lifted here.
    gadgets = [f"The user's gadget number {i} is a model X{i}." for i in range(2500)]
    await aremember_many(store, user, gadgets, max_notes=None)
    await aremember(store, user, "The user's dog is named Biscuit.", max_notes=None)
    await aremember(store, user, "The user drives an electric car.", max_notes=None)
    store.trips, store.ops = 0, []
    snap = await aload_snapshot(store, user, "what is my dog Biscuit like? and model x2222?", recall_margin=math.inf)
    assert store.trips <= 2
    listings = [op for op in store.ops if isinstance(op, SearchOp) and op.query is None]
    assert store.ops and not [op for op in listings if op.namespace_prefix[1] == "notes"]
    texts = [n["text"] for n in snap["relevant"]]
    assert "The user's dog is named Biscuit." in texts and "The user's gadget number 2222 is a model X2222." in texts
    assert snap["recent"][0]["text"] == "The user drives an electric car."


async def test_refine_and_forget_keep_the_index_true(store, user):
    await aremember_many(store, user, ["用户养了两只猫。", "The user's dog is named Biscuit."])
    refined = await aremember(store, user, "用户养了两只猫，叫咪咪和花花。")
    assert refined["status"] == "refined"

    async def words(query):  # a dense threshold nothing reaches: only the words can find a note
        return [n["text"] for n in await arecall(store, user, query, margin=math.inf)]

    assert await words("咪咪") == ["用户养了两只猫，叫咪咪和花花。"]
    assert await words("Biscuit") == ["The user's dog is named Biscuit."]
    await aforget(store, user, about="my dog Biscuit")
    assert await words("Biscuit") == []
    snap = await aload_snapshot(store, user, "")
    assert [n["text"] for n in snap["recent"]] == ["用户养了两只猫，叫咪咪和花花。"]
    head = (await store.asearch(note_index.index_namespace(user), filter={"count": 1}))[0].value
    assert head["count"] == 1 and head["total_len"] == len(bm25_tokens("用户养了两只猫，叫咪咪和花花。"))


async def test_a_refinement_drops_the_postings_of_words_it_no_longer_has(store, user):
    """The new wording is looked up with the note; the old one's other words are read then written."""
    ns = note_index.index_namespace(user)
    coins = (await aremember(store, user, "The user collects old coins."))["note"]
    await aremember(store, user, "The user collects stamps.")
    collects = await store.aget(ns, note_index.term_key("collects"))
    assert collects is not None and collects.value["df"] == 2
    assert (await aremember(store, user, "The user collected stamps from Japan."))["status"] == "refined"
    collects = await store.aget(ns, note_index.term_key("collects"))  # the other note's posting stays
    assert collects is not None and collects.value["df"] == 1 and [e[0] for e in collects.value["p"]] == [coins["id"]]
    stamps = await store.aget(ns, note_index.term_key("stamps"))
    assert stamps is not None and stamps.value["df"] == 1 and len(stamps.value["p"]) == 1
    head = await store.aget(ns, note_index.HEAD_KEY)
    assert head is not None and head.value["count"] == 2
    assert [r["text"] for r in head.value["recent"]] == [
        "The user collected stamps from Japan.",
        "The user collects old coins.",
    ]


async def test_notes_written_before_the_index_get_it_built_once(counting_store, user, caplog):
    store = counting_store
    ns = user.namespace("notes")
    for i in range(150):
        await store.aput(
            ns,
            f"k{i}",
            {
                "id": f"k{i}",
                "text": f"old fact {i} about thing{i}",
                "updated_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}",
            },
            index=False,
        )
    with caplog.at_level(logging.INFO, logger=note_index.__name__):
        snap = await aload_snapshot(store, user, "thing42", recent_limit=2)  # the turn that builds it searches too
    assert [r.getMessage() for r in caplog.records if r.name == note_index.__name__] == [
        "note index of u_zhou rebuilt from 150 notes"
    ]
    assert [n["text"] for n in snap["recent"]] == ["old fact 149 about thing149", "old fact 148 about thing148"]
    assert [n["text"] for n in snap["relevant"]][:1] == ["old fact 42 about thing42"]
    store.trips = 0
    await aload_snapshot(store, user, "", recent_limit=2)
    assert store.trips == 1  # built: no rebuild, no listing
    # The recent list holds each note's fields, those it lacks (written around mnemo) empty.
    head = await store.aget(note_index.index_namespace(user), note_index.HEAD_KEY)
    assert head is not None and head.value["recent"][0] == {
        "id": "k149",
        "text": "old fact 149 about thing149",
        "source": "",
        "first_seen": "",
        "updated_at": "2026-01-01T00:02:29",
    }


async def test_the_head_holds_the_count_the_words_and_the_recent_notes_only(store, user, monkeypatch):
    ns = note_index.index_namespace(user)
    await aremember(store, user, "Пользователь играет в шахматы.")  # no word BM25 reads
    head = await store.aget(ns, note_index.HEAD_KEY)
    assert head is not None and set(head.value) == {"count", "total_len", "recent"}
    assert (head.value["count"], head.value["total_len"]) == (1, 0)
    # A head whose recent list is emptied by forgetting stays while notes are left.
    monkeypatch.setattr(note_index, "RECENT_KEEP", 1)
    tea = (await aremember(store, user, "The user likes green tea."))["note"]
    await aforget(store, user, note_id=tea["id"])
    head = await store.aget(ns, note_index.HEAD_KEY)
    assert head is not None and (head.value["count"], head.value["recent"]) == (1, [])


async def test_a_repeat_and_a_new_note_in_one_batch_both_keep_the_index(store, user):
    await aremember(store, user, "The user likes green tea.")
    results = await aremember_many(store, user, ["The user likes green tea.", "The user rides a zebra."])
    assert [r["status"] for r in results] == ["duplicate", "stored"]
    assert [n["text"] for n in await arecall(store, user, "zebra", margin=math.inf)] == ["The user rides a zebra."]


async def test_forgetting_every_note_leaves_no_index_behind(store, user):
    await aremember_many(store, user, ["The user's dog is named Biscuit.", "The user likes green tea."])
    assert await store.asearch(note_index.index_namespace(user), limit=5)
    await aforget(store, user, about="my dog Biscuit")
    await aforget(store, user, about="green tea")
    assert await store.asearch(note_index.index_namespace(user), limit=5) == []
    assert (await aload_snapshot(store, user, "tea"))["recent"] == []


async def test_words_alone_bring_at_most_the_fusion_candidates(hash_store, user):
    """Each ranking hands the fusion at most ``FUSION_CANDIDATES`` notes, however many share the word."""
    from mnemo.notes.recall import FUSION_CANDIDATES

    many = FUSION_CANDIDATES + 10
    await aremember_many(hash_store, user, [f"The user's zebra number {i} is striped." for i in range(many)])
    found = await arecall(hash_store, user, "zebra", limit=many, margin=math.inf)  # words alone
    assert len(found) == FUSION_CANDIDATES
    assert all("zebra" in n["text"] for n in found)


async def test_the_turn_that_builds_the_index_reads_as_asked_and_hands_back_expired_notes(store):
    """Notes written before the index, with their vectors: the read after the
    build keeps the caller's margin and the expired notes it met."""
    import math

    from mnemo import User
    from mnemo.notes.recall import aread_notes

    texts = {"z": "The user rides a zebra.", "p": "The user is allergic to peanuts.", "m": "The user plays music."}
    reads = {}
    for margin in (math.inf, None):  # words alone; every dense candidate
        ns = User.of(f"u_{margin}").namespace("notes")
        for key, text in texts.items():
            await store.aput(ns, key, {"id": key, "text": text, "updated_at": "2026-01-01T00:00:00"})
        old = {"id": "old", "text": "The user was in Rome.", "updated_at": "2026-01-01", "expires_at": "2026-01-02"}
        await store.aput(ns, "old", old)
        reads[margin] = await aread_notes(store, User.of(f"u_{margin}"), "zebra", limit=10, margin=margin)
    assert [n["id"] for n in reads[math.inf].relevant] == ["z"]
    assert sorted(n["id"] for n in reads[None].relevant) == ["m", "p", "z"]
    assert list(reads[math.inf].stale) == list(reads[None].stale) == ["old"]
