"""One conformance suite for every store backend mnemo meets.

Each behaviour of the memory package runs against the backends of
:mod:`harness.store_backends`: mnemo's in-memory store and the embedded
PostgreSQL (both opened through :func:`mnemo.stores.factory.open_store` exactly as the
application opens them), and the platform's own store that ``langgraph dev``
runs (built the way the server builds it). The PostgreSQL server is started
once per session; the ``store`` table is truncated before every test.

A case that does not hold on the platform's store is marked
``xfail(strict=True)`` with the reason, so the suite fails the day it starts
to hold (and the README claims only what holds).

The embedder is the real one (multilingual-e5-small) behind a cache.
"""

from __future__ import annotations

import asyncio
import copy
import math
import time
from collections import Counter

import psycopg
import pytest
from langgraph.store.base import InvalidNamespaceError, PutOp, SearchOp

from harness.store_backends import BACKENDS, HashEmbeddings, RacingWriter, open_backend, truncate
from mnemo import (
    POLICIES_NAMESPACE,
    DimsMismatchError,
    InvalidInputError,
    MissingUserError,
    StoreClosedError,
    UnstorableValueError,
    User,
    aforget,
    aget_profile,
    alist_notes,
    arecall,
    arecent,
    aremember,
    aremember_many,
    asearch_policies,
    aseed_policies,
    aupdate_profile,
    load_policy_file,
)
from mnemo.core import NOTES, user_label
from mnemo.core.errors import ListingChangedError
from mnemo.core.reads import LIST_ATTEMPTS, alist_all, alist_users
from mnemo.notes import index as note_index
from mnemo.notes import sparse_vectors
from mnemo.notes.model import indexed_text
from mnemo.stores import passage_query
from mnemo.stores.embeddings import LocalE5Embeddings
from mnemo.stores.embeddings import embeddings as default_embeddings
from mnemo.stores.guard import guarded
from mnemo.turn.snapshot import aload_snapshot


def on_platform(reason: str):
    """Mark: this case does not hold on the platform's store (``reason``)."""
    return pytest.mark.platform_gap(reason)


async def raw_count(store, uri: str | None, namespace: tuple[str, ...]) -> int:
    """Items physically present (PostgreSQL rows / in-memory dict), bypassing
    every read path (and so every TTL filter)."""
    if uri is None:
        data = getattr(store, "_store", store)._data  # the platform's BatchedStore wraps an InMemoryStore
        return len(data.get(namespace, {}))
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        row = await (
            await conn.execute("SELECT count(*) FROM store WHERE prefix = %s", (".".join(namespace),))
        ).fetchone()
    assert row is not None
    return row[0]


# --------------------------------------------------------------------------- profile


async def test_profile_merge_never_clobbers_fields_not_mentioned(store, user):
    await aupdate_profile(store, user, {"name": "小周", "city": "杭州"})
    await aupdate_profile(store, user, {"response_style": "别啰嗦", "city": None, "name": "not mentioned"})
    profile = await aget_profile(store, user)
    assert {f: e["value"] for f, e in profile.items()} == {"name": "小周", "city": "杭州", "response_style": "concise"}


async def test_profile_forget_removes_only_that_field(store, user):
    await aupdate_profile(store, user, {"name": "Ann", "city": "Paris"})
    diff = await aupdate_profile(store, user, {}, forget=["city"])
    assert diff == [{"field": "city", "before": "Paris", "after": None}]
    assert set(await aget_profile(store, user)) == {"name"}


async def test_provenance_and_first_seen_are_kept_by_mnemo(store, user):
    """InMemoryStore resets ``created_at`` on overwrite, PostgreSQL keeps it;
    mnemo's ``first_seen`` lives in the value and is the same on both."""
    await aupdate_profile(store, user, {"city": "Paris"}, source="user_said")
    first = (await aget_profile(store, user))["city"]
    await asyncio.sleep(0.01)
    await aupdate_profile(store, user, {"city": "Lyon"}, source="tool")
    after = (await aget_profile(store, user))["city"]
    assert after["value"] == "Lyon" and after["source"] == "tool"
    assert after["first_seen"] == first["first_seen"]
    assert after["updated_at"] > first["updated_at"]


async def test_nothing_is_written_when_nothing_changed(store, user):
    await aupdate_profile(store, user, {"city": "Paris"})
    before = (await store.asearch(user.namespace("profile")))[0].updated_at
    assert await aupdate_profile(store, user, {"city": " Paris "}) == []
    assert (await store.asearch(user.namespace("profile")))[0].updated_at == before


async def test_concurrent_updates_of_different_fields_all_survive(store, user):
    await asyncio.gather(
        aupdate_profile(store, user, {"name": "Ann"}),
        aupdate_profile(store, user, {"city": "Paris"}),
        aupdate_profile(store, user, {"language": "English"}),
    )
    profile = await aget_profile(store, user)
    assert {f: e["value"] for f, e in profile.items()} == {"name": "Ann", "city": "Paris", "language": "en"}


async def test_invalid_profile_values_are_rejected_before_any_write(store, user):
    with pytest.raises(InvalidInputError, match="limit"):
        await aupdate_profile(store, user, {"name": "ok", "city": "x" * 500})
    assert await aget_profile(store, user) == {}


# --------------------------------------------------------------------------- notes


async def test_notes_dedupe_exact_and_semantic_in_both_languages(store, user):
    first = await aremember(store, user, "The user is allergic to peanuts.")
    assert (await aremember(store, user, "the user is  allergic to peanuts"))["note"]["id"] == first["note"]["id"]
    assert (await aremember(store, user, "The user has a peanut allergy."))["status"] == "duplicate"
    await aremember(store, user, "用户对花生过敏。")
    assert (await aremember(store, user, "用户有花生过敏。"))["status"] == "duplicate"
    assert (await aremember(store, user, "The user has two dogs."))["status"] == "stored"
    assert (await aremember(store, user, "The user has two cats."))["status"] == "stored"
    assert len(await alist_notes(store, user)) == 4


async def test_refining_a_note_keeps_its_id_and_first_seen(store, user):
    first = await aremember(store, user, "用户养了两只猫。")
    refined = await aremember(store, user, "用户养了两只猫，叫咪咪和花花。")
    assert refined["status"] == "refined" and refined["note"]["id"] == first["note"]["id"]
    (note,) = await alist_notes(store, user)
    assert "咪咪" in note["text"] and note["first_seen"] == first["note"]["first_seen"]


async def test_batch_remember_dedupes_within_the_batch(store, user):
    results = await aremember_many(store, user, ["Likes tea.", "likes tea", "Owns a bike."])
    assert [r["status"] for r in results] == ["stored", "duplicate", "stored"]
    assert len(await alist_notes(store, user)) == 2


async def test_concurrent_remembers_of_one_fact_store_one_note(store, user):
    """The dedupe race: every writer's lookup runs before any write, yet the
    key derived from the normalised text makes one note of them."""
    wrapped = guarded(store)
    texts = ["The user has two cats.", "the user has two cats", "The user has two cats!"] * 3
    results = await asyncio.gather(*(aremember(wrapped, user, t) for t in texts))
    assert len({r["note"]["id"] for r in results}) == 1
    assert [n["id"] for n in await alist_notes(store, user)] == [results[0]["note"]["id"]]


async def test_many_users_saying_the_same_thing_at_once_lose_nothing(store):
    """Reads and writes of 24 users at once, the same note for all, through
    mnemo.stores.guard as the graph uses the store: none fails, none is lost.
    (The platform-store regression for langgraph#8822, with an embedder slow
    enough to make batches merge every time, is tests/stores/test_guard.py.)"""
    wrapped = guarded(store)
    users = [User.of(f"u_same_{i}") for i in range(24)]
    text = "The user prefers concise answers."
    outcomes = await asyncio.gather(
        *(aremember(wrapped, u, text) for u in users),
        *(aload_snapshot(wrapped, u, "how should I answer?") for u in users),
        *(aremember_many(wrapped, u, [text, "The user lives in Lyon."]) for u in users),
        return_exceptions=True,
    )
    assert [o for o in outcomes if isinstance(o, BaseException)] == []
    for u in users:
        assert sorted(n["text"] for n in await alist_notes(store, u)) == ["The user lives in Lyon.", text]


async def test_a_note_without_a_vector_is_found_by_words_and_costs_no_turn(store, user):
    """Imported through the store API with ``index: false``: the dense half
    skips it, the lexical half finds it, and the snapshot still loads."""
    await store.aput(
        user.namespace("notes"),
        "imported",
        {"id": "imported", "text": "The user's cat is called Xiaohua."},
        index=False,
    )
    snapshot = await aload_snapshot(store, user, "What is my cat called? Xiaohua?")
    assert [n["id"] for n in snapshot["relevant"]] == ["imported"]
    assert [n["id"] for n in await arecall(store, user, "Xiaohua")] == ["imported"]
    await aremember(store, user, "The user lives in Hangzhou.")  # a vectored note next to it
    assert "imported" in [n["id"] for n in (await aload_snapshot(store, user, "Xiaohua"))["relevant"]]


async def test_reindex_stamping_sparse_vectors_keeps_every_notes_dense_vector(store, user, monkeypatch):
    """``arestamp`` puts notes back with ``index=False``: on every backend the
    dense vector written with the note must survive it."""
    monkeypatch.setattr(sparse_vectors, "sparse_encoder", lambda: None)
    await aremember_many(store, user, ["The user is allergic to peanuts.", "The user likes hiking."])
    monkeypatch.undo()
    hits = await store.asearch(user.namespace("notes"), query="peanut allergy", limit=2)
    assert hits[0].value["text"] == "The user is allergic to peanuts." and hits[0].score is not None
    assert await sparse_vectors.arestamp(store, user) == 2
    after = await store.asearch(user.namespace("notes"), query="peanut allergy", limit=2)
    assert [(it.key, it.score) for it in after] == [(it.key, it.score) for it in hits]
    assert all(sparse_vectors.SPARSE_FIELD in it.value for it in after)


async def test_recall_by_meaning_across_languages(store, user):
    await aremember_many(
        store,
        user,
        [
            "The user is allergic to peanuts.",
            "The user owns a Xiaomi air purifier.",
            "The user's daughter is called Mia.",
        ],
    )
    hits = await arecall(store, user, "what food allergies do I have?")
    assert hits and hits[0]["text"] == "The user is allergic to peanuts."
    zh = await arecall(store, user, "我家的净化器是什么牌子")
    assert zh[0]["text"] == "The user owns a Xiaomi air purifier."


async def test_a_note_in_context_is_found_through_it_and_still_deduped(store, user):
    # Each note with a context is embedded twice (a put naming its fields):
    # every backend must honour the per-put index and score by the best vector.
    answers = ["Yes, almost every weekend.", "Yes, twice a week."]
    asked = ["Do you still go hiking in the mountains?", "Do you still take piano lessons?"]
    await aremember_many(store, user, [*answers, "The user is allergic to peanuts."], contexts=[*asked, None])
    assert (await arecall(store, user, "How often do I have piano lessons?", margin=None))[0]["text"] == answers[1]
    assert (await arecall(store, user, "我常去爬山吗", margin=None))[0]["text"] == answers[0]
    again = await aremember(store, user, "yes, twice a week")  # the text alone still finds its note
    assert again["status"] == "duplicate" and again["note"]["context"] == asked[1]
    assert len(await alist_notes(store, user)) == 3


async def test_forget_by_id_and_by_meaning_and_never_across_users(store, user):
    a = (await aremember(store, user, "The user has two cats."))["note"]
    await aremember_many(store, user, ["The user lives near the sea.", "The user prefers email contact."])
    assert await aforget(store, User.of("someone_else"), note_id=a["id"]) == []
    assert [n["text"] for n in await aforget(store, user, note_id=a["id"])] == ["The user has two cats."]
    assert [n["text"] for n in await aforget(store, user, about="living near the sea")] == [
        "The user lives near the sea."
    ]
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user prefers email contact."]


@pytest.mark.parametrize(
    ("notes", "contexts", "about", "named"),
    [
        (
            ["I have two cats, Mia and Leo.", "I live near the old mill.", "I prefer to be contacted by email."],
            [None, "Two cats, how lovely! Do Mia and Leo get along with each other?", None],
            "cats",
            "I have two cats, Mia and Leo.",
        ),
        (
            ["我养了两只猫。", "我对花生过敏。", "我住在杭州西湖区。", "我喜欢用邮件联系。"],
            [None, "两只猫真可爱！它们叫什么名字？", None, None],
            "我的猫",
            "我养了两只猫。",
        ),
    ],
    ids=["cats", "我的猫"],
)
async def test_forget_by_description_deletes_the_note_it_names_not_one_saved_in_reply_to_it(
    store, user, notes, contexts, about, named
):
    """Issue 56: the second note was saved in reply to a message about the first."""
    await aremember_many(store, user, notes, contexts=contexts)
    found = [it.value["text"] for it in await store.asearch(user.namespace("notes"), query=about, limit=2)]
    assert notes[1] in found  # the precondition: its context brings the other note up as well
    assert [n["text"] for n in await aforget(store, user, about=about)] == [named]
    assert {n["text"] for n in await alist_notes(store, user)} == set(notes) - {named}


async def test_listing_pages_past_every_backend_limit(store, user, put_raw_notes):
    ns = user.namespace("notes")
    await put_raw_notes(150)
    notes = await alist_notes(store, user)
    assert len(notes) == 150  # > the store default of 10 and > mnemo's page of 100
    assert notes[0]["text"] == "fact 149" and notes[-1]["text"] == "fact 0"
    assert len(await store.asearch(ns)) == 10  # the trap mnemo avoids, on every backend
    snap = await aload_snapshot(store, user, "", recent_limit=2)
    assert [n["text"] for n in snap["recent"]] == ["fact 149", "fact 148"]


async def test_listing_a_batch_that_shares_one_write_time_returns_every_item_once(store, user, backend):
    """Items written in one batch share PostgreSQL's ``updated_at``; upstream
    orders an unqueried search by it alone, so offset pages over the ties
    repeated some items and skipped others."""
    ns = user.namespace("notes")
    keys = [f"k{i:04d}" for i in range(1000)]
    await store.abatch(
        [PutOp(ns, k, {"id": k, "text": f"fact {k}", "updated_at": "2026-01-01"}, index=False) for k in keys]
    )
    items = await alist_all(store, ns)
    if backend == "postgres":  # the precondition of the trap: one write time for all
        assert len({it.updated_at for it in items}) == 1
    found = [it.key for it in items]
    repeated = sorted(k for k, n in Counter(found).items() if n > 1)
    missing = sorted(set(keys) - set(found))
    assert (len(found), repeated, missing) == (len(keys), [], [])
    assert sorted(n["id"] for n in await alist_notes(store, user)) == keys


def _searches(ops) -> bool:
    return any(isinstance(op, SearchOp) for op in ops)


async def _delete_first_read(inner, ops, results) -> None:
    await inner.adelete(ops[0].namespace_prefix, results[0][0].key)


@pytest.mark.parametrize("change", ["delete a read item", "update an unread item"])
async def test_listing_returns_each_item_once_when_a_writer_changes_the_order_between_pages(
    store, user, backend, change
):
    """Offsets count positions: deleting an item already read moves every
    later one a place forward (one is never read); on PostgreSQL an update
    moves the item to the front (it is never read). ``alist_all`` notices and
    starts over."""
    ns = user.namespace("notes")
    keys = [f"k{i:02d}" for i in range(35)]
    await store.abatch([PutOp(ns, k, {"id": k, "text": k}, index=False) for k in keys])
    moved = keys[-1]

    async def update_unread(inner, ops, results) -> None:
        assert moved not in {it.key for it in results[0]}
        await inner.aput(ns, moved, {"id": moved, "text": "updated"}, index=False)

    racing = RacingWriter(store, _searches, _delete_first_read if change.startswith("delete") else update_unread)
    items = await alist_all(racing, ns, page_size=10)
    assert racing.writes == 1
    found = [it.key for it in items]
    if change.startswith("delete"):
        assert len(found) == len(set(found)) == len(keys) - 1 and set(keys) - set(found) == {keys[0]}
    else:
        if backend == "postgres":  # the trap's precondition: the update moved it to the front
            assert (await store.asearch(ns, limit=1))[0].key == moved
        assert sorted(found) == keys
        assert next(it.value["text"] for it in items if it.key == moved) == "updated"


async def test_listing_a_namespace_that_never_stops_changing_fails_clearly(store, user):
    ns = user.namespace("notes")
    await store.abatch([PutOp(ns, f"k{i:02d}", {"id": f"k{i:02d}"}, index=False) for i in range(35)])
    racing = RacingWriter(store, _searches, _delete_first_read, times=None)
    with pytest.raises(ListingChangedError, match="changed while it was being listed"):
        await alist_all(racing, ns, page_size=10)
    assert racing.writes == LIST_ATTEMPTS * 2  # each attempt: its first page and the page that did not join


async def test_recall_and_recent_past_two_thousand_notes_from_the_write_time_index(store, user):
    """No cliff at 2,000 notes, the same ranking on every backend: notes
    written before the index existed are indexed once (``arebuild``), later
    writes, refinements and deletions keep the index true."""
    await aremember_many(store, user, ["The user's dog is named Biscuit.", "用户养了两只猫。"])
    ns = user.namespace("notes")
    # One batch: on PostgreSQL the 2,100 notes share one ``updated_at``, the
    # ties offset paging once repeated and skipped (see MnemoPostgresStore).
    await store.abatch(
        [
            PutOp(
                ns,
                f"k{i:04d}",
                {
                    "id": f"k{i:04d}",
                    "text": f"filler fact number {i} about item{i}",
                    "updated_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}",
                },
                index=False,
            )
            for i in range(2100)
        ]
    )
    await note_index.arebuild(store, user)
    assert (await aremember(store, user, "用户养了两只猫，叫咪咪和花花。"))["status"] == "refined"
    words = [
        [n["text"] for n in await arecall(store, user, q, limit=3, margin=math.inf)]
        for q in ("Biscuit", "item2077", "咪咪", "filler item5")
    ]
    assert words == [
        ["The user's dog is named Biscuit."],
        ["filler fact number 2077 about item2077"],
        ["用户养了两只猫，叫咪咪和花花。"],
        # "filler" is in more notes than a postings item keeps: its most
        # recent ones (1600-2099) rank, ties by id
        [
            "filler fact number 5 about item5",
            "filler fact number 1600 about item1600",
            "filler fact number 1601 about item1601",
        ],
    ]
    await aforget(store, user, about="my dog Biscuit")
    assert await arecall(store, user, "Biscuit", margin=math.inf) == []
    snap = await aload_snapshot(store, user, "", recent_limit=2)
    assert [n["text"] for n in snap["recent"]] == [
        "用户养了两只猫，叫咪咪和花花。",
        "filler fact number 2099 about item2099",
    ]


async def test_most_recent_first_regardless_of_backend_order(store, user):
    """Written in an order that is wrong both as insertion order (InMemoryStore)
    and as write-time order (PostgreSQL's ``updated_at DESC``)."""
    ns = user.namespace("notes")
    for i, stamp in enumerate(["2026-03-01", "2026-01-01", "2026-02-01"]):
        await store.aput(ns, f"k{i}", {"id": f"k{i}", "text": stamp, "updated_at": stamp}, index=False)
    assert [n["text"] for n in await arecent(store, user, 2)] == ["2026-03-01", "2026-02-01"]


async def test_invalid_notes_are_rejected_and_nothing_is_written(store, user):
    with pytest.raises(InvalidInputError, match="empty"):
        await aremember(store, user, "   ")
    with pytest.raises(InvalidInputError):
        await aremember_many(store, user, ["fine", ""])
    assert await alist_notes(store, user) == []


# --------------------------------------------------------------------------- policies


async def test_policy_seeding_is_idempotent_and_follows_the_file(store):
    policies = load_policy_file()
    assert await aseed_policies(store, policies) == {"added": len(policies), "updated": 0, "removed": 0}
    stamps = {it.key: it.updated_at for it in await alist_all(store, POLICIES_NAMESPACE)}
    assert await aseed_policies(store, policies) == {"added": 0, "updated": 0, "removed": 0}
    assert {it.key: it.updated_at for it in await alist_all(store, POLICIES_NAMESPACE)} == stamps
    changed = [{**policies[0], "text": policies[0]["text"] + " (revised)"}, *policies[1:-1]]
    assert await aseed_policies(store, changed) == {"added": 0, "updated": 1, "removed": 1}
    assert len(await alist_all(store, POLICIES_NAMESPACE)) == len(policies) - 1
    hits = await asearch_policies(store, "how long do I have to return something for my money back?")
    assert hits and hits[0]["id"].startswith(("refund", "returns"))


# --------------------------------------------------------------------------- namespaces


async def test_ghost_namespaces_are_never_users_or_data(store, backend):
    await store.aget(("ghost", "profile"), "name")  # InMemoryStore creates ("ghost", "profile") here
    gone = User.of("gone")
    # An emptied namespace (raw writes: through mnemo the audit trail would remain).
    await store.aput(gone.namespace("profile"), "city", {"value": "Paris"}, index=False)
    await store.adelete(gone.namespace("profile"), "city")
    await aremember(store, User.of("alive"), "Likes tea.")
    await aseed_policies(store, load_policy_file()[:2])
    roots = {ns[0] for ns in await store.alist_namespaces(max_depth=1)}
    if backend != "postgres":
        assert {"ghost", "gone"} <= roots  # the trap: raw listings differ by backend
    else:
        assert roots == {"alive", "org"}
    assert await alist_users(store) == ["alive"]
    assert await aget_profile(store, User.of("ghost")) == {}
    assert await alist_notes(store, gone) == []


async def test_invalid_ids_are_mapped_and_invalid_namespaces_fail_the_same(store):
    for raw in ["zhou.wang@x.com", "小周", "org", "x" * 200]:
        u = User.of(raw)
        assert u.label == user_label(raw) and u.label.startswith("~")
        await aupdate_profile(store, u, {"city": "杭州"})
        assert (await aget_profile(store, u))["city"]["value"] == "杭州"
    assert sorted(await alist_users(store)) == sorted(
        user_label(r) for r in ["zhou.wang@x.com", "小周", "org", "x" * 200]
    )
    with pytest.raises(MissingUserError):
        User.of("  ")
    with pytest.raises(InvalidNamespaceError, match="periods"):
        await store.aput(("zhou.wang@x.com", "notes"), "k", {"text": "x"}, index=False)
    with pytest.raises(InvalidNamespaceError, match="langgraph"):
        await store.aput(("langgraph", "notes"), "k", {"text": "x"}, index=False)


@on_platform("abatch goes straight to InMemoryStore, which does not check namespace labels")
async def test_invalid_namespaces_fail_even_when_the_op_skips_put(store):
    with pytest.raises(InvalidNamespaceError, match="periods"):
        await store.abatch([PutOp(("zhou.wang@x.com", "notes"), "k", {"text": "x"}, index=False)])


async def test_text_postgresql_cannot_store_is_refused_by_mnemo_on_every_backend(store, user):
    with pytest.raises(UnstorableValueError, match="NUL"):
        await aremember(store, user, "a note with a \x00 inside")
    with pytest.raises(UnstorableValueError, match="surrogate"):
        await aupdate_profile(store, user, {"city": "\ud800"})
    assert await alist_notes(store, user) == [] and await aget_profile(store, user) == {}


@on_platform("mnemo does not wrap the server's store: raw writes are InMemoryStore's, which keeps any object")
async def test_values_postgresql_cannot_store_fail_the_same_on_every_backend(store, user):
    """InMemoryStore would keep them; PostgreSQL's jsonb/text would raise a
    driver error. mnemo's stores refuse them up front, with the same error."""
    ns = user.namespace("notes")
    for bad in ({"text": "a\x00b"}, {"text": "\ud800"}, {"x": float("nan")}, {"x": {1: "int key"}}, {"x": {1, 2}}):
        with pytest.raises(UnstorableValueError):
            await store.aput(ns, "k", bad, index=False)
    assert await alist_notes(store, user) == []


# --------------------------------------------------------------------------- values


VALUE = {
    "text": '用户喜欢喝☕ and 🐼; family: 👨‍👩‍👧 👍🏽 — «ok»\n\ttab "quoted" \\ backslash',
    "nested": {"深": {"层": [1, 2.5, -0.001, None, True, False, {"emoji🔑": "值"}]}, "empty": {}, "list": []},
    "big": 2**62,
    "tuple": (1, "two"),
}


@on_platform("InMemoryStore keeps the value by reference: tuples stay tuples, later mutations show")
async def test_unicode_and_nested_json_round_trip(store):
    ns = (user_label("小周"), "笔记")
    await store.aput(ns, "键🐼", VALUE, index=False)
    expected = {**copy.deepcopy(VALUE), "tuple": [1, "two"]}  # what jsonb returns, on every backend
    (item,) = await store.asearch(ns)
    assert item.key == "键🐼" and tuple(item.namespace) == ns
    assert item.value == expected
    assert (await store.aget(ns, "键🐼")).value == expected
    VALUE["nested"]["list"].append("mutated after put")  # the store kept its own copy
    assert (await store.aget(ns, "键🐼")).value == expected
    VALUE["nested"]["list"].clear()


# --------------------------------------------------------------------------- semantic search


async def test_same_top_hits_on_every_backend(cached_index, pg, tmp_path, request):
    notes = [
        "The user is allergic to peanuts.",
        "The user owns a Xiaomi air purifier.",
        "用户住在杭州西湖区。",
        "The user's daughter is called Mia.",
        "The user prefers email over phone calls.",
        "用户每周三去游泳。",
    ]
    queries = ["what food allergies do I have?", "我住在哪里", "how should you contact me", "我有什么运动习惯"]
    user = User.of("u_same")
    results = {}
    for backend in BACKENDS:
        uri = pg.uri if backend == "postgres" else None
        async with open_backend(backend, uri, cached_index, tmp_path, request) as store:
            if uri:
                await truncate(uri)
            await aremember_many(store, user, notes)
            results[backend] = [await arecall(store, user, q, limit=3, margin=None) for q in queries]
    memory = results["memory"]
    assert memory[0][0]["text"] == "The user is allergic to peanuts."
    assert memory[1][0]["text"] == "用户住在杭州西湖区。"
    for backend in ("postgres", "platform"):
        for q, m, other in zip(queries, memory, results[backend], strict=True):
            assert [n["text"] for n in m] == [n["text"] for n in other], (backend, q)
            # Same vectors, same cosine (pgvector stores float4): equal to 1e-4. Before
            # mnemo's QueryAwareEmbeddings, PostgreSQL embedded queries as passages
            # and these differed by ~0.015.
            assert [n["score"] for n in m] == pytest.approx([n["score"] for n in other], abs=1e-4), (backend, q)


class CountingEmbeddings(HashEmbeddings):
    """Hash vectors, each text embedded recorded (queries and passages apart)."""

    def __init__(self, dims: int) -> None:
        super().__init__(dims)
        self.queries: list[str] = []
        self.passages: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.passages.extend(texts)
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return super().embed_query(text)


async def test_a_turns_snapshot_embeds_its_query_once(backend, uri, tmp_path, request):
    """The snapshot searches notes, the user's and the shared episodes and the
    similar notes by the latest message, in one batch: one embedding of it
    (PostgreSQL embedded it once per search)."""
    embed = CountingEmbeddings(384)
    user = User.of("u_once")
    index = {"embed": embed, "dims": 384, "fields": ["text"]}
    async with open_backend(backend, uri, index, tmp_path, request) as store:
        if uri:
            await truncate(uri)
        await aremember_many(store, user, ["The user has two cats.", "The user lives in Hangzhou."])
        embed.queries.clear()
        snapshot = await aload_snapshot(store, user, "what pets do I have", episode_limit=3, similar_limit=5)
        assert len(snapshot["similar"]) == 2  # the precondition: the searches ran by meaning
        assert embed.queries == ["what pets do I have"]


class CountingModel:
    """The bundled model, each call recorded: (``"query"`` or ``"passage"``, its texts)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: list[tuple[str, list[str]]] = []

    def query(self, texts):
        self.calls.append(("query", [texts] if isinstance(texts, str) else list(texts)))
        return self.inner.query(texts)

    def passage(self, texts):
        self.calls.append(("passage", [texts] if isinstance(texts, str) else list(texts)))
        return self.inner.passage(texts)


async def test_a_notes_dedupe_lookup_embeds_it_as_the_passage_its_put_reuses(backend, uri, tmp_path, request):
    """The dedupe lookup searches by the note as a passage (its own stored vector
    scores 1, passage to passage) and the put takes that vector: a new note's text
    is embedded once, its text in context once, and nothing as a query."""
    embed = LocalE5Embeddings()
    model = embed._model = CountingModel(default_embeddings._get_model())
    user = User.of("u_passage")
    note, context = "The user has two cats.", "Do you have any pets?"
    async with open_backend(
        backend, uri, {"embed": embed, "dims": 384, "fields": ["text"]}, tmp_path, request
    ) as store:
        if uri:
            await truncate(uri)
        model.calls.clear()  # the dims probe of the store's start
        (stored,) = await aremember_many(store, user, [note], contexts=[context])
        assert stored["status"] == "stored"
        assert sorted(model.calls) == [("passage", [note]), ("passage", [indexed_text(note, context)])]
        (hit,) = await store.asearch(user.namespace(NOTES), query=passage_query(note), limit=1)
        assert hit.value["text"] == note and hit.score == pytest.approx(1.0, abs=1e-3)
        (asked,) = await store.asearch(user.namespace(NOTES), query=note, limit=1)
        assert asked.score < 0.99  # the precondition: as a query the same text scores lower


@on_platform("the server builds its store from langgraph.json without checking dims against the model")
async def test_dims_mismatch_is_a_loud_error_at_startup(backend, uri, cached_index, tmp_path, request):
    with pytest.raises(DimsMismatchError, match="384-dimensional"):
        async with open_backend(backend, uri, {**cached_index, "dims": 256}, tmp_path, request):
            pytest.fail("a store opened with the wrong dims")


# --------------------------------------------------------------------------- TTL


async def seconds_left(store, uri: str | None, namespace: tuple[str, ...], key: str) -> float:
    """Time to an item's TTL deadline, read from storage (no refresh)."""
    if uri is None:
        deadlines = getattr(store, "_deadlines", {})  # the platform's store keeps none
        return deadlines[(namespace, key)][0] - time.time() if (namespace, key) in deadlines else math.inf
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        row = await (
            await conn.execute(
                "SELECT extract(epoch FROM expires_at - now()) FROM store WHERE prefix = %s AND key = %s",
                (".".join(namespace), key),
            )
        ).fetchone()
    assert row is not None
    return float(row[0])


async def eventually(read, done, *, within_s: float = 10.0, every_s: float = 0.1) -> bool:
    """Whether ``done(await read())`` holds within ``within_s`` seconds
    (polled): a deadline for what a background task does, not a fixed sleep."""
    deadline = time.monotonic() + within_s
    while not done(await read()):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(every_s)
    return True


@on_platform("TTLs are accepted and ignored: items never expire and start_ttl_sweeper is a no-op")
async def test_time_bound_memories_expire_and_are_swept(store, uri):
    """``ttl`` is in minutes. The sweeper task deletes an expired item while
    nothing else touches the store (polled, with a deadline), and no read
    returns it after."""
    ns = ("u_ttl", "now")
    await store.aput(ns, "order", {"text": "asking about order 42"}, index=False, ttl=2 / 60)
    await store.aput(ns, "durable", {"text": "no ttl"}, index=False)
    assert {it.key for it in await store.asearch(ns, refresh_ttl=False)} == {"order", "durable"}
    assert await raw_count(store, uri, ns) == 2
    # Nothing touches the store while we wait (the in-memory store also drops
    # expired items on any batch): only the sweeper can delete the row.
    assert await eventually(lambda: raw_count(store, uri, ns), lambda n: n == 1)
    assert {it.key for it in await store.asearch(ns, refresh_ttl=False)} == {"durable"}


@on_platform("TTLs are ignored, so there is no deadline to refresh")
async def test_reads_refresh_ttl_in_whole_minutes(store, uri):
    """Refresh-on-read, as PostgreSQL does it (``ttl_minutes`` is an INT column):
    the first deadline is the exact TTL, a read re-arms it with the TTL rounded
    to whole minutes. So a read of an item with a TTL under 30 s expires it."""
    ns = ("u_ttl", "now")
    await store.aput(ns, "watched", {"text": "a 1.4 minute ttl"}, index=False, ttl=1.4)
    assert 80 < await seconds_left(store, uri, ns, "watched") <= 84
    assert await store.aget(ns, "watched") is not None  # refresh_ttl defaults to True
    assert 55 < await seconds_left(store, uri, ns, "watched") <= 60
    await store.asearch(ns, refresh_ttl=False)  # a read that does not refresh
    assert 55 < await seconds_left(store, uri, ns, "watched") <= 60

    await store.aput(ns, "blink", {"text": "a 2 second ttl"}, index=False, ttl=2 / 60)
    assert await store.aget(ns, "blink") is not None  # this read re-arms it with round(2/60) = 0 minutes
    assert await store.aget(ns, "blink") is None


@on_platform("the server's store has no closed state (it lives as long as the server)")
async def test_store_is_unusable_after_its_block(backend, uri, cached_index, tmp_path, request):
    async with open_backend(backend, uri, cached_index, tmp_path, request) as store:
        await store.aput(("u", "notes"), "k", {"text": "x"}, index=False)
    with pytest.raises(StoreClosedError):
        await store.asearch(("u", "notes"))


async def test_time_bound_notes_are_hidden_by_mnemo_and_swept(store, uri, user, monkeypatch):
    """mnemo's own ``expires_at`` hides a time-bound note at once on every
    backend (PostgreSQL's TTL is refreshed by reads; the platform's store
    ignores TTLs), and load_memory's read deletes it. Time moves through
    ``mnemo.notes.expiry.clock``."""
    from datetime import UTC, datetime, timedelta

    from mnemo.notes import expiry

    now = datetime.now(UTC)
    monkeypatch.setattr(expiry, "clock", lambda: now)
    await aremember(store, user, "The user is travelling in Japan.", expires_at=expiry.expiry_from(valid_for_days=2))
    await aremember(store, user, "The user owns a kayak.")
    assert len(await alist_notes(store, user)) == 2
    monkeypatch.setattr(expiry, "clock", lambda: now + timedelta(days=2, seconds=1))
    assert await raw_count(store, uri, user.namespace("notes")) == 2  # still stored: mnemo does the hiding
    assert all("Japan" not in n["text"] for n in await arecall(store, user, "Is the user travelling in Japan?"))
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user owns a kayak."]
    await aload_snapshot(store, user, "travel")
    assert await raw_count(store, uri, user.namespace("notes")) == 1
