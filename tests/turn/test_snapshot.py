import math

from langgraph.store.memory import InMemoryStore

from mnemo import aupdate_profile
from mnemo.core.quoting import quote
from mnemo.notes.writes import aremember_many
from mnemo.turn.snapshot import aload_snapshot, fit_snapshot, render_snapshot


async def test_one_round_trip_for_a_small_user(counting_store, user):
    store = counting_store
    await aupdate_profile(store, user, {"name": "Ann"})
    await aremember_many(store, user, ["The user has two cats.", "The user is allergic to peanuts."])
    store.trips = 0
    snap = await aload_snapshot(store, user, "what pets do I have?")
    assert store.trips == 1
    assert snap["profile"]["name"]["value"] == "Ann"
    assert [n["text"] for n in snap["relevant"]][:1] == ["The user has two cats."]
    # recent excludes what is already relevant
    assert {n["id"] for n in snap["recent"]}.isdisjoint({n["id"] for n in snap["relevant"]})


async def test_pages_beyond_the_first_hundred_notes(user):
    store = InMemoryStore()  # no index needed for an empty query
    for i in range(250):
        store.put(
            user.namespace("notes"), f"k{i}", {"text": f"n{i}", "updated_at": f"2026-01-01T{i // 60:02d}:{i % 60:02d}"}
        )
    snap = await aload_snapshot(store, user, "", recent_limit=2)
    assert [n["text"] for n in snap["recent"]] == ["n249", "n248"]


def test_render_respects_the_budget_and_keeps_the_profile():
    notes = [
        {"id": f"{i:032d}", "text": "x" * 80, "source": "user_said", "first_seen": "", "updated_at": ""}
        for i in range(50)
    ]
    snap = {
        "profile": {"city": {"value": "Paris", "source": "user_said", "first_seen": "2026-01-01", "updated_at": ""}},
        "relevant": notes[:25],
        "recent": notes[25:],
    }
    text = render_snapshot(snap, char_budget=600)
    assert len(text) <= 600 and 'city: "Paris"' in text
    assert "Notes relevant" in text


def test_fit_names_exactly_the_notes_the_text_shows():
    notes = [{"id": f"{i:08d}" + "a" * 24, "text": f"note {i} " + "x" * 60, "source": "user_said"} for i in range(12)]
    snap = {"profile": {}, "relevant": notes[:6], "recent": notes[6:], "episodes": []}
    for budget in (0, 150, 400, 700, 5000):
        text = render_snapshot(snap, char_budget=budget)
        fitted = fit_snapshot(snap, char_budget=budget)
        shown = {n["id"] for n in fitted["relevant"] + fitted["recent"]}
        assert shown == {n["id"] for n in notes if f"- {quote(n['text'])}  (" in text}
    assert len(shown) == 12 and 0 < len({n["id"] for n in fit_snapshot(snap, char_budget=400)["relevant"]}) < 6


def test_render_says_when_nothing_is_known():
    text = render_snapshot({"profile": {}, "relevant": [], "recent": []})
    assert "no profile yet" in text and "Notes: (none)" in text


async def test_at_most_two_round_trips_then_two_more_to_delete_the_expired_notes_met(counting_store, user):
    """What load_memory costs (docs/architecture.md): one batch, one fetch of the
    notes only the words found, and, when it met expired notes, their deletion."""
    store = counting_store
    texts = [f"The user ordered item number {i} in spring." for i in range(30)]
    codes = ["Parcel code QX7731 is for the blue kettle.", "The invoice also shows QX7731."]
    await aremember_many(store, user, [*texts, *codes])
    store.trips = 0
    await aload_snapshot(store, user, "QX7731")
    assert store.trips == 1  # the precondition: meaning found it in the batch, nothing to fetch
    store.trips = 0
    snap = await aload_snapshot(store, user, "QX7731", recall_margin=math.inf)  # words alone
    assert store.trips == 2  # the second: one fetch of the words-only hits
    assert sorted(n["text"] for n in snap["relevant"]) == sorted(codes)

    (kettle,) = [n for n in (await aload_snapshot(store, user, "kettle"))["relevant"] if "kettle" in n["text"]]
    item = await store.aget(user.namespace("notes"), kettle["id"])
    assert item is not None
    await store.aput(user.namespace("notes"), kettle["id"], {**item.value, "expires_at": "2020-01-01T00:00:00+00:00"})
    store.trips = 0
    snap = await aload_snapshot(store, user, "blue kettle")
    assert store.trips == 4 and kettle["id"] not in {n["id"] for n in snap["relevant"]}  # two reads, two to delete
    assert await store.aget(user.namespace("notes"), kettle["id"]) is None  # met expired: deleted in the same call


async def test_the_similar_notes_come_from_the_recalls_own_search(counting_store, user):
    """The extractor's ``similar`` notes are the recall's nearest: one search of the notes by meaning
    per turn, and the same notes, in the same order, as a search of their own would give."""
    from langgraph.store.base import SearchOp

    store = counting_store
    pets = ["cats", "dogs", "fish", "birds", "rabbits", "hamsters", "turtles"]
    texts = [f"The user owns {n} {pet}." for n, pet in enumerate(pets, 2)]
    await aremember_many(store, user, texts)
    store.ops.clear()
    snap = await aload_snapshot(store, user, "what pets do I have?", similar_limit=3)
    by_meaning = [op for op in store.ops if isinstance(op, SearchOp) and op.query]
    notes_ns = user.namespace("notes")
    assert [tuple(op.namespace_prefix) for op in by_meaning].count(notes_ns) == 1
    own = await store.asearch(notes_ns, query="what pets do I have?", limit=3)
    assert len(snap["similar"]) == 3 and [n["id"] for n in snap["similar"]] == [it.key for it in own]


def test_a_search_answers_another_only_when_it_holds_that_ones_result():
    from langgraph.store.base import GetOp, SearchOp

    from mnemo.notes.recall import answered_by

    ns = ("u", "notes")
    recall = SearchOp(ns, query="pets", limit=50)
    others = [
        SearchOp(ns, query="pets", limit=20),  # answered: its first 20
        SearchOp(ns, query="pets", limit=51),  # more than recall asks
        SearchOp(ns, query="cats", limit=5),  # another query
        SearchOp(ns, query="pets", filter={"kind": "x"}, limit=5),  # a filter
        SearchOp(ns, query="pets", offset=5, limit=5),  # not from the first item
        SearchOp(("u", "episodes"), query="pets", limit=5),  # another namespace
        GetOp(ns, "k"),
    ]
    assert answered_by(recall, others) == {0: 20}
