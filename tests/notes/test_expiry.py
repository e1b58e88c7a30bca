"""Time-bound notes (mnemo.notes.expiry): hidden after expiry by mnemo itself, on
stores that ignore TTLs too, and swept. Time moves through ``expiry.clock``;
nothing sleeps. The same case runs on PostgreSQL in tests/stores/conformance/test_memory.py."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from mnemo import InvalidInputError, User, alist_notes, arecall, aremember, aremember_many
from mnemo.core import NOTES
from mnemo.notes import expiry
from mnemo.turn.snapshot import aload_snapshot, render_snapshot
from mnemo.writing.apply import aapply_extraction
from mnemo.writing.extraction import MemoryExtraction, TemporaryNote

START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # a Tuesday


class Clock:
    def __init__(self):
        self.now = START

    def __call__(self):
        return self.now

    def advance(self, **delta):
        self.now += timedelta(**delta)


@pytest.fixture
def clock(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(expiry, "clock", clock)
    return clock


def dev_store(index, monkeypatch):
    """The store ``langgraph dev`` serves (its TTL sweeper is a no-op)."""
    from langgraph_runtime_inmem import _persistence
    from langgraph_runtime_inmem.store import DiskBackedInMemStore

    monkeypatch.setattr(_persistence, "DISABLE_FILE_PERSISTENCE", True)
    return DiskBackedInMemStore(index=index)


@pytest.fixture(params=["inmemory", "langgraph_dev"])
def any_store(request, index, monkeypatch):
    return InMemoryStore(index=index) if request.param == "inmemory" else dev_store(index, monkeypatch)


def raw_keys(store, user) -> set[str]:
    """What the store physically holds, past every mnemo read path."""
    return set(store._data.get(user.namespace(NOTES), {}))


async def test_a_time_bound_note_stops_being_recalled_and_is_swept(any_store, user, clock):
    trip = await aremember(
        any_store, user, "The user is travelling in Japan.", expires_at=expiry.expiry_from(valid_for_days=3)
    )
    await aremember(any_store, user, "The user is allergic to peanuts.")
    assert [n["text"] for n in await arecall(any_store, user, "Where is the user travelling?")][
        0
    ] == "The user is travelling in Japan."
    snapshot = await aload_snapshot(any_store, user, "travel plans")
    assert 'true until "2026-12-04T09:00"' in render_snapshot(snapshot)

    clock.advance(days=3, seconds=1)
    assert trip["note"]["id"] in raw_keys(any_store, user)  # the store itself did not drop it (no TTL here)
    assert all("Japan" not in n["text"] for n in await arecall(any_store, user, "Where is the user travelling?"))
    assert [n["text"] for n in await alist_notes(any_store, user)] == ["The user is allergic to peanuts."]
    snapshot = await aload_snapshot(any_store, user, "travel plans")  # load_memory's read sweeps
    assert "Japan" not in render_snapshot(snapshot)
    assert trip["note"]["id"] not in raw_keys(any_store, user)
    assert len(raw_keys(any_store, user)) == 1


async def test_sweep_all_removes_expired_notes_of_users_who_never_come_back(store, clock):
    gone, stays = User.of("u_gone"), User.of("u_stays")
    await aremember(
        store, gone, "The user is at a conference this week.", expires_at=expiry.expiry_from(valid_for_days=1)
    )
    await aremember(store, stays, "The user owns a kayak.")
    assert await expiry.asweep_all(store) == 0
    clock.advance(days=2)
    assert await expiry.asweep_all(store) == 1
    assert raw_keys(store, gone) == set() and len(raw_keys(store, stays)) == 1


async def test_the_latest_statement_decides_whether_a_note_is_time_bound(counting_store, user, clock):
    store = counting_store
    puts = []  # the note's writes: a store TTL is a backstop where the backend honours one
    original = store.abatch

    async def recording(ops):
        ops = list(ops)
        puts.extend(op for op in ops if isinstance(op, PutOp) and op.namespace == user.namespace(NOTES))
        return await original(ops)

    store.abatch = recording
    first = expiry.expiry_from(valid_for_days=2)
    await aremember(store, user, "The user works from Lisbon.", expires_at=first)
    again = await aremember(store, user, "The user works from Lisbon.")  # now said without a limit
    assert again["status"] == "duplicate" and "expires_at" not in again["note"]
    assert [(p.value.get("expires_at"), p.ttl) for p in puts] == [(first, expiry.ttl_minutes(first)), (None, None)]
    clock.advance(days=10)
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user works from Lisbon."]
    until = expiry.expiry_from(valid_for_days=1)
    later = await aremember(store, user, "The user works from Lisbon.", expires_at=until)  # time-bound again
    assert later["status"] == "duplicate" and later["note"]["expires_at"] == until
    assert (puts[-1].value["expires_at"], puts[-1].ttl) == (until, expiry.ttl_minutes(until))


async def test_extracted_temporary_notes_carry_their_expiry(store, user, clock):
    extraction = MemoryExtraction(
        notes=["The user has a dog."],
        temporary_notes=[
            TemporaryNote(text="The user is travelling until Friday.", expires="2026-12-04"),
            TemporaryNote(text="The user was ill last week.", expires="2026-11-20"),  # past: dropped
            TemporaryNote(text="The user is busy.", expires="soon"),
        ],
    )  # unreadable: dropped
    await aapply_extraction(store, user, extraction)
    notes = {n["text"]: n.get("expires_at") for n in await alist_notes(store, user)}
    assert notes == {
        "The user has a dog.": None,
        "The user is travelling until Friday.": "2026-12-04T23:59:59.999999+00:00",
    }
    clock.advance(days=3, hours=12)  # Friday 21:00: still true
    assert len(await alist_notes(store, user)) == 2
    clock.advance(hours=3)  # Saturday
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user has a dog."]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"valid_for_days": 0},
        {"valid_for_days": -1},
        {"valid_for_days": 5000},
        {"until": "2020-01-01"},
        {"until": "next week"},
        {"valid_for_days": 1, "until": "2026-12-24"},
    ],
)
def test_bad_expiries_are_refused(clock, kwargs):
    with pytest.raises(InvalidInputError):
        expiry.expiry_from(**kwargs)


async def test_remember_note_with_a_duration_through_the_graph(store, clock, monkeypatch):
    from langchain_core.messages import AIMessage
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.agent import builder
    from harness.scripted import ScriptedChatModel, tool_call
    from mnemo.models.build import MODELS
    from tests.agent_harness import Script, chat_prompts, say

    script = Script()
    steps = iter(
        [
            tool_call("remember_note", text="The user is travelling in Japan.", valid_for_days=2),
            AIMessage("Noted, enjoy the trip."),
        ]
    )
    script.chat = lambda messages: next(steps, AIMessage("ok"))
    script.extract = lambda m, t: tool_call("MemoryExtraction")
    model = ScriptedChatModel(respond=script)
    monkeypatch.setitem(MODELS, "scripted", model)
    agent = builder.compile(checkpointer=InMemorySaver(), store=store)
    await say(agent, "Remember that I'm in Japan for two days.", thread="t1")
    await say(agent, "Any travel adapters for Japan?", thread="t2")
    assert "The user is travelling in Japan." in chat_prompts(model)[-1]
    clock.advance(days=2, minutes=1)
    await say(agent, "Any travel adapters for Japan?", thread="t3")
    assert "travelling in Japan" not in chat_prompts(model)[-1]
    assert raw_keys(store, User.of("u_zhou")) == set()  # swept by load_memory


async def test_a_sweep_takes_expired_notes_out_of_the_write_time_index(store, user, monkeypatch):
    """``asweep_user`` deletes the note and its index entries: the head no
    longer lists it as recent, nor counts it."""
    from mnemo.notes import index as note_index

    now = datetime.now(UTC)
    monkeypatch.setattr(expiry, "clock", lambda: now)
    await aremember(store, user, "The user is travelling in Japan.", expires_at=expiry.expiry_from(valid_for_days=1))
    await aremember(store, user, "The user owns a kayak.")
    head = await store.aget(note_index.index_namespace(user), note_index.HEAD_KEY)
    assert head is not None and len(head.value["recent"]) == 2 and head.value["count"] == 2
    monkeypatch.setattr(expiry, "clock", lambda: now + timedelta(days=1, seconds=1))
    assert await expiry.asweep_user(store, user) == 1
    head = await store.aget(note_index.index_namespace(user), note_index.HEAD_KEY)
    assert head is not None and [r["text"] for r in head.value["recent"]] == ["The user owns a kayak."]
    assert head.value["count"] == 1


@pytest.mark.parametrize("unreadable", ["next tuesday", "2026-13-45T00:00:00+00:00", "not a date"])
async def test_a_note_with_an_unreadable_expiry_is_never_served(store, user, clock, unreadable):
    kept = (await aremember(store, user, "The user is travelling in Japan this week."))["note"]
    assert [n["id"] for n in await alist_notes(store, user)] == [kept["id"]]  # served while its expiry reads
    ns = user.namespace(NOTES)
    value = (await store.asearch(ns, filter={"id": kept["id"]}))[0].value
    await store.aput(ns, kept["id"], {**value, "expires_at": unreadable})
    assert expiry.is_expired({"expires_at": unreadable})
    assert await alist_notes(store, user) == []
    assert await arecall(store, user, "where is the user travelling") == []


# --------------------------------------------------------------------------- dates and bounds, exactly


def test_an_expiry_is_read_as_utc_and_a_bare_date_lasts_its_whole_day(monkeypatch):
    import time as time_module
    from datetime import date

    end_of_day = datetime(2026, 3, 4, 23, 59, 59, 999999, tzinfo=UTC)
    assert expiry.parse_expiry(date(2026, 3, 4)) == end_of_day
    assert expiry.parse_expiry(" 2026-03-04 ") == end_of_day
    assert expiry.parse_expiry("20260304T10") == datetime(2026, 3, 4, 10, tzinfo=UTC)  # not a bare date
    aware = expiry.parse_expiry("2026-03-04T10:00:00+02:00")
    assert aware == datetime(2026, 3, 4, 8, tzinfo=UTC) and aware.tzinfo is UTC
    monkeypatch.setenv("TZ", "Etc/GMT-5")  # a naive time is UTC, whatever the server's zone
    time_module.tzset()
    try:
        naive = expiry.parse_expiry(datetime(2026, 3, 4, 10))
        assert naive == datetime(2026, 3, 4, 10, tzinfo=UTC) and naive.tzinfo is UTC
    finally:
        monkeypatch.undo()
        time_module.tzset()
    with pytest.raises(InvalidInputError) as exc:
        expiry.parse_expiry("soon")
    assert str(exc.value) == "expiry 'soon' is not an ISO date or datetime (e.g. 2026-12-04)"


def test_a_time_bound_note_lasts_more_than_now_and_at_most_max_validity(clock):
    longest = expiry.MAX_VALIDITY
    assert expiry.expiry_from(valid_for_days=longest.days) == (START + longest).isoformat()
    assert expiry.expiry_from(until=START + longest) == (START + longest).isoformat()
    too_long = f"a time-bound note lasts at most {longest.days} days; store a durable note instead"
    cases = {
        "both": ({"valid_for_days": 1, "until": "2026-12-24"}, "give either a duration or an end date, not both"),
        "days": ({"valid_for_days": longest.days + 0.5}, too_long),
        "until": ({"until": START + longest + timedelta(seconds=1)}, too_long),
        "now": ({"until": START}, f"the end date {START!r} is already past; nothing time-bound to remember"),
        "negative": ({"valid_for_days": -1}, "valid_for_days must be a positive number, got -1"),
        "nan": ({"valid_for_days": float("nan")}, "valid_for_days must be a positive number, got nan"),
        "text": ({"valid_for_days": "5"}, "valid_for_days must be a positive number, got '5'"),
    }
    for name, (kwargs, message) in cases.items():
        with pytest.raises(InvalidInputError) as exc:
            expiry.expiry_from(**kwargs)
        assert str(exc.value) == message, name


def test_ttls_and_liveness_are_measured_against_the_time_given(clock):
    from langgraph.store.base import Item

    assert expiry.ttl_minutes((START + timedelta(hours=2)).isoformat()) == 120.0
    assert expiry.ttl_minutes((START + timedelta(seconds=10)).isoformat()) == 1.0  # at least a minute
    assert expiry.ttl_minutes(None) is None
    at_start = {"expires_at": START.isoformat()}
    assert expiry.is_expired(at_start) and not expiry.is_expired("not a note") and not expiry.is_expired({})
    soon = Item(
        value={"expires_at": (START + timedelta(hours=1)).isoformat()},
        key="k",
        namespace=("u", "notes"),
        created_at=START,
        updated_at=START,
    )
    clock.advance(hours=2)  # now it is past; an hour ago it was not
    assert expiry.live([soon], at=START) == [soon] and expiry.expired([soon], at=START) == []
    assert expiry.live([soon]) == [] and expiry.expired([soon]) == [soon]


async def test_a_read_hands_back_the_expired_notes_it_met_for_sweeping(store, user, clock):
    from langgraph.store.base import GetOp

    from mnemo.notes.index import RECENT_KEEP
    from mnemo.notes.recall import aread_notes

    trip = await aremember(
        store, user, "The user is travelling in Japan.", expires_at=expiry.expiry_from(valid_for_days=3)
    )
    trip_id = trip["note"]["id"]
    await aremember(store, user, "The user is allergic to peanuts.")
    clock.advance(days=3, seconds=1)
    extra = [GetOp(user.namespace(NOTES), trip_id)]
    read = await aread_notes(store, user, "", limit=5, extra=extra)  # no search: met among the recent notes
    assert [n["text"] for n in read.recent] == ["The user is allergic to peanuts."]
    assert list(read.stale) == [trip_id]
    assert [r.key for r in read.extra] == [trip_id]  # the caller's ops answered, the store untouched
    assert read.relevant == []
    fillers = [f"The user's fact number {i} is about gardening tool {i}." for i in range(RECENT_KEEP)]
    await aremember_many(store, user, fillers)
    read = await aread_notes(store, user, "Where is the user travelling?", limit=5)
    assert trip_id not in {n["id"] for n in read.recent}  # no longer among the recent notes ...
    assert list(read.stale) == [trip_id]  # ... met by the search instead


async def test_an_expired_recent_note_the_search_does_not_meet_is_handed_back_all_the_same(store, user, clock):
    from mnemo.notes.recall import FUSION_CANDIDATES, aread_notes

    gadgets = [f"The user's gadget number {i} is a model X{i}." for i in range(FUSION_CANDIDATES + 5)]
    await aremember_many(store, user, gadgets)
    trip = await aremember(
        store, user, "The user is travelling in Japan.", expires_at=expiry.expiry_from(valid_for_days=3)
    )
    trip_id = trip["note"]["id"]
    clock.advance(days=3, seconds=1)
    query = "Which gadget models does the user own?"
    candidates = await store.asearch(user.namespace(NOTES), query=query, limit=FUSION_CANDIDATES)
    assert len(candidates) == FUSION_CANDIDATES and trip_id not in {it.key for it in candidates}  # not met by meaning
    read = await aread_notes(store, user, query, limit=5)
    assert len(read.relevant) == 5 and trip_id not in {n["id"] for n in [*read.relevant, *read.recent]}
    assert list(read.stale) == [trip_id]  # met among the recent notes only
