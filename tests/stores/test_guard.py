"""mnemo.stores.guard on the platform's own batched store (what ``langgraph
dev`` serves): many users saying the same thing at once lose nothing, though
the store still fails a batch that embeds one text twice (langgraph#8822)."""

from __future__ import annotations

import asyncio

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from harness.store_backends import HashEmbeddings, import_platform_store_module, open_platform_store, platform_index
from mnemo import User, alist_notes, aremember, aremember_many
from mnemo.stores.guard import ATTEMPTS, BASE_DELAY_S, GuardedStore, guarded, indexed_texts, is_duplicate_text_batch
from mnemo.turn.snapshot import aload_snapshot

SAME = "The user prefers concise answers."


class SlowEmbeddings(Embeddings):
    """Hash vectors after a pause, as a real embedder takes a while: operations
    queued meanwhile are merged into the platform store's next batch."""

    def __init__(self) -> None:
        self.inner = HashEmbeddings(384)

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)

    async def aembed_documents(self, texts):
        await asyncio.sleep(0.03)
        return self.inner.embed_documents(texts)

    async def aembed_query(self, text):
        await asyncio.sleep(0.01)
        return self.inner.embed_query(text)


@pytest.fixture
async def platform(tmp_path_factory, tmp_path):
    import_platform_store_module(tmp_path_factory.mktemp("langgraph_api"))
    async with open_platform_store(platform_index(SlowEmbeddings()) | {"dims": 384}, tmp_path) as store:
        yield store


async def rest_put(store, i: int) -> None:
    """What ``PUT /store/items`` does: the platform's single-op ``aput``, queued
    and merged with every other queued operation into one batch."""
    await store.aput((f"u_rest_{i}", "notes"), "imported", {"text": SAME})


async def many_users_say_the_same(store, platform, users):
    """mnemo's writes and reads for ``users`` through ``store``, while API
    clients put the same text on ``platform``; (mnemo outcomes, client outcomes)."""
    mnemo_calls = [
        *(aremember(store, u, SAME) for u in users),
        *(aload_snapshot(store, u, "how should I answer?") for u in users),
        *(aremember_many(store, u, [SAME, f"The user's order of the day is number {i}."]) for i, u in enumerate(users)),
        *(alist_notes(store, u) for u in users),
    ]
    outcomes = await asyncio.gather(*mnemo_calls, *(rest_put(platform, i) for i in range(8)), return_exceptions=True)
    return outcomes[: len(mnemo_calls)], outcomes[len(mnemo_calls) :]


def upstream_errors(outcomes) -> int:
    return sum(isinstance(o, ValueError) and is_duplicate_text_batch(o) for o in outcomes)


async def test_the_upstream_bug_is_still_there(platform):
    """When this fails, langgraph#8822 is fixed: mnemo.stores.guard can go."""
    with pytest.raises(ValueError, match="Number of embeddings") as raised:
        await platform.abatch([PutOp(("a", "notes"), "k", {"text": SAME}), PutOp(("b", "notes"), "k", {"text": SAME})])
    assert is_duplicate_text_batch(raised.value)
    # ...and mnemo's own calls, unguarded, fail with the API clients' batches.
    mnemo, clients = await many_users_say_the_same(platform, platform, [User.of(f"u_raw_{i}") for i in range(16)])
    assert upstream_errors(clients) and upstream_errors(mnemo)


async def test_many_users_saying_the_same_thing_at_once_lose_nothing(platform):
    users = [User.of(f"u_same_{i}") for i in range(40)]
    mnemo, clients = await many_users_say_the_same(guarded(platform), platform, users)
    assert upstream_errors(clients)  # the precondition: batches did collide meanwhile
    assert [o for o in mnemo if isinstance(o, BaseException)] == []
    for i, u in enumerate(users):
        texts = sorted(n["text"] for n in await alist_notes(platform, u))
        assert texts == [SAME, f"The user's order of the day is number {i}."]


async def test_two_parallel_remember_calls_of_one_user_make_one_note(platform):
    user = User.of("u_zhou")
    store = guarded(platform)
    results = await asyncio.gather(aremember(store, user, SAME), aremember(store, user, SAME.lower()))
    assert results[0]["note"]["id"] == results[1]["note"]["id"]
    assert len(await alist_notes(platform, user)) == 1


def test_indexed_texts_are_the_texts_the_store_embeds():
    ops = [
        PutOp(("a",), "1", {"text": "x"}),
        PutOp(("b",), "1", {"text": "x"}),
        PutOp(("a",), "2", {"text": "y"}, index=False),
        PutOp(("a",), "3", None),
        PutOp(("a",), "4", {"value": "no text"}),
        PutOp(("a",), "5", {"text": "z", "indexed_text": "z (in reply to: w)"}, index=["text", "indexed_text"]),
    ]
    assert indexed_texts(ops) == ["x", "z", "z (in reply to: w)"]


# --- the guard's own parts, on fake stores ---------------------------------------

UPSTREAM = "Number of embeddings (1) does not match number of indices (2)"


class FailsOnce(InMemoryStore):
    """Fails its first ``failures`` batches with ``error``, as the platform
    store does on a batch it merged with another caller's same text."""

    def __init__(self, error: Exception, failures: int = 1) -> None:
        super().__init__()
        self.error, self.failures, self.calls = error, failures, 0

    async def abatch(self, ops):
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        return await super().abatch(ops)


@pytest.fixture
def no_pause(monkeypatch):
    monkeypatch.setattr("mnemo.stores.guard.BASE_DELAY_S", 0.0)


async def test_a_batch_failed_by_the_upstream_bug_is_retried(no_pause):
    inner = FailsOnce(ValueError(UPSTREAM))
    await GuardedStore(inner).aput(("u", "notes"), "k", {"text": SAME})
    assert inner.calls == 2  # failed, then retried
    assert (await inner.aget(("u", "notes"), "k")).value == {"text": SAME}


async def test_the_retry_is_bounded_and_only_for_the_upstream_bug(no_pause):
    always = FailsOnce(ValueError(UPSTREAM), failures=100)
    with pytest.raises(ValueError, match="Number of embeddings"):
        await GuardedStore(always).aput(("u", "notes"), "k", {"text": SAME})
    assert always.calls == ATTEMPTS
    other = FailsOnce(ValueError("some other failure"))
    with pytest.raises(ValueError, match="some other failure"):
        await GuardedStore(other).aput(("u", "notes"), "k", {"text": SAME})
    assert other.calls == 1


class MergingStore(InMemoryStore):
    """Batches in flight together are one batch, as the platform store merges
    its callers: two of them putting one text fail with the upstream error."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight: list[set[str]] = []
        self.collisions = 0
        self.most_in_flight = 0

    async def abatch(self, ops):
        ops = list(ops)
        texts = set(indexed_texts(ops))
        clash = any(texts & other for other in self.in_flight)
        self.in_flight.append(texts)
        self.most_in_flight = max(self.most_in_flight, len(self.in_flight))
        try:
            await asyncio.sleep(0.01)  # an embedder's pause: the other caller arrives meanwhile
            if clash:
                self.collisions += 1
                raise ValueError(UPSTREAM)
            return await super().abatch(ops)
        finally:
            self.in_flight.remove(texts)


async def test_batches_putting_one_text_are_never_in_flight_together(no_pause):
    inner = MergingStore()
    store = GuardedStore(inner)
    puts = [store.aput((f"u{i}", "notes"), "k", {"text": SAME}) for i in range(6)]
    others = [store.aput((f"v{i}", "notes"), "k", {"text": f"The user owns {i} bikes."}) for i in range(6)]
    await asyncio.gather(*puts, *others)
    assert inner.most_in_flight >= 6  # the precondition: distinct texts did not wait for each other
    assert inner.collisions == 0
    assert len([it for i in range(6) if (it := await inner.aget((f"u{i}", "notes"), "k"))]) == 6


async def test_the_graph_reaches_its_store_only_through_the_guard(model, index):
    """Every batch a turn sends to the run's store comes from GuardedStore."""
    import sys

    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.agent import builder
    from tests.agent_harness import say

    class Watched(InMemoryStore):
        def __init__(self) -> None:
            super().__init__(index=index)
            self.callers: list[str] = []

        async def abatch(self, ops):
            caller = sys._getframe(1).f_locals.get("self")  # whose method called this one
            self.callers.append(type(caller).__name__)
            return await super().abatch(ops)

    store = Watched()
    agent = builder.compile(checkpointer=InMemorySaver(), store=store)
    await say(agent, "I have two cats and I live in Lyon.")
    await say(agent, "What pets do I have?", memory_write_mode="hot")
    assert len(store.callers) > 3  # the precondition: the turns read and wrote memory
    assert set(store.callers) == {"GuardedStore"}


async def test_the_pauses_between_attempts_are_jittered_and_bounded(monkeypatch, caplog):
    """Each pause is drawn from [0, BASE_DELAY_S * 2**attempt]: recorded, not slept."""
    import logging
    import types

    import mnemo.stores.guard as guard

    pauses: list[float] = []
    bounds: list[tuple[float, float]] = []

    async def record(seconds: float) -> None:
        pauses.append(seconds)

    def top_of(lo: float, hi: float) -> float:
        bounds.append((lo, hi))
        return hi

    monkeypatch.setattr(guard, "asyncio", types.SimpleNamespace(sleep=record, Lock=asyncio.Lock))
    monkeypatch.setattr(guard.random, "uniform", top_of)
    caplog.set_level(logging.INFO, logger="mnemo.stores.guard")
    with pytest.raises(ValueError, match="Number of embeddings"):
        await GuardedStore(FailsOnce(ValueError(UPSTREAM), failures=100)).aput(("u", "notes"), "k", {"text": SAME})
    assert bounds == [(0, BASE_DELAY_S * 2**i) for i in range(ATTEMPTS - 1)]
    assert pauses == [hi for _, hi in bounds] and sum(pauses) <= 1.3
    assert [r.getMessage() for r in caplog.records] == [
        f"store batch hit langgraph#8822 (a text put twice); retrying ({i})" for i in range(1, ATTEMPTS)
    ]


def test_one_wrapper_per_store_showing_the_stores_ttl_support():
    class WithTtl(InMemoryStore):
        supports_ttl = True

    inner = WithTtl()
    inner.ttl_config = {"default_ttl": 5.0}
    wrapper = guarded(inner)
    assert isinstance(wrapper, GuardedStore) and wrapper is guarded(inner) and guarded(wrapper) is wrapper
    assert (wrapper.supports_ttl, wrapper.ttl_config) == (True, {"default_ttl": 5.0})


async def test_the_guard_refuses_what_postgresql_cannot_store_before_the_platform_store_sees_it(platform):
    """The platform's InMemoryStore keeps (or answers "not found" for) a key or
    filter that is not text; through the guard it is refused, saying why."""
    from langgraph.store.base import SearchOp

    from mnemo import UnstorableValueError, aforget

    user = User.of("u_surrogate")
    store = guarded(platform)
    await aremember(store, user, "The user likes tea.")
    assert len(await alist_notes(store, user)) == 1  # the store answers this user's reads
    with pytest.raises(UnstorableValueError, match="not valid Unicode"):
        await aforget(store, user, note_id="\ud800")
    with pytest.raises(UnstorableValueError, match="not valid Unicode"):
        await store.abatch([SearchOp(user.namespace("notes"), filter={"id": "\ud800"})])
    with pytest.raises(UnstorableValueError, match="NUL"):
        await store.abatch([PutOp(user.namespace("notes"), "k", {"text": "a\x00b"}, index=False)])
    assert len(await alist_notes(store, user)) == 1
