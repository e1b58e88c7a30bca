"""The note index of a user whose notes have none (``mnemo.notes.index.arebuild``,
``python -m mnemo reindex``): built in bounded batches, from a turn at most once."""

from __future__ import annotations

import asyncio
import json
import math

import pytest
from langgraph.store.base import PutOp

from harness.store_backends import truncate
from mnemo import User, arecall
from mnemo.cli import main
from mnemo.notes import index as note_index
from mnemo.notes import sparse_vectors
from mnemo.stores.factory import open_store
from mnemo.turn.snapshot import aload_snapshot

MANY = 20_000


def old_notes(user: User, count: int, *, embedded: bool = False) -> list[PutOp]:
    """Notes written before the index existed (or around mnemo): no index items."""
    return [
        PutOp(
            user.namespace("notes"),
            f"k{i:05d}",
            {"id": f"k{i:05d}", "text": f"old fact {i} about thing{i}", "updated_at": f"2026-01-01T{i:08d}"},
            index=None if embedded else False,
        )
        for i in range(count)
    ]


async def put_all(store, ops: list[PutOp], batch: int = 1000) -> None:
    for start in range(0, len(ops), batch):
        await store.abatch(ops[start : start + batch])


async def test_twenty_thousand_old_notes_on_postgres_get_their_index_from_a_turn(pg, cached_index, user):
    """One batch of the whole index exceeded PostgreSQL's 65,535 bind parameters:
    every turn failed. Built in bounded batches, the first turn sees its notes."""
    async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
        await truncate(pg.uri)
        await put_all(store, old_notes(user, MANY))
        snap = await aload_snapshot(store, user, "", recent_limit=2)
        assert [n["text"] for n in snap["recent"]] == [
            "old fact 19999 about thing19999",
            "old fact 19998 about thing19998",
        ]
        assert [n["text"] for n in await arecall(store, user, "thing12345", limit=1, margin=math.inf)] == [
            "old fact 12345 about thing12345"
        ]
        assert await store.aget(note_index.index_namespace(user), note_index.REBUILD_KEY) is None  # marker gone


def test_reindex_command_builds_every_users_index_on_postgres(pg, cached_index, monkeypatch, capsys):
    monkeypatch.setenv("POSTGRES_URI", pg.uri)
    # Sparse vectors (about 20 ms per note) are tested in tests/stores/test_splade.py.
    monkeypatch.setattr(sparse_vectors, "sparse_encoder", lambda: None)
    alice, bob = User.of("u_alice"), User.of("bob@example.com")

    async def seed() -> None:
        async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
            await truncate(pg.uri)
            await put_all(store, old_notes(alice, 1200) + old_notes(bob, 3))

    async def head_count(user: User) -> int:
        async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
            head = await store.aget(note_index.index_namespace(user), note_index.HEAD_KEY)
            return -1 if head is None else head.value["count"]

    asyncio.run(seed())
    assert asyncio.run(head_count(bob)) == -1  # precondition: no index
    assert main(["reindex", "--all"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "notes_indexed": {alice.label: 1200, bob.label: 3},
        "sparse_vectors_added": {alice.label: 0, bob.label: 0},
    }
    assert asyncio.run(head_count(bob)) == 3 and asyncio.run(head_count(alice)) == 1200
    assert main(["reindex", "u_alice"]) == 0  # again: rebuilt from the notes, the same
    assert json.loads(capsys.readouterr().out) == {
        "notes_indexed": {"u_alice": 1200},
        "sparse_vectors_added": {"u_alice": 0},
    }
    assert asyncio.run(head_count(alice)) == 1200
    assert main(["reindex"]) == 2


async def test_a_turn_starts_a_failing_rebuild_once_and_keeps_memory(store, user, monkeypatch, caplog):
    await store.abatch(old_notes(user, 30, embedded=True))
    original = note_index.arebuild
    attempts = []

    async def failing(store, user, **kwargs):
        attempts.append(user.label)
        raise RuntimeError("too many bind parameters")

    monkeypatch.setattr(note_index, "arebuild", failing)
    for _ in range(3):
        snap = await aload_snapshot(store, user, "thing7", recent_limit=2, recall_margin=None)
        assert snap["recent"] == []  # no index: no recent list...
        assert "old fact 7 about thing7" in [n["text"] for n in snap["relevant"]]  # ...but memory by meaning
    assert attempts == [user.label]  # once, not on every turn
    (logged,) = [r for r in caplog.records if r.name == note_index.__name__]
    assert logged.getMessage() == "rebuilding the note index of u_zhou failed; run: python -m mnemo reindex"
    assert logged.levelname == "ERROR" and logged.exc_info and logged.exc_info[1].args == ("too many bind parameters",)
    monkeypatch.setattr(note_index, "arebuild", original)
    assert await note_index.arebuild(store, user) == 30  # the migration completes it
    snap = await aload_snapshot(store, user, "", recent_limit=1)
    assert [n["text"] for n in snap["recent"]] == ["old fact 29 about thing29"]
    assert await store.aget(note_index.index_namespace(user), note_index.REBUILD_KEY) is None


async def test_a_rebuild_writes_bounded_batches_head_last(counting_store, user, monkeypatch):
    store = counting_store
    await store.abatch(old_notes(user, 300))
    sizes, original = [], store.abatch

    async def recording(ops):
        ops = list(ops)
        if any(isinstance(op, PutOp) and op.namespace[1] == note_index.NOTE_INDEX for op in ops):
            sizes.append((len(ops), any(op.key == note_index.HEAD_KEY for op in ops if isinstance(op, PutOp))))
        return await original(ops)

    monkeypatch.setattr(store, "abatch", recording)
    assert await note_index.arebuild(store, user, batch=100) == 300
    assert len(sizes) > 3 and max(n for n, _ in sizes) <= 100
    assert [head for _, head in sizes] == [False] * (len(sizes) - 1) + [True]
    # Each item put once (with the marker's removal), and the index is whole.
    items = await store.asearch(note_index.index_namespace(user), limit=10_000)
    assert sum(n for n, _ in sizes) == len(items) + 1
    assert [n["text"] for n in await arecall(store, user, "thing299", limit=1, margin=math.inf)] == [
        "old fact 299 about thing299"
    ]


async def test_a_rebuild_failing_midway_keeps_its_marker_so_no_turn_starts_another(counting_store, user, monkeypatch):
    store = counting_store
    await store.abatch(old_notes(user, 600))  # more index items than one batch of the rebuild
    abatch, index_batches, attempts = store.abatch, [], []

    async def failing(ops):
        ops = list(ops)
        if any(isinstance(op, PutOp) and op.key.startswith("t:") for op in ops):
            index_batches.append(len(ops))
            if len(index_batches) == 2:
                raise RuntimeError("connection lost")
        return await abatch(ops)

    rebuild = note_index.arebuild

    async def counting(*args, **kwargs):
        attempts.append(1)
        return await rebuild(*args, **kwargs)

    monkeypatch.setattr(store, "abatch", failing)
    monkeypatch.setattr(note_index, "arebuild", counting)
    for _ in range(2):
        assert (await aload_snapshot(store, user, "", recent_limit=1))["recent"] == []
    assert len(index_batches) == 2 and attempts == [1]  # the second turn started none
    ns = note_index.index_namespace(user)
    assert await store.aget(ns, note_index.REBUILD_KEY) is not None  # until the migration completes it
    assert await store.aget(ns, note_index.HEAD_KEY) is None


async def test_a_rebuild_keeps_each_terms_most_recent_postings_by_their_time(store, user, monkeypatch):
    monkeypatch.setattr(note_index, "POSTINGS_KEEP", 2)
    ns = user.namespace("notes")
    # Keys in the reverse order of time; a note written around mnemo has no time (the oldest).
    times = {"k0": "2026-01-04T00:00:00", "k1": "2026-01-03T00:00:00", "k2": "2026-01-02T00:00:00", "k3": None}
    for key, at in times.items():
        await store.aput(
            ns, key, {"id": key, "text": f"coffee fact {key}"} | ({"updated_at": at} if at else {}), index=False
        )
    assert await note_index.arebuild(store, user) == 4
    posting = await store.aget(note_index.index_namespace(user), note_index.term_key("coffee"))
    assert posting is not None and posting.value["df"] == 4
    assert [e[0] for e in posting.value["p"]] == ["k1", "k0"]
    head = await store.aget(note_index.index_namespace(user), note_index.HEAD_KEY)
    assert head is not None and [r["id"] for r in head.value["recent"]] == ["k0", "k1", "k2", "k3"]


async def test_a_repair_rebuilds_the_index_from_the_notes_alone(store, user):
    from mnemo import aremember_many

    texts = ["The user's dog is named Biscuit.", "The user likes green tea.", "The user rides a zebra."]
    await aremember_many(store, user, texts)
    notes = user.namespace("notes")
    (zebra,) = [it for it in await store.asearch(notes, limit=5) if "zebra" in it.value["text"]]
    await store.adelete(notes, zebra.key)  # deleted around mnemo: its postings stay
    ns = note_index.index_namespace(user)
    await store.aput(ns, note_index.term_key("tea"), {"df": 3, "p": [["gone", 1, 2]]}, index=False)  # gone wrong
    assert await store.aget(ns, note_index.term_key("zebra")) is not None
    assert await note_index.arebuild(store, user, batch=1) == 2
    # The same index as one built for the two notes where there was none.
    fresh = User.of("u_fresh")
    for it in await store.asearch(notes, limit=5):
        await store.aput(fresh.namespace("notes"), it.key, it.value, index=False)
    assert await note_index.arebuild(store, fresh) == 2

    async def index_of(someone: User) -> dict:
        return {it.key: it.value for it in await store.asearch(note_index.index_namespace(someone), limit=100)}

    repaired = await index_of(user)
    assert repaired == await index_of(fresh) and repaired[note_index.HEAD_KEY]["count"] == 2
    assert note_index.term_key("zebra") not in repaired and note_index.term_key("tea") in repaired


async def test_a_repair_cut_short_leaves_no_head(counting_store, user, monkeypatch):
    from mnemo import aremember

    store = counting_store
    await aremember(store, user, "The user likes green tea.")
    ns = note_index.index_namespace(user)
    assert await store.aget(ns, note_index.HEAD_KEY) is not None
    abatch = store.abatch

    async def failing(ops):
        ops = list(ops)
        if any(isinstance(op, PutOp) and op.key.startswith("t:") for op in ops):
            raise RuntimeError("connection lost")
        return await abatch(ops)

    monkeypatch.setattr(store, "abatch", failing)
    with pytest.raises(RuntimeError):
        await note_index.arebuild(store, user)
    monkeypatch.undo()
    assert await store.aget(ns, note_index.HEAD_KEY) is None  # missing: a turn or the migration builds it again
