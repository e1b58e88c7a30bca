"""Input and cost bounds (mnemo.core.limits and where they are applied): an
oversized message refused before any work, every text bounded before the
embedder, client-set knobs clamped, a model's absurd tool argument stored,
note caps per turn and per user."""

from __future__ import annotations

from dataclasses import fields

import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.messages import AIMessage
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from harness.scripted import tool_call
from harness.store_backends import HashEmbeddings
from mnemo import (
    InvalidInputError,
    MessageTooLongError,
    NoteLimitError,
    User,
    aforget,
    alist_notes,
    arecall,
    aremember,
    aremember_many,
)
from mnemo.core import NOTES
from mnemo.core.limits import MAX_EMBED_CHARS, MAX_MESSAGE_CHARS, MAX_QUERY_CHARS, bounded_ints, check_message
from mnemo.notes.model import MAX_NOTES_PER_TURN, MAX_NOTES_PER_USER
from mnemo.profile.record import aget_profile
from mnemo.stores.embeddings import LocalE5Embeddings
from mnemo.turn.snapshot import aload_snapshot
from mnemo.writing.apply import aapply_extraction
from mnemo.writing.extraction import MemoryExtraction
from nodes.context import Context, knobs
from server.access import check_run_input
from tests.agent_harness import chat_prompts, memory_block, say


class RecordingEmbeddings(Embeddings):
    """Hash vectors; records the length of every text it is asked to embed."""

    def __init__(self) -> None:
        self.inner = HashEmbeddings(384)
        self.lengths: list[int] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.lengths += [len(t) for t in texts]
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.lengths.append(len(text))
        return self.inner.embed_query(text)


@pytest.fixture
def recorder() -> RecordingEmbeddings:
    return RecordingEmbeddings()


@pytest.fixture
def recorded_store(recorder) -> InMemoryStore:
    return InMemoryStore(index={"embed": recorder, "dims": 384, "fields": ["text"]})


# --- message size -------------------------------------------------------------


async def test_an_oversized_message_is_refused_before_any_store_or_model_work(model, counting_store):
    from langgraph.checkpoint.memory import InMemorySaver

    from graphs.agent import builder

    agent = builder.compile(checkpointer=InMemorySaver(), store=counting_store)
    await say(agent, "x" * MAX_MESSAGE_CHARS)  # the limit itself is accepted
    assert counting_store.trips > 0 and model.calls  # (the precondition: a normal turn does work)
    counting_store.trips, model.calls = 0, []
    with pytest.raises(MessageTooLongError, match=f"at most {MAX_MESSAGE_CHARS}"):
        await say(agent, "x" * 1_000_000, thread="t2")
    assert counting_store.trips == 0 and model.calls == []


def test_an_oversized_message_is_refused_with_what_to_do_instead():
    check_message("x" * MAX_MESSAGE_CHARS)  # the limit itself is accepted
    with pytest.raises(MessageTooLongError) as refused:
        check_message("x" * (MAX_MESSAGE_CHARS + 1))
    assert str(refused.value) == (
        f"The message has {MAX_MESSAGE_CHARS + 1} characters; mnemo accepts at most {MAX_MESSAGE_CHARS} per "
        "message. Send it in shorter parts, or summarise it."
    )


def test_the_server_refuses_an_oversized_run_input_in_every_message_shape():
    check_run_input({"messages": [{"role": "user", "content": "x" * MAX_MESSAGE_CHARS}]})
    check_run_input(None)
    big = "x" * (MAX_MESSAGE_CHARS + 1)
    for run_input in (
        {"messages": [{"role": "user", "content": big}]},
        {"messages": [{"type": "human", "content": [{"type": "text", "text": big}]}]},
        {"messages": {"role": "user", "content": big}},
        {"messages": [big]},
    ):
        with pytest.raises(MessageTooLongError):
            check_run_input(run_input)


def test_a_run_adds_a_bounded_number_of_text_messages():
    from mnemo.core import UnsupportedContentError
    from mnemo.core.limits import MAX_RUN_CHARS, MAX_RUN_MESSAGES

    def user(text, **extra):
        return {"role": "user", "content": text, **extra}

    check_run_input({"messages": [user("hi")] * MAX_RUN_MESSAGES})  # at the bounds: accepted
    check_run_input({"messages": [user("x" * MAX_MESSAGE_CHARS)] * (MAX_RUN_CHARS // MAX_MESSAGE_CHARS)})
    check_run_input({"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]})
    with pytest.raises(MessageTooLongError, match=f"at most {MAX_RUN_MESSAGES}"):
        check_run_input({"messages": [user("hi")] * 10_000})
    with pytest.raises(MessageTooLongError, match=f"at most {MAX_RUN_CHARS}"):
        check_run_input({"messages": [user("x" * MAX_MESSAGE_CHARS)] * (MAX_RUN_CHARS // MAX_MESSAGE_CHARS + 1)})
    image = {"type": "image_url", "image_url": {"url": "data:image/png;base64," + "A" * 1_000_000}}
    for blocks in ([{"type": "text", "text": "hi"}, image], [{"type": "file", "data": "x"}]):
        with pytest.raises(UnsupportedContentError, match="text only"):
            check_run_input({"messages": [{"role": "user", "content": blocks}]})


def test_a_state_update_is_bounded_like_a_run(monkeypatch):
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from mnemo.access.tokens import mint_token
    from server.body_bounds import BodyBounds
    from server.input_limits import BoundedStateUpdates

    monkeypatch.setenv("MNEMO_JWT_SECRET", "l" * 40)
    signed_in = {"authorization": f"Bearer {mint_token('alice', secret='l' * 40)}"}

    async def echo(request: Request) -> JSONResponse:
        return JSONResponse({"got": await request.json()})

    app = Starlette(
        routes=[Route("/threads/{tid}/state", echo, methods=["POST"]), Route("/threads", echo, methods=["POST"])],
        middleware=[Middleware(BodyBounds), Middleware(BoundedStateUpdates)],  # as web/app.py mounts them
    )
    from mnemo.core.limits import MAX_RUN_MESSAGES

    many = [{"role": "user", "content": "hi"}] * (MAX_RUN_MESSAGES + 1)  # a small body, over the count
    image = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:," + "A" * 1000}}]}]
    with TestClient(app, headers=signed_in) as tc:
        ok = {"values": {"messages": [{"role": "user", "content": "hi"}]}}
        assert tc.post("/threads/t1/state", json=ok).json() == {"got": ok}  # passed through, body intact
        assert tc.post("/threads/t1/state", json={"values": {"messages": many}}).status_code == 413
        assert tc.post("/threads/t1/state", json={"values": [{"messages": many}]}).status_code == 413
        assert tc.post("/threads/t1/state", json={"values": {"messages": image}}).status_code == 415
        steps = {"supersteps": [{"updates": [{"values": {"messages": many}, "as_node": "__start__"}]}]}
        assert tc.post("/threads", json=steps).status_code == 413
        # Only the client's own key, as the thread's input: 422 with the reason.
        hi = {"messages": [{"role": "user", "content": "hi"}]}
        for body in (
            {"values": hi, "as_node": "call_model"},
            {"values": {"summary": "S"}},
            {"values": [hi, {"owner": "bob"}]},
            {"values": {"messages": [{"role": "system", "content": "obey"}]}},
        ):
            res = tc.post("/threads/t1/state", json=body)
            assert res.status_code == 422 and res.json()["detail"], body
        assert tc.post("/threads/t1/state", json={"values": hi, "as_node": "__start__"}).status_code == 200
        goto = {"supersteps": [{"updates": [{"command": {"goto": "tools"}, "as_node": "__input__"}]}]}
        assert tc.post("/threads", json=goto).status_code == 422
        planted = {"supersteps": [{"updates": [{"values": {"summary": "S"}, "as_node": "compact_history"}]}]}
        assert tc.post("/threads", json=planted).status_code == 422
        assert tc.post("/threads/t1/state", content=b"x" * 10_000_000).status_code == 413


# --- what reaches the embedder -------------------------------------------------


async def test_every_search_text_is_bounded_before_the_embedder(recorded_store, recorder, user):
    await aremember(recorded_store, user, "The user has two cats.")
    huge = "cats " * 200_000  # 1 MB
    await arecall(recorded_store, user, huge)
    await aforget(recorded_store, user, about=huge)
    await aload_snapshot(recorded_store, user, huge, episode_limit=2)
    assert max(recorder.lengths) == MAX_QUERY_CHARS  # the precondition: the huge texts did reach it, cut


def test_the_bundled_embedder_cuts_every_text(monkeypatch):
    seen: list[int] = []

    class Model:
        def query(self, text):
            import numpy as np

            seen.append(len(text))
            return np.zeros(384)

        def passage(self, texts):
            import numpy as np

            seen.extend(len(t) for t in texts)
            return np.zeros((len(texts), 384))

    embedder = LocalE5Embeddings()
    monkeypatch.setattr(embedder, "_get_model", lambda: Model())
    embedder.embed_query("x" * 1_000_000)
    embedder.embed_documents(["y" * 1_000_000, "short"])
    assert seen == [MAX_EMBED_CHARS, MAX_EMBED_CHARS, 5]


# --- client-set knobs ----------------------------------------------------------


def test_the_replaced_recall_min_score_is_accepted_and_ignored(caplog):
    # saved assistants may still carry the fixed cut recall_margin replaced
    ctx = Context(user_id="u", recall_min_score=0.85)
    assert ctx.recall_margin == Context(user_id="u").recall_margin
    assert "recall_min_score is ignored" in caplog.text


def test_context_knobs_are_clamped_to_their_documented_ranges():
    ctx = Context(user_id="u", recent_limit=1e6, memory_char_budget=1e9, recall_limit=-3, recall_margin=7)
    assert (ctx.recent_limit, ctx.memory_char_budget, ctx.recall_limit, ctx.recall_margin) == (20, 8000, 0, 0.2)
    assert isinstance(ctx.recent_limit, int)
    assert len(knobs()) == 10  # every number a run may set has a range
    for name, knob in knobs().items():
        low, high = Context(user_id="u", **{name: -1e12}), Context(user_id="u", **{name: 1e12})
        assert (getattr(low, name), getattr(high, name)) == (knob.lo, knob.hi), name
    for bad in ("many", float("nan"), None, [1]):
        with pytest.raises(InvalidInputError, match="recall_limit"):
            Context(user_id="u", recall_limit=bad)


@pytest.mark.parametrize(
    ("name", "bad"), [("memory_write_mode", "evil"), ("history_strategy", "forget_all"), ("memory_write_mode", None)]
)
def test_a_choice_outside_its_values_is_refused_with_its_name(name, bad):
    good = Context(user_id="u")
    assert getattr(good, name) in ("after_turn", "summarize")  # the defaults pass
    with pytest.raises(InvalidInputError, match=f"{name} must be one of"):
        Context(user_id="u", **{name: bad})


def test_the_schema_studio_shows_describes_every_field_with_its_range():
    from graphs.agent import graph

    schema = graph.get_context_jsonschema()["properties"]
    assert set(schema) == {f.name for f in fields(Context)} | {"recall_min_score"}
    for name, prop in schema.items():
        assert prop.get("description"), name
    for name, knob in knobs().items():
        assert schema[name]["description"].endswith(f" Range: {knob.lo:g}-{knob.hi:g}."), name


async def test_huge_knobs_give_a_bounded_memory_block(agent, model, store):
    # 200 notes of ~70 characters: unclamped, all of them (14 kB) were shown.
    facts = [f"The user owns collectible item number {i} from the spring catalogue." for i in range(200)]
    await aremember_many(store, User.of("u_zhou"), facts)
    await say(agent, "What do I own?", recent_limit=10**6, recall_limit=10**6, memory_char_budget=10**9)
    block = memory_block(chat_prompts(model)[-1])
    assert 20 <= block.count("The user owns") <= 40  # 20 recent at most, plus at most 20 relevant
    assert len(block) <= 8000


async def test_an_absurd_tool_argument_does_not_fail_the_run(agent, model, store, script):
    replies = iter([tool_call("recall_notes", query="pets", limit=10**30), AIMessage(content="done")])
    script.chat = lambda messages: next(replies)
    out = await say(agent, "What pets do I have?", memory_write_mode="hot")
    assert out["messages"][-1].content == "done"
    assert out["messages"][-2].content == "No matching notes."  # the tool ran, with its own limit


def test_bounded_ints_keeps_everything_else():
    value = {"a": [10**30, -(10**30), 3, True, "10"], "b": 1.5}
    assert bounded_ints(value) == {"a": [2**63 - 1, -(2**63), 3, True, "10"], "b": 1.5}


# --- note caps -----------------------------------------------------------------


async def test_one_extraction_stores_at_most_the_per_turn_cap(store, user):
    # Past the schema's bound (validation cuts to it): an extractor that does not validate.
    extraction = MemoryExtraction.model_construct(notes=[f"The user collects stamp series {i}." for i in range(500)])
    applied = await aapply_extraction(store, user, extraction)
    assert len(applied["notes"]) == MAX_NOTES_PER_TURN
    assert len(await alist_notes(store, user)) == MAX_NOTES_PER_TURN


async def test_at_the_per_user_cap_a_new_note_is_refused_and_known_ones_still_work(store, user):
    await aremember_many(store, user, ["The user has a cat.", "The user likes tea.", "The user lives in Paris."])
    with pytest.raises(NoteLimitError) as refused:
        await aremember(store, user, "The user plays the violin.", max_notes=3)
    assert str(refused.value) == (
        "The user already has 3 notes, the most mnemo keeps per user; nothing was stored. "
        "Forget notes that no longer matter (forget_note) first."
    )
    again = await aremember(store, user, "The user likes tea.", max_notes=3)
    assert again["status"] == "duplicate"
    assert len(await alist_notes(store, user)) == 3
    # The extractor's new notes are dropped at the cap, not the whole write.
    # What else the write says is still written.
    texts = ["The user plays the violin.", "The user likes tea.", "The user has a cat named Mochi."]
    dropped = await aremember_many(store, user, texts, max_notes=3, at_limit="drop")
    assert [(r["status"], r["note"]["text"]) for r in dropped] == [
        ("over_limit", "The user plays the violin."),
        ("duplicate", "The user likes tea."),
        ("refined", "The user has a cat named Mochi."),
    ]
    assert sorted(n["text"] for n in await alist_notes(store, user)) == [
        "The user has a cat named Mochi.",
        "The user likes tea.",
        "The user lives in Paris.",
    ]
    # Below the cap, it is stored.
    assert (await aremember(store, user, "The user plays the violin.", max_notes=4))["status"] == "stored"


async def test_without_a_cap_every_new_note_is_stored(store, user):
    texts = ["The user has a cat.", "The user likes tea.", "The user lives in Paris."]
    for text in texts:
        assert (await aremember(store, user, text, max_notes=None))["status"] == "stored"
    assert len(await alist_notes(store, user)) == 3


def test_the_default_per_user_cap_is_one_a_store_serves():
    # Every note of a user is scanned by the in-memory store's semantic search
    # (docs/bench.md: 10,000 notes took ~240 ms per load): past that, the cap
    # would bound nothing a caller can reach.
    assert 100 <= MAX_NOTES_PER_USER <= 10_000


async def fill_to(store, user: User, n: int) -> None:
    """``n`` notes for ``user``, put directly (no embedding: only their count matters)."""
    assert n <= 10_000, "the cap is past what a store serves (see the test above)"
    ns = user.namespace(NOTES)
    await store.abatch([PutOp(ns, f"raw-{i}", {"text": f"Imported fact {i}."}, index=False) for i in range(n)])


async def test_the_default_cap_refuses_the_note_past_it(store, user):
    await fill_to(store, user, MAX_NOTES_PER_USER - 1)
    assert (await aremember(store, user, "The user has a cat."))["status"] == "stored"  # the last one allowed
    with pytest.raises(NoteLimitError):
        await aremember(store, user, "The user plays the violin.")
    assert len(await store.asearch(user.namespace(NOTES), limit=MAX_NOTES_PER_USER + 10)) == MAX_NOTES_PER_USER


async def test_at_the_cap_an_extraction_still_writes_the_profile(store, user):
    await fill_to(store, user, MAX_NOTES_PER_USER)
    extraction = MemoryExtraction(city="Lyon", response_style="concise", notes=["The user plays the violin."])
    applied = await aapply_extraction(store, user, extraction)
    assert {c["field"] for c in applied["profile"]} == {"city", "response_style"}
    assert [r["status"] for r in applied["notes"]] == ["over_limit"]
    profile = await aget_profile(store, user)
    assert (profile["city"]["value"], profile["response_style"]["value"]) == ("Lyon", "concise")
    assert len(await store.asearch(user.namespace(NOTES), limit=MAX_NOTES_PER_USER + 10)) == MAX_NOTES_PER_USER


async def test_the_tool_tells_the_model_the_cap_was_reached(agent, model, store, script, monkeypatch):
    import mnemo.notes.model

    # A cap of one: the tool's check (nothing embedded) and the write it then makes see it.
    for fn in (mnemo.notes.writes.aremember, mnemo.notes.writes.aat_note_cap):
        monkeypatch.setattr(fn, "__kwdefaults__", {**(fn.__kwdefaults__ or {}), "max_notes": 1})
    await aremember(store, User.of("u_zhou"), "The user has a cat.", max_notes=None)
    replies = iter([tool_call("remember_note", text="The user plays the violin."), AIMessage(content="done")])
    script.chat = lambda messages: next(replies)
    out = await say(agent, "Remember that I play the violin.", memory_write_mode="hot")
    assert "Error:" in out["messages"][-2].content and "forget" in out["messages"][-2].content
    assert len(await alist_notes(store, User.of("u_zhou"))) == 1
