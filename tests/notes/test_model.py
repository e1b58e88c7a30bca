"""mnemo.notes.model, backend-independent cases (forget: tests/notes/test_forget.py).
Dedupe, refinement, recall, forget, paging and ordering run on every backend in
tests/stores/conformance/test_memory.py."""

import hashlib
import math
from datetime import UTC, datetime

import pytest
from langgraph.store.base import SearchItem, SearchOp
from langgraph.store.memory import InMemoryStore

from mnemo import IndexMissingError, InvalidInputError, User, aforget, alist_notes, arecall, arecent, aremember
from mnemo.core.reads import semantic_hits
from mnemo.notes.model import MAX_NOTE_CHARS
from mnemo.notes.recall import relevant_hits, score_leads
from mnemo.notes.writes import aremember_many


async def test_close_but_different_facts_are_both_kept(store, user):
    # e5 scores these pairs 0.96-0.98: similarity alone would merge them.
    pairs = [
        ("The user has two cats.", "The user has two dogs."),
        ("用户每个月都去上海出差。", "用户每个月都去北京出差。"),
        # Numbers are content: distinct numbers are distinct notes.
        ("The user owns item number 12.", "The user owns item number 2."),
        ("The user's membership number is 4402917.", "The user's membership number is 4402918."),
    ]
    for a, b in pairs:
        assert (await aremember(store, user, a))["status"] == "stored"
        assert (await aremember(store, user, b))["status"] == "stored", b
    assert len(await alist_notes(store, user)) == 2 * len(pairs)


async def test_score_none_is_never_a_hit():
    ns = ("u", "notes")
    filler = SearchItem(ns, "k1", {"text": "x"}, created_at=None, updated_at=None, score=None)
    hit = SearchItem(ns, "k2", {"text": "y"}, created_at=None, updated_at=None, score=0.9)
    assert [i.key for i in semantic_hits([filler, hit], ns, min_score=0.5)] == ["k2"]


async def test_store_without_index_is_a_loud_error_not_a_listing(user):
    plain = InMemoryStore()
    plain.put(user.namespace("notes"), "k", {"text": "lives in Hangzhou"})
    with pytest.raises(IndexMissingError, match="index"):
        await arecall(plain, user, "pets")
    with pytest.raises(IndexMissingError, match="index"):  # its dedupe by meaning would do nothing
        await aremember(plain, user, "The user has a cat.")
    assert [it.key for it in plain.search(user.namespace("notes"))] == ["k"]  # nothing written


async def test_remember_writes_with_the_source_origin_and_threshold_given(store, user):
    from mnemo.audit import Origin
    from mnemo.audit.chain import alist_audit

    origin = Origin(source="tool", thread_id="t3", run_id="r3")
    stored = await aremember(store, user, "The user is allergic to peanuts.", source="inferred", origin=origin)
    assert stored["status"] == "stored" and stored["note"]["source"] == "inferred"
    (record,) = await alist_audit(store, user)
    assert (record["action"], record["source"], record["thread_id"], record["run_id"]) == (
        "note.add",
        "tool",
        "t3",
        "r3",
    )
    # The same words in another order: a duplicate by meaning, unless no neighbour can reach the threshold.
    reworded = "Allergic to peanuts, the user is."
    assert (await aremember(store, user, reworded))["status"] == "duplicate"
    assert (await aremember(store, user, reworded, dedupe_threshold=math.inf))["status"] == "stored"


async def test_listing_pages_past_the_default_limit_of_ten(index, user):
    store = InMemoryStore()  # no index: listing must not need one
    for i in range(237):
        store.put(
            user.namespace("notes"),
            f"k{i:03d}",
            {"text": f"fact {i}", "updated_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}"},
        )
    notes = await alist_notes(store, user)
    assert len(notes) == 237
    assert len(store.search(user.namespace("notes"))) == 10  # the trap mnemo avoids


async def test_recent_sorts_by_updated_at_not_by_backend_order(user):
    store = InMemoryStore()
    # inserted newest first: insertion order (InMemoryStore) is the wrong answer
    for i, stamp in enumerate(["2026-03-01", "2026-01-01", "2026-02-01"]):
        store.put(user.namespace("notes"), f"k{i}", {"text": stamp, "updated_at": stamp})
    assert [n["text"] for n in await arecent(store, user, 2)] == ["2026-03-01", "2026-02-01"]


async def test_invalid_notes_are_rejected_and_nothing_is_written(store, user):
    with pytest.raises(InvalidInputError, match="limited"):
        await aremember(store, user, "x" * (MAX_NOTE_CHARS + 1))
    with pytest.raises(InvalidInputError, match="empty"):
        await aremember(store, user, "   ")
    with pytest.raises(InvalidInputError):
        await aremember_many(store, user, ["fine", ""])
    assert await alist_notes(store, user) == []
    for neither_or_both in ({}, {"note_id": "k", "about": "cats"}):
        with pytest.raises(InvalidInputError, match=r"^forget takes exactly one of note_id or about$"):
            await aforget(store, user, **neither_or_both)


async def test_the_callers_own_writes_are_made_in_the_batch_even_with_no_notes(store, user):
    from mnemo.audit import averify
    from mnemo.audit.chain import alist_audit
    from mnemo.profile import aget_profile, aprofile_ops

    ops, changes, _ = await aprofile_ops(store, user, {"city": "Hangzhou"}, source="app")
    assert [c["field"] for c in changes] == ["city"] and await aget_profile(store, user) == {}
    assert await aremember_many(store, user, [], extra=ops) == []
    assert (await aget_profile(store, user))["city"]["value"] == "Hangzhou"
    assert [(r["action"], r["target"]) for r in await alist_audit(store, user)] == [("profile.set", "city")]
    assert (await averify(store, user))["ok"]


async def test_a_notes_id_is_the_hash_of_its_normalised_text_so_two_writers_of_a_fact_write_one_note(index, user):
    # Each writer sees an empty store (two concurrent turns): the id alone makes them one note.
    stored = []
    for wording in ("The user has a cat.", "  the USER has  a cat!? ", "The user has a cat。"):
        store = InMemoryStore(index=index)
        note = (await aremember(store, user, wording))["note"]
        stored.append((await store.aget(user.namespace("notes"), note["id"])).value)
    assert {value["id"] for value in stored} == {hashlib.sha256(b"the user has a cat").hexdigest()[:32]}  # memory.md
    assert {value["norm"] for value in stored} == {"the user has a cat"}  # what the exact lookup of a repeat finds


async def test_a_note_says_where_it_came_from_and_when(store, user):
    inferred = (await aremember(store, user, "The user probably has a cat.", source="inferred"))["note"]
    said = (await aremember(store, user, "The user likes tea."))["note"]
    assert (inferred["source"], said["source"]) == ("inferred", "user_said")
    assert said["first_seen"] and said["updated_at"] == said["first_seen"]
    again = (await aremember(store, user, "The user likes tea."))["note"]  # a repeat refreshes its recency only
    assert again["first_seen"] == said["first_seen"] < again["updated_at"]
    listed = {n["text"]: (n["source"], n["updated_at"]) for n in await alist_notes(store, user)}
    assert listed == {
        "The user probably has a cat.": ("inferred", inferred["updated_at"]),
        "The user likes tea.": ("user_said", again["updated_at"]),
    }


def test_a_note_is_checked_at_its_edges_with_refusals_that_say_why():
    from mnemo.notes import validate_note

    assert validate_note("  The user\n has  a cat. ") == "The user has a cat."
    assert validate_note("x" * MAX_NOTE_CHARS) == "x" * MAX_NOTE_CHARS  # the limit is inclusive
    for bad, why in [
        (42, "a note is a string, got int"),
        (" \n ", "a note cannot be empty"),
        ("x" * (MAX_NOTE_CHARS + 1), f"a note is limited to {MAX_NOTE_CHARS} characters, this one has 1001; store "),
        ("nul\x00", "the note contains a NUL character"),
    ]:
        with pytest.raises(InvalidInputError) as refused:
            validate_note(bad)
        assert str(refused.value).startswith(why), str(refused.value)


def test_a_context_is_kept_whole_up_to_its_limit_and_cut_at_a_word_past_it():
    from mnemo.notes import validate_context
    from mnemo.notes.model import MAX_CONTEXT_CHARS

    assert validate_context(None) is None and validate_context(" \n ") is None
    whole = "y" * MAX_CONTEXT_CHARS
    assert validate_context(f" {whole} ") == whole
    words = "abcdefg " * 50  # a word ends at 295 characters, the limit falls inside the next one
    assert validate_context(words) == "abcdefg " * 36 + "abcdefg…"
    on_a_space = "abcdefghi " * 40  # the limit falls just after a word: that word is kept
    assert validate_context(on_a_space) == "abcdefghi " * 29 + "abcdefghi…"
    assert validate_context("z" * (MAX_CONTEXT_CHARS + 50)) == "z" * MAX_CONTEXT_CHARS + "…"  # one long word: cut in it
    early = "a" * 120 + " " + "z" * MAX_CONTEXT_CHARS  # a space in the first half only: cut in the word after it
    assert validate_context(early) == early[:MAX_CONTEXT_CHARS] + "…"
    for bad, why in [(42, "a note's context is a string, got int"), ("\ud800", "the note's context is not valid")]:
        with pytest.raises(InvalidInputError) as refused:
            validate_context(bad)
        assert str(refused.value).startswith(why), str(refused.value)


def test_a_note_stored_with_its_text_alone_reads_with_the_defaults():
    """A value written without mnemo's fields (imported through the store API)
    still reads as a note: said by the user, no dates."""
    from mnemo.notes.model import note_from_value

    assert note_from_value("k", {"text": "The user has a cat."}) == {
        "id": "k",
        "text": "The user has a cat.",
        "source": "user_said",
        "first_seen": "",
        "updated_at": "",
    }


def test_a_date_a_note_is_about_is_read_loosely_and_refused_with_the_forms_it_takes():
    from mnemo.notes import validate_refers_to

    assert validate_refers_to(None) is None and validate_refers_to("") is None
    assert validate_refers_to(" 2024-03 ") == "2024-03"
    assert validate_refers_to("2024-02-29T23:00:00Z") == "2024-02-29"
    with pytest.raises(InvalidInputError) as refused:
        validate_refers_to("2023-02-29")
    assert str(refused.value) == "refers_to is a date: YYYY, YYYY-MM or YYYY-MM-DD, got '2023-02-29'"


async def test_a_note_recalled_by_meaning_has_its_score_to_four_places(store, user):
    from mnemo.notes.model import note_from_value

    query = "which foods should I avoid?"
    await aremember_many(store, user, ["The user is allergic to peanuts.", "The user likes jazz."])
    raw = {it.key: it.score for it in await store.asearch(user.namespace("notes"), query=query)}
    scored = [n for n in await arecall(store, user, query, margin=None) if "score" in n]
    assert len(scored) == 2 and all(raw[n["id"]] != round(raw[n["id"]], 4) for n in scored)  # more places stored
    assert [n["score"] for n in scored] == [round(raw[n["id"]], 4) for n in scored]
    # The rounding itself: a fourth place of 0, a carry into the units, a negative score.
    value = {"text": "The user likes jazz."}
    places = [note_from_value("k", value, score=s)["score"] for s in (0.123456, 0.73504, 0.99996, -0.00004)]
    assert places == [0.1235, 0.735, 1.0, -0.0]


async def test_text_no_backend_can_store_is_refused_everywhere(store, user):
    for bad in ("nul\x00byte", "half \ud800 surrogate"):
        with pytest.raises(InvalidInputError):
            await aremember(store, user, bad)
    assert await alist_notes(store, user) == []


async def test_recall_fuses_words_with_meaning(store, user):
    await aremember_many(
        store,
        user,
        [
            "The user's dog is named Biscuit.",
            "The user is allergic to peanuts.",
            "用户家的净化器型号是 AP-2024。",
            "The user prefers email contact.",
        ],
    )
    # a dense threshold nothing reaches: only the lexical half can answer
    words = await arecall(store, user, "Biscuit", margin=math.inf)
    assert [n["text"] for n in words] == ["The user's dog is named Biscuit."]
    assert "score" not in words[0]  # found by words, not by meaning
    zh = await arecall(store, user, "净化器型号", margin=math.inf)
    assert zh[0]["text"] == "用户家的净化器型号是 AP-2024。"
    # no shared word: meaning alone still finds it
    meaning = await arecall(store, user, "which foods should I avoid?")
    assert meaning[0]["text"] == "The user is allergic to peanuts." and "score" in meaning[0]


def _hit(text: str, score: float) -> SearchItem:
    stamp = datetime(2026, 1, 1, tzinfo=UTC)
    return SearchItem(("u", "notes"), text, {"text": text}, created_at=stamp, updated_at=stamp, score=score)


def test_a_note_is_relevant_when_it_stands_out_from_the_notes_in_its_script():
    en_hit, en_miss = _hit("prefers email", 0.80), _hit("allergic to peanuts", 0.76)
    zh_top, zh_next = _hit("每个月去上海出差", 0.86), _hit("养了两只猫", 0.85)
    hits = [zh_top, zh_next, en_hit, en_miss]
    # a shared language lifts both Chinese notes; against each other neither stands out
    assert [round(x, 3) for x in score_leads(hits)] == [0.005, -0.005, 0.02, -0.02]
    assert relevant_hits(hits, margin=0.0075) == [en_hit]
    assert relevant_hits(hits, margin=0.0) == [en_hit, zh_top]  # best lead first, not best score
    assert relevant_hits(hits, margin=None) == hits  # no cut: every candidate, by score
    # a script with one note is compared with all the candidates
    alone = _hit("用户对花生过敏", 0.86)
    assert score_leads([en_hit, en_miss, _hit("lives in Hangzhou", 0.77), alone])[-1] == pytest.approx(0.075)
    # a user's only note has nothing to stand out from: it is kept
    assert relevant_hits([en_hit], margin=0.0075) == [en_hit] and relevant_hits([en_hit], margin=math.inf) == []


#: The four-note probe of the relevance rule, two English and two Chinese notes.
CONTACT_NOTES = [
    "The user prefers email over phone calls.",
    "The user is allergic to peanuts.",
    "用户养了两只猫。",
    "用户每个月都去上海出差。",
]


async def test_recall_finds_the_contact_preference_in_either_language_and_nothing_for_a_greeting(store, user):
    await aremember_many(store, user, CONTACT_NOTES)
    email, allergy, cats, trips = CONTACT_NOTES

    async def recalled(query: str, **kw) -> list[str]:
        return [n["text"] for n in await arecall(store, user, query, **kw)]

    # What the fixed 0.78 cut saw: the e-mail note below it, the Chinese notes
    # ~0.07 above it for a Chinese question (a shared language).
    scores = {
        it.value["text"]: it.score for it in await store.asearch(user.namespace("notes"), query="我应该怎么联系你")
    }
    assert scores[email] < 0.78 < scores[cats] < scores[trips]
    scores = {
        it.value["text"]: it.score
        for it in await store.asearch(user.namespace("notes"), query="What is the best way to reach me?")
    }
    assert scores[email] < 0.78 and scores[trips] > scores[email]

    assert await recalled("我应该怎么联系你") == [email]
    assert await recalled("你们怎么联系我比较好？") == [email]
    assert (await recalled("how should you contact me?"))[0] == email
    # The e-mail note and the trips note lead by the same 0.021 here (0.0001
    # apart): recalled, within two, ahead of the unrelated notes.
    reach = await recalled("What is the best way to reach me?")
    assert email in reach[:2] and allergy not in reach and cats not in reach
    for greeting in ("hi", "你好", "谢谢，再见"):
        assert len(await recalled(greeting, margin=None)) == 4  # every note is a candidate
        assert await recalled(greeting) == []


async def test_recall_costs_two_round_trips_at_most_and_never_lists_notes(counting_store, user):
    store = counting_store
    await aremember_many(
        store,
        user,
        ["The user's dog is named Biscuit.", "The user is allergic to peanuts.", "The user prefers email contact."],
    )
    store.trips, store.ops = 0, []
    assert [n["text"] for n in await arecall(store, user, "Biscuit", margin=math.inf)] == [
        "The user's dog is named Biscuit."
    ]
    assert store.trips == 2  # dense search + index reads, then the note only the words found
    listings = [op for op in store.ops if isinstance(op, SearchOp) and op.query is None]
    assert store.ops and listings == []
    store.trips = 0
    assert [n["text"] for n in await arecall(store, user, "which pets?", margin=None)][:1]
    assert store.trips <= 2


# --------------------------------------------------------------------------- context and dates

#: Two answers that say nothing alone: only what they replied to tells them apart.
_ANSWERS = ["Yes, almost every weekend.", "Yes, twice a week.", "The user is allergic to peanuts."]
_ASKED = ["Do you still go hiking in the mountains?", "Do you still take piano lessons?", None]


async def test_a_note_is_found_through_what_it_answered(store, index, user):
    bare = InMemoryStore(index=index)
    await aremember_many(bare, user, _ANSWERS)
    # Precondition: without its context the piano answer is not what a piano question finds first.
    assert (await arecall(bare, user, "How often do I have piano lessons?", margin=None))[0]["text"] != _ANSWERS[1]

    await aremember_many(store, user, _ANSWERS, contexts=_ASKED)
    for question, answer in [
        ("How often do I have piano lessons?", _ANSWERS[1]),
        ("Does the user go hiking?", _ANSWERS[0]),
        ("我多久上一次钢琴课", _ANSWERS[1]),
        ("我常去爬山吗", _ANSWERS[0]),
    ]:
        assert (await arecall(store, user, question, margin=None))[0]["text"] == answer, question


async def test_the_context_steers_the_search_and_is_never_shown_as_the_note(store, user):
    from mnemo.turn.snapshot import aload_snapshot, render_snapshot

    await aremember_many(store, user, _ANSWERS, contexts=_ASKED)
    (item,) = [it for it in await store.asearch(user.namespace("notes"), limit=10) if it.value["text"] == _ANSWERS[1]]
    assert item.value["context"] == _ASKED[1]
    assert item.value["indexed_text"] == f"{_ANSWERS[1]} (in reply to: {_ASKED[1]})"
    assert "indexed_text" not in next(
        it.value for it in await store.asearch(user.namespace("notes"), limit=10) if it.value["text"] == _ANSWERS[2]
    )
    rendered = render_snapshot(await aload_snapshot(store, user, "How often do I have piano lessons?"))
    assert _ANSWERS[1] in rendered  # the note itself is shown...
    assert "piano" not in rendered  # ...its context is not


async def test_a_refinement_takes_the_new_context_or_keeps_the_old(store, user):
    first = (await aremember(store, user, "The user has a cat.", context="Any pets at home?"))["note"]
    refined = await aremember(store, user, "The user has a cat named Mochi.")
    assert refined["status"] == "refined" and refined["note"]["id"] == first["id"]
    assert refined["note"]["context"] == "Any pets at home?"  # never back from indexed_text to text
    kept = (await store.aget(user.namespace("notes"), first["id"])).value
    assert kept["indexed_text"] == "The user has a cat named Mochi. (in reply to: Any pets at home?)"  # new words
    again = await aremember(store, user, "The user has a grey cat named Mochi.", context="What is your cat like?")
    assert again["status"] == "refined"
    value = (await store.aget(user.namespace("notes"), first["id"])).value
    assert value["context"] == "What is your cat like?"
    assert value["indexed_text"] == "The user has a grey cat named Mochi. (in reply to: What is your cat like?)"


async def test_a_refinement_is_the_note_in_the_new_words_said_now_under_its_id(store, user):
    from mnemo.notes.model import normalize_note

    first = await aremember(store, user, "The user has a cat.", source="inferred", refers_to="2024")
    refined = await aremember(store, user, "The user has a cat named Mochi.", refers_to="2025-06")
    assert refined["status"] == "refined"
    value = (await store.aget(user.namespace("notes"), first["note"]["id"])).value
    new = "The user has a cat named Mochi."
    assert {k: value[k] for k in ("id", "text", "norm", "source", "first_seen", "updated_at", "refers_to")} == {
        "id": first["note"]["id"],
        "text": new,
        "norm": normalize_note(new),  # what the exact lookup of a repeat finds
        "source": "user_said",
        "first_seen": first["note"]["first_seen"],
        "updated_at": refined["note"]["updated_at"],
        "refers_to": "2025-06",
    }
    assert refined["note"]["updated_at"] > first["note"]["updated_at"]
    # Repeated without a date, it keeps the one it has.
    assert (await aremember(store, user, new))["note"]["refers_to"] == "2025-06"


async def test_a_write_whose_lists_do_not_match_its_texts_or_of_an_unknown_source_is_refused_whole(store, user):
    from mnemo.audit import SOURCES

    texts = ["The user plays go.", "The user plays chess."]
    for name, what in [("expires_at", "expiries"), ("contexts", "contexts"), ("refers_to", "refers_to dates")]:
        with pytest.raises(InvalidInputError) as refused:
            await aremember_many(store, user, texts, **{name: [None]})
        assert str(refused.value) == f"1 {what} for 2 notes"
    with pytest.raises(InvalidInputError) as refused:
        await aremember_many(store, user, texts, source="model")
    assert str(refused.value) == f"source must be one of {SOURCES}, got 'model'"
    assert await alist_notes(store, user) == []


async def test_a_fact_said_twice_in_one_write_is_one_note_in_its_first_words(store, user):
    from mnemo.audit.chain import alist_audit

    results = await aremember_many(store, user, ["The user has a cat.", "the user has a CAT!", "The user likes tea."])
    assert [r["status"] for r in results] == ["stored", "duplicate", "stored"]
    assert results[1]["note"] == results[0]["note"]  # the first occurrence
    notes = await alist_notes(store, user)
    assert sorted(n["text"] for n in notes) == ["The user has a cat.", "The user likes tea."]
    assert [r["action"] for r in await alist_audit(store, user)] == ["note.add", "note.add"]


async def test_a_refinement_is_not_undone_by_a_repeat_of_the_old_words_in_the_same_write(store, user):
    from mnemo.audit.chain import alist_audit

    first = (await aremember(store, user, "The user has a cat."))["note"]
    results = await aremember_many(store, user, ["The user has a cat named Mochi.", "The user has a cat."])
    assert [r["status"] for r in results] == ["refined", "duplicate"]
    value = (await store.aget(user.namespace("notes"), first["id"])).value
    assert value["text"] == "The user has a cat named Mochi."  # the earlier text of the write wins
    assert [r["action"] for r in await alist_audit(store, user)] == ["note.add", "note.refine"]


def _stored(ns: tuple[str, ...], key: str, text: str, score: float | None = None) -> SearchItem:
    """A stored note as a lookup of :class:`mnemo.notes.plan.NotesPlan` returns it."""
    from mnemo.notes.model import normalize_note

    value = {"id": key, "text": text, "norm": normalize_note(text), "source": "user_said"}
    return SearchItem(ns, key, value, created_at=datetime.now(UTC), updated_at=datetime.now(UTC), score=score)


def test_two_stored_notes_with_one_text_repeated_in_one_write_are_written_once(user):
    """Two stored notes can hold one text (a note refined into another's words
    keeps its id). When one write repeats both, the text is written once: the
    platform's store rejects a whole batch that embeds one text twice. The
    texts after it are planned as usual."""
    from mnemo.notes.plan import NotesPlan

    ns, text = user.namespace("notes"), "The user likes green tea."
    plan = NotesPlan.of(user, [text, "User likes green tea", "The user plays chess."])
    # Per text: the exact repeat, the note at its derived key, the nearest by meaning; then the cap probe.
    lookups = [[_stored(ns, "k1", text)], [], [], [], [], [_stored(ns, "k2", text, 0.99)], [], [], [], []]
    results, ops = plan.apply(lookups, at_limit="refuse")
    assert [(r["status"], r["note"]["id"]) for r in results][:2] == [("duplicate", "k1"), ("duplicate", "k2")]
    assert results[2]["status"] == "stored"
    written = [(op.key, op.value["text"]) for op in ops if tuple(op.namespace) == ns]
    assert written == [("k1", text), (results[2]["note"]["id"], "The user plays chess.")]
    # A stored note in the words of a new note of the same write: one write too.
    plan = NotesPlan.of(user, [text, "User likes green tea"])
    results, ops = plan.apply([[], [], [], [], [], [_stored(ns, "k2", text, 0.99)], []], at_limit="refuse")
    assert [r["status"] for r in results] == ["stored", "duplicate"]
    assert [op.value["text"] for op in ops if tuple(op.namespace) == ns] == [text]


def test_a_text_an_earlier_text_of_the_write_refined_a_note_to_is_that_note(user):
    """A text repeating the words an earlier text of the same write refined a
    stored note to is a duplicate of that note, not a second note."""
    from mnemo.notes.plan import NotesPlan

    ns = user.namespace("notes")
    refined = "The user has a cat named Mochi."
    plan = NotesPlan.of(user, [refined, "the user has a cat named Mochi!"])
    lookups = [[], [], [_stored(ns, "cat", "The user has a cat.", 0.95)], [], [], [], []]
    results, ops = plan.apply(lookups, at_limit="refuse")
    assert [(r["status"], r["note"]["id"]) for r in results] == [("refined", "cat"), ("duplicate", "cat")]
    assert [(op.key, op.value["text"]) for op in ops if tuple(op.namespace) == ns] == [("cat", refined)]


def test_a_new_note_whose_derived_key_holds_another_text_gets_a_key_of_its_own(user):
    """A key derived from a text can hold another one (a note refined or
    revised since keeps its id): the new note never overwrites it."""
    from mnemo.notes.model import normalize_note, note_key
    from mnemo.notes.plan import NotesPlan

    ns, text = user.namespace("notes"), "The user has a cat."
    derived = note_key(normalize_note(text))
    plan = NotesPlan.of(user, [text])
    lookups = [[], [_stored(ns, derived, "The user gave the cat to a friend.")], [], []]
    ((result,), ops) = plan.apply(lookups, at_limit="refuse")
    (put,) = [op for op in ops if tuple(op.namespace) == ns]
    assert result["status"] == "stored" and put.value["text"] == text
    assert put.key == result["note"]["id"] != derived and len(put.key) == 32
    # With nothing at the derived key, the note is written there.
    ((result,), ops) = plan.apply([[], [], [], []], at_limit="refuse")
    assert result["note"]["id"] == derived


async def test_a_long_context_is_cut_and_a_bad_one_refused_before_any_write(store, user):
    from mnemo.notes.model import MAX_CONTEXT_CHARS

    long = " ".join(["word"] * 200)
    note = (await aremember(store, user, "The user plays chess.", context=long))["note"]
    assert len(note["context"]) <= MAX_CONTEXT_CHARS + 1 and note["context"].endswith("…")
    with pytest.raises(InvalidInputError, match="context"):
        await aremember_many(store, user, ["The user plays go."], contexts=[42])
    with pytest.raises(InvalidInputError, match="contexts for 1 notes"):
        await aremember_many(store, user, ["The user plays go."], contexts=[None, None])
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user plays chess."]


@pytest.mark.parametrize("day", ["2024", "2024-03", "2024-03-09", "2024-03-09T10:00:00Z"])
async def test_the_date_a_fact_is_about_is_kept_and_shown(store, user, day):
    from mnemo.turn.snapshot import aload_snapshot, render_snapshot

    note = (await aremember(store, user, "The user moved to Suzhou.", refers_to=day))["note"]
    assert note["refers_to"] == day[:10]
    rendered = render_snapshot(await aload_snapshot(store, user, "when did I move?"))
    assert f"said {note['first_seen'][:10]}, about {day[:10]}" in rendered


def test_a_note_shows_only_the_dates_it_has():
    from mnemo.notes.model import Note, note_dates

    bare = Note(id="k", text="The user moved to Suzhou.", source="user_said", first_seen="", updated_at="")
    assert note_dates(bare) == "said"  # imported without dates: who stated it all the same
    assert note_dates(Note(bare, refers_to="2024-03")) == "said, about 2024-03"
    assert note_dates(Note(bare, first_seen="2026-11-30T08:00:00+00:00")) == "said 2026-11-30"


@pytest.mark.parametrize(
    ("source", "stated"),
    [("user_said", "said"), ("tool", "said"), ("app", "set by an application"), ("inferred", "inferred")],
)
def test_a_note_line_says_who_stated_it(source, stated):
    from mnemo.notes.model import Note
    from mnemo.turn import note_line

    note = Note(id="k", text="Prefers e-mail.", source=source, first_seen="2026-11-30T08:00:00+00:00", updated_at="")
    assert note_line(note) == f'- "Prefers e-mail."  ("{stated} 2026-11-30")'
    assert note_line(note, with_id=True) == f'- "Prefers e-mail."  (note "k", "{stated} 2026-11-30")'


@pytest.mark.parametrize("day", ["March 2024", "2024-13", "2024-02-30", "24-03-09", 2024])
async def test_an_unreadable_date_is_refused_before_any_write(store, user, day):
    with pytest.raises(InvalidInputError, match="refers_to"):
        await aremember(store, user, "The user moved to Suzhou.", refers_to=day)
    assert await alist_notes(store, user) == []


# --------------------------------------------------------------------------- what recall reads, and how it ranks


def test_fusion_weighs_meaning_over_words_with_mnemos_constant():
    from mnemo.notes.recall import rank_keys

    def items(*keys):
        now = datetime.now(UTC)
        return [SearchItem(("u", "notes"), k, {}, now, now, score=0.9) for k in keys]

    assert rank_keys(items("a", "b", "c"), ["c", "b"]) == ["b", "c", "a"]  # in both lists, then by weight
    assert rank_keys(items("a", "b"), ["c"]) == ["a", "b", "c"]  # words weigh less than meaning
    assert rank_keys(items("a", "b", "c"), ["c"]) == ["c", "a", "b"]
    dense = items(*(f"n{i}" for i in range(6)))
    assert rank_keys(dense, ["n5"])[:2] == ["n0", "n5"]  # FUSION_K, not the textbook 60
    assert relevant_hits([], margin=math.inf) == [] and score_leads([]) == []


async def test_recall_reads_as_many_as_asked_and_searches_nothing_for_nothing(index, user):
    from mnemo.notes import index as note_index
    from mnemo.notes.recall import aread_notes

    batches: list[list] = []

    class Recording(InMemoryStore):
        async def abatch(self, ops):
            batches.append(list(ops))
            return await super().abatch(ops)

    store = Recording(index=index)
    await aremember_many(store, user, [f"The user has a cat named Cat{i}." for i in range(8)])
    assert len(await arecall(store, user, "the user's cats", margin=None)) == 5  # the default limit
    assert len(await arecall(store, user, "the user's cats", limit=1, margin=None)) == 1
    for query, limit in (("the user's cats", 0), ("", 5)):
        batches.clear()
        read = await aread_notes(store, user, query, limit=limit, margin=None)
        assert read.relevant == [] and len(read.recent) == 8  # the recent notes are read all the same
        assert batches[0] == note_index.read_ops(user, [])  # no word looked up, nothing searched by meaning
        assert not [op for batch in batches for op in batch if isinstance(op, SearchOp) and op.query]
    batches.clear()
    assert await arecall(store, user, " \n ") == [] and batches == []  # a blank query reads nothing


def test_a_hit_is_relevant_from_a_lead_of_exactly_the_margin_and_two_hits_are_compared():
    now = datetime.now(UTC)
    hits = [SearchItem(("u", "notes"), k, {"text": "x"}, now, now, score=s) for k, s in (("a", 0.75), ("b", 0.25))]
    assert [h.key for h in relevant_hits(hits, margin=0.25)] == ["a"]  # leads +0.25 and -0.25


def test_dedupe_reads_one_note_each_by_exact_text_by_key_and_by_meaning():
    from mnemo.notes.dedupe import duplicate_lookups, repeated_note
    from mnemo.notes.model import normalize_note, note_key

    ns = ("u", "notes")
    norm = normalize_note("The user has a cat.")
    assert duplicate_lookups(ns, "The user has a cat.") == [
        SearchOp(ns, filter={"norm": norm}, limit=1),
        SearchOp(ns, filter={"id": note_key(norm)}, limit=1),
        SearchOp(ns, query="passage: The user has a cat.", limit=1),  # the note as a passage
    ]
    now = datetime.now(UTC)
    same = SearchItem(ns, "k", {"text": "The user has a cat."}, now, now)
    assert repeated_note("The user has a cat.", [same], [], ns, 0.9) == ("duplicate", same)
    deeper = SearchItem((*ns, "x"), "k", {"text": "The user has a cat."}, now, now)
    assert repeated_note("The user has a cat.", [deeper], [], ns, 0.9) is None  # another namespace's note
    near = SearchItem(ns, "n", {"text": "The user has a black cat named Tom."}, now, now, score=0.95)
    assert repeated_note("The user has a cat.", [], [near], ns, 0.9) == ("duplicate", near)  # adds nothing
    assert repeated_note("The user has a black cat named Tom, aged 12.", [], [near], ns, 0.9) == ("refined", near)
    assert repeated_note("The user has a cat.", [], [near], ns, 0.96) is None  # below the threshold


async def test_an_old_wording_not_read_with_the_lookups_is_read_before_the_index_is_written(store):
    """The index writes of a revised note whose old words were not read with
    the plan's lookups equal those made with every term read up front."""
    import json

    from mnemo.notes.index import NoteChange, terms_touched
    from mnemo.notes.plan import NotesPlan

    user = User.of("u_zhou")
    await aremember_many(store, user, ["The user owns a red kayak."])
    (kayak,) = await alist_notes(store, user)
    change = NoteChange(key=kayak["id"], before={"text": kayak["text"]}, after={"text": "The user sold the kayak."})

    async def index_writes(plan: NotesPlan) -> set[tuple]:
        lookups = await store.abatch(plan.lookups(max_notes=None))
        ops = await plan.aindex_ops(store, lookups, [], max_notes=None, also=[change])
        return {(tuple(op.namespace), op.key, json.dumps(op.value, sort_keys=True)) for op in ops}

    late = NotesPlan.of(user, ["The user likes green tea."])
    assert set(terms_touched([change])) - set(late._index_terms())  # the old words were not read
    early = NotesPlan.of(user, ["The user likes green tea."], more_terms=terms_touched([change]))
    writes = await index_writes(late)
    assert writes and writes == await index_writes(early)
