"""One conformance suite for every store backend mnemo supports.

Each behaviour of the memory package runs against the in-memory store and the
embedded PostgreSQL (pgvector, HNSW/cosine), both opened through
:func:`mnemo.stores.open_store` exactly as the application opens them. The
PostgreSQL server is started once per session in a temporary directory; the
``store`` table is truncated before every test.

If the embedded PostgreSQL cannot start, the PostgreSQL tests **error** (CI
fails); set ``MNEMO_SKIP_POSTGRES=1`` to skip them deliberately.

The embedder is the real one (multilingual-e5-small) behind a cache, so each
text is embedded once per session whichever backend asks first.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import psycopg
import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import InvalidNamespaceError, PutOp

from mnemo import (
    InvalidInputError,
    MissingUserError,
    POLICIES_NAMESPACE,
    User,
    aforget,
    aget_profile,
    alist_notes,
    arecall,
    arecent,
    aremember,
    aremember_many,
    aseed_policies,
    asearch_policies,
    aupdate_profile,
    load_policy_file,
    user_label,
)
from mnemo import pgserver
from mnemo._store import alist_all, alist_users
from mnemo.embeddings import embeddings as e5
from mnemo.embeddings import index_config
from mnemo.snapshot import aload_snapshot
from mnemo.stores import (
    HNSW_EF_SEARCH,
    DimsMismatchError,
    StoreClosedError,
    UnstorableValueError,
    open_checkpointer,
    open_store,
)

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["memory", "postgres"]
#: Sweep every second so TTL tests take seconds, not minutes.
FAST_TTL = {"sweep_interval_minutes": 1 / 60}


class CachedEmbeddings(Embeddings):
    """The real embedder, each distinct text embedded once per session."""

    def __init__(self, inner: Embeddings):
        self.inner, self.docs, self.queries = inner, {}, {}

    def embed_documents(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.docs]
        if missing:
            self.docs.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self.docs[t] for t in texts]

    def embed_query(self, text):
        if text not in self.queries:
            self.queries[text] = self.inner.embed_query(text)
        return self.queries[text]

    async def aembed_documents(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.docs]
        if missing:
            self.docs.update(zip(missing, await self.inner.aembed_documents(missing), strict=True))
        return [self.docs[t] for t in texts]

    async def aembed_query(self, text):
        if text not in self.queries:
            self.queries[text] = await self.inner.aembed_query(text)
        return self.queries[text]


class HashEmbeddings(Embeddings):
    """Deterministic unit vectors of any size (for tests that need no meaning)."""

    def __init__(self, dims: int):
        self.dims = dims

    def _vec(self, text: str) -> list[float]:
        raw = hashlib.sha256(text.encode()).digest() * (self.dims // 32 + 1)
        v = [b - 127.5 for b in raw[: self.dims]]
        norm = sum(x * x for x in v) ** 0.5
        return [x / norm for x in v]

    def embed_documents(self, texts):
        return [self._vec(t) for t in texts]

    def embed_query(self, text):
        return self._vec(text)


def skip_postgres() -> bool:
    return os.environ.get("MNEMO_SKIP_POSTGRES") == "1"


@pytest.fixture(scope="session")
def index():
    """Overrides conftest's: the same model, cached across backends."""
    return index_config(CachedEmbeddings(e5))


@pytest.fixture(scope="session")
def pg(tmp_path_factory):
    """The embedded PostgreSQL, started once; an error here fails the suite."""
    if skip_postgres():
        pytest.skip("MNEMO_SKIP_POSTGRES=1")
    server = pgserver.start(tmp_path_factory.mktemp("pg") / "data", database="conformance", cleanup="delete")
    yield server
    server.stop()


@pytest.fixture(params=BACKENDS)
def backend(request) -> str:
    return request.param


@pytest.fixture
def uri(backend, request) -> str | None:
    """``None`` for the in-memory store, else the PostgreSQL URI."""
    return request.getfixturevalue("pg").uri if backend == "postgres" else None


async def truncate(uri: str) -> None:
    async with await psycopg.AsyncConnection.connect(uri, autocommit=True) as conn:
        await conn.execute("TRUNCATE store CASCADE")


@pytest.fixture
async def store(uri, index):
    async with open_store(postgres_uri=uri, index=index, ttl=FAST_TTL) as opened:
        if uri is not None:
            await truncate(uri)
        yield opened


async def raw_count(store, uri: str | None, namespace: tuple[str, ...]) -> int:
    """Items physically present (PostgreSQL rows / in-memory dict), bypassing
    every read path (and so every TTL filter)."""
    if uri is None:
        return len(store._data.get(namespace, {}))
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        row = await (await conn.execute("SELECT count(*) FROM store WHERE prefix = %s", (".".join(namespace),))).fetchone()
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


async def test_recall_by_meaning_across_languages(store, user):
    await aremember_many(store, user, ["The user is allergic to peanuts.", "The user owns a Xiaomi air purifier.",
                                       "The user's daughter is called Mia."])
    hits = await arecall(store, user, "what food allergies do I have?")
    assert hits and hits[0]["text"] == "The user is allergic to peanuts."
    zh = await arecall(store, user, "我家的净化器是什么牌子")
    assert zh[0]["text"] == "The user owns a Xiaomi air purifier."


async def test_forget_by_id_and_by_meaning_and_never_across_users(store, user):
    a = (await aremember(store, user, "The user has two cats."))["note"]
    await aremember_many(store, user, ["The user lives near the sea.", "The user prefers email contact."])
    assert await aforget(store, User.of("someone_else"), note_id=a["id"]) == []
    assert [n["text"] for n in await aforget(store, user, note_id=a["id"])] == ["The user has two cats."]
    assert [n["text"] for n in await aforget(store, user, about="living near the sea")] == ["The user lives near the sea."]
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user prefers email contact."]


async def test_listing_pages_past_every_backend_limit(store, user):
    ns = user.namespace("notes")
    await store.abatch([
        PutOp(ns, f"k{i:03d}", {"id": f"k{i:03d}", "text": f"fact {i}", "updated_at": f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}"}, index=False)
        for i in range(150)
    ])
    notes = await alist_notes(store, user)
    assert len(notes) == 150  # > the store default of 10 and > mnemo's page of 100
    assert notes[0]["text"] == "fact 149" and notes[-1]["text"] == "fact 0"
    assert len(await store.asearch(ns)) == 10  # the trap mnemo avoids, on every backend
    snap = await aload_snapshot(store, user, "", recent_limit=2)
    assert [n["text"] for n in snap["recent"]] == ["fact 149", "fact 148"]


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
    await aupdate_profile(store, gone, {"city": "Paris"})
    await aupdate_profile(store, gone, {}, forget=["city"])  # an emptied namespace
    await aremember(store, User.of("alive"), "Likes tea.")
    await aseed_policies(store, load_policy_file()[:2])
    roots = {ns[0] for ns in await store.alist_namespaces(max_depth=1)}
    if backend == "memory":
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
    assert sorted(await alist_users(store)) == sorted(user_label(r) for r in ["zhou.wang@x.com", "小周", "org", "x" * 200])
    with pytest.raises(MissingUserError):
        User.of("  ")
    with pytest.raises(InvalidNamespaceError, match="periods"):
        await store.aput(("zhou.wang@x.com", "notes"), "k", {"text": "x"}, index=False)
    with pytest.raises(InvalidNamespaceError, match="periods"):  # also when the op skips put()
        await store.abatch([PutOp(("zhou.wang@x.com", "notes"), "k", {"text": "x"}, index=False)])
    with pytest.raises(InvalidNamespaceError, match="langgraph"):
        await store.aput(("langgraph", "notes"), "k", {"text": "x"}, index=False)


async def test_values_postgresql_cannot_store_fail_the_same_on_every_backend(store, user):
    """InMemoryStore would keep them; PostgreSQL's jsonb/text would raise a
    driver error. mnemo refuses them up front, with the same error, on both."""
    ns = user.namespace("notes")
    for bad in ({"text": "a\x00b"}, {"text": "\ud800"}, {"x": float("nan")}, {"x": {1: "int key"}}, {"x": {1, 2}}):
        with pytest.raises(UnstorableValueError):
            await store.aput(ns, "k", bad, index=False)
    with pytest.raises(UnstorableValueError, match="NUL"):
        await aremember(store, user, "a note with a \x00 inside")
    assert await alist_notes(store, user) == []


# --------------------------------------------------------------------------- values


VALUE = {
    "text": "用户喜欢喝☕ and 🐼; family: 👨‍👩‍👧 👍🏽 — «ok»\n\ttab \"quoted\" \\ backslash",
    "nested": {"深": {"层": [1, 2.5, -0.001, None, True, False, {"emoji🔑": "值"}]}, "empty": {}, "list": []},
    "big": 2**62,
    "tuple": (1, "two"),
}


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


async def test_same_top_hits_on_both_backends(index, pg):
    notes = ["The user is allergic to peanuts.", "The user owns a Xiaomi air purifier.", "用户住在杭州西湖区。",
             "The user's daughter is called Mia.", "The user prefers email over phone calls.", "用户每周三去游泳。"]
    queries = ["what food allergies do I have?", "我住在哪里", "how should you contact me", "我有什么运动习惯"]
    user = User.of("u_same")
    results = {}
    for uri in (None, pg.uri):
        async with open_store(postgres_uri=uri, index=index) as store:
            if uri:
                await truncate(uri)
            await aremember_many(store, user, notes)
            results[uri] = [await arecall(store, user, q, limit=3, min_score=0.0) for q in queries]
    memory, postgres = results[None], results[pg.uri]
    for q, m, p in zip(queries, memory, postgres, strict=True):
        assert [n["text"] for n in m] == [n["text"] for n in p], q
        # Same vectors, same cosine (pgvector stores float4): equal to 1e-4. Before
        # mnemo's QueryAwareEmbeddings, PostgreSQL embedded queries as passages
        # and these differed by ~0.015.
        assert [n["score"] for n in m] == pytest.approx([n["score"] for n in p], abs=1e-4), q
    assert memory[0][0]["text"] == "The user is allergic to peanuts."
    assert memory[1][0]["text"] == "用户住在杭州西湖区。"


async def test_dims_mismatch_is_a_loud_error_at_startup(uri, index):
    with pytest.raises(DimsMismatchError, match="384-dimensional"):
        async with open_store(postgres_uri=uri, index={**index, "dims": 256}):
            pytest.fail("a store opened with the wrong dims")


async def test_postgres_database_indexed_with_another_model_is_refused(pg, index):
    uri = pg.create_database("other_model")
    async with open_store(postgres_uri=uri, index={"embed": HashEmbeddings(16), "dims": 16, "fields": ["text"]}) as store:
        await store.aput(("u", "notes"), "k", {"text": "indexed with a 16-dimensional model"})
    with pytest.raises(DimsMismatchError, match=r"vector\(16\)"):
        async with open_store(postgres_uri=uri, index=index):
            pytest.fail("opened a vector(16) database with a 384-dimensional model")
    pg.drop_database("other_model")


async def test_postgres_index_is_hnsw_cosine_and_iterative(pg, index):
    async with open_store(postgres_uri=pg.uri, index=index) as store:
        async with store.conn.connection() as conn:
            row = await (await conn.execute(
                "SELECT indexdef FROM pg_indexes WHERE indexname = 'store_vectors_embedding_idx'")).fetchone()
            assert "hnsw" in row["indexdef"] and "vector_cosine_ops" in row["indexdef"]
            assert (await (await conn.execute("SHOW hnsw.iterative_scan")).fetchone())["hnsw.iterative_scan"] == "strict_order"
            assert (await (await conn.execute("SHOW hnsw.ef_search")).fetchone())["hnsw.ef_search"] == str(HNSW_EF_SEARCH)


# --------------------------------------------------------------------------- TTL


async def seconds_left(store, uri: str | None, namespace: tuple[str, ...], key: str) -> float:
    """Time to an item's TTL deadline, read from storage (no refresh)."""
    if uri is None:
        return store._deadlines[(namespace, key)][0] - time.time()
    async with await psycopg.AsyncConnection.connect(uri) as conn:
        row = await (await conn.execute(
            "SELECT extract(epoch FROM expires_at - now()) FROM store WHERE prefix = %s AND key = %s",
            (".".join(namespace), key))).fetchone()
    return float(row[0])


async def test_time_bound_memories_expire_and_are_swept(store, uri):
    """``ttl`` is in minutes. An expired item is invisible at once
    (``omit_expired``) and the sweeper task deletes it."""
    ns = ("u_ttl", "now")
    await store.aput(ns, "order", {"text": "asking about order 42"}, index=False, ttl=2 / 60)
    await store.aput(ns, "durable", {"text": "no ttl"}, index=False)
    assert {it.key for it in await store.asearch(ns, refresh_ttl=False)} == {"order", "durable"}
    await asyncio.sleep(2.5)
    assert {it.key for it in await store.asearch(ns, refresh_ttl=False)} == {"durable"}
    # Nothing touches the store while we wait: only the sweeper can delete the row.
    await asyncio.sleep(2.0)
    assert await raw_count(store, uri, ns) == 1


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


async def test_store_is_unusable_after_its_block(uri, index):
    async with open_store(postgres_uri=uri, index=index) as store:
        await store.aput(("u", "notes"), "k", {"text": "x"}, index=False)
    with pytest.raises(StoreClosedError):
        await store.asearch(("u", "notes"))


# --------------------------------------------------------------------------- checkpointer


async def test_postgres_checkpointer_keeps_threads_across_reopen(pg):
    from typing import TypedDict

    from langgraph.graph import END, START, StateGraph

    class S(TypedDict):
        n: int

    builder = StateGraph(S)
    builder.add_node("inc", lambda s: {"n": s["n"] + 1})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", END)
    config = {"configurable": {"thread_id": f"t-{time.time_ns()}"}}
    async with open_checkpointer(postgres_uri=pg.uri) as saver:
        assert (await builder.compile(checkpointer=saver).ainvoke({"n": 41}, config))["n"] == 42
    async with open_checkpointer(postgres_uri=pg.uri) as saver:
        assert (await builder.compile(checkpointer=saver).aget_state(config)).values == {"n": 42}


# --------------------------------------------------------------------------- durability

WRITER = r"""
import asyncio, hashlib, sys
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp
from mnemo.stores import open_store

class HashEmbeddings(Embeddings):
    def _vec(self, text):
        raw = hashlib.sha256(text.encode()).digest()[:16]
        return [b / 255 + 0.01 for b in raw]
    def embed_documents(self, texts): return [self._vec(t) for t in texts]
    def embed_query(self, text): return self._vec(text)

async def main(uri, phase):
    index = {"embed": HashEmbeddings(), "dims": 16, "fields": ["text"]}
    async with open_store(postgres_uri=uri, index=index, pool_config={"max_size": 2}) as store:
        print("ready", flush=True)
        for batch in range(1_000_000):
            ops = [PutOp(("dur", phase), f"{batch:07d}-{j}", {"text": f"{phase} batch {batch} item {j} 数据 🐘",
                                                               "batch": batch, "pad": "x" * 500}) for j in range(3)]
            await store.abatch(ops)
            print(f"ack {batch}", flush=True)  # acknowledged: abatch returned

asyncio.run(main(sys.argv[1], sys.argv[2]))
"""


def _start_writer(uri: str, phase: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, uri, phase], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)


def _read_acks(proc: subprocess.Popen, until: int, timeout: float = 60) -> list[int]:
    acks: list[int] = []
    deadline = time.monotonic() + timeout
    while len(acks) < until:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"writer exited early:\n{proc.stderr.read()[-3000:]}")
        if line.startswith("ack "):
            acks.append(int(line.split()[1]))
        assert time.monotonic() < deadline, "writer too slow"
    return acks


def _check_acknowledged(uri: str, phase: str, acks: list[int]) -> None:
    with psycopg.connect(uri) as conn:
        rows = conn.execute("SELECT key, value FROM store WHERE prefix = %s", (f"dur.{phase}",)).fetchall()
        vectors = {k for (k,) in conn.execute("SELECT key FROM store_vectors WHERE prefix = %s", (f"dur.{phase}",))}
    batches: dict[int, int] = {}
    for key, value in rows:
        assert value["text"].startswith(f"{phase} batch {value['batch']} item") and value["pad"] == "x" * 500
        assert key in vectors, f"{key} was written without its vector"
        batches[value["batch"]] = batches.get(value["batch"], 0) + 1
    missing = [b for b in acks if batches.get(b) != 3]
    assert not missing, f"acknowledged batches lost or partial: {missing[:10]}"
    assert all(n == 3 for n in batches.values()), "a batch was half-written"
    print(f"{phase} crash: {len(acks)} batches acknowledged, all present; "
          f"{len(batches) - len(set(acks))} more committed but not yet acknowledged")


def _kill_postgres(pid: int) -> None:
    """SIGKILL the postmaster and every backend: a power cut, not a shutdown."""
    root = psutil.Process(pid)
    procs = [root, *root.children(recursive=True)]
    for p in procs:
        try:
            p.send_signal(signal.SIGKILL)
        except psutil.NoSuchProcess:
            pass
    psutil.wait_procs(procs, timeout=10)


@pytest.mark.skipif(skip_postgres(), reason="MNEMO_SKIP_POSTGRES=1")
def test_sigkill_mid_stream_loses_no_acknowledged_write(tmp_path):
    datadir = tmp_path / "pgdata"
    server = pgserver.start(datadir, database="durable", cleanup="delete")
    try:
        # 1. The writing process dies.
        writer = _start_writer(server.uri, "client")
        acks = _read_acks(writer, until=40)
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate(timeout=30)
        acks += [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]
        _check_acknowledged(server.uri, "client", acks)

        # 2. The database server dies (every postgres process, SIGKILL), then restarts.
        writer = _start_writer(server.uri, "server")
        acks = _read_acks(writer, until=40)
        _kill_postgres(server.pid)
        out, err = writer.communicate(timeout=60)
        assert writer.returncode != 0, "the writer must notice the server is gone"
        acks += [int(line.split()[1]) for line in out.splitlines() if line.startswith("ack ")]
        server = pgserver.start(datadir, database="durable", cleanup="delete")  # crash recovery
        _check_acknowledged(server.uri, "server", acks)
        assert len(acks) >= 40
    finally:
        server.stop()


async def test_time_bound_notes_are_hidden_by_mnemo_and_swept(store, uri, user, monkeypatch):
    """mnemo's own ``expires_at`` hides a time-bound note at once on every
    backend (PostgreSQL's TTL is refreshed by reads), and load_memory's read
    deletes it. Time moves through ``mnemo.expiry.clock``."""
    from datetime import UTC, datetime, timedelta

    from mnemo import expiry
    from mnemo.snapshot import aload_snapshot

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
