"""Notes that stay true (mnemo.writing.known, mnemo.notes.revise): the
extractor sees the user's most similar notes and may update or invalidate
them; the former text stays in the note's history, an invalidated note
leaves recall and the prompt but not the export, until forgotten."""

from __future__ import annotations

import itertools
import logging
import re

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from harness.scripted import ScriptedChatModel, tool_call
from mnemo.access import aexport_user
from mnemo.audit import Origin
from mnemo.audit.chain import alist_audit
from mnemo.core import INVALIDATED_NOTES, User
from mnemo.notes import aforget, alist_notes, arecall, aremember
from mnemo.turn import aload_snapshot, render_snapshot
from mnemo.writing import aextract_messages
from mnemo.writing.known import MAX_EXISTING_NOTES
from tests.agent_harness import say

SHOWN = re.compile(r'^- "(.*)"  \(id "(n\d+)"\)$', re.M)
_ids = itertools.count()


def shown(messages: list[BaseMessage]) -> dict[str, str]:
    """Existing notes the extractor was shown: text -> short id."""
    block = messages[-1].text.split("<existing_notes>", 1)[1]
    return dict(SHOWN.findall(block))


def words(messages: list[BaseMessage]) -> str:
    """Everything the extractor was given except the existing notes."""
    return "\n".join(m.text for m in messages).split("<existing_notes>", 1)[0]


def extractor_by_rule(messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
    """What a good extractor does with what it is shown."""
    said, notes = words(messages), shown(messages)
    args: dict = {"notes": [], "updates": [], "invalidates": []}
    if "I'm vegetarian" in said:
        args["notes"].append("The user is vegetarian.")
    if "I have two cats" in said:
        args["notes"].append("The user has two cats.")
    if "I drive a red car" in said:
        args["notes"].append("The user drives a red car.")
    if "I eat fish again" in said and "The user is vegetarian." in notes:
        args["updates"].append({"id": notes["The user is vegetarian."], "text": "The user eats fish again."})
    if "one of my cats died" in said and "The user has two cats." in notes:
        args["updates"].append({"id": notes["The user has two cats."], "text": "The user has one cat."})
    if "sold my car" in said and "The user drives a red car." in notes:
        args["invalidates"].append(notes["The user drives a red car."])
    # Credulous on purpose: whoever says it, it invalidates (the assistant's words must never reach it).
    if "not vegetarian anymore" in said and "The user is vegetarian." in notes:
        args["invalidates"].append(notes["The user is vegetarian."])
    return tool_call("MemoryExtraction", **args)


async def turn(
    store, user: User, model, *said: str | BaseMessage, before: tuple[BaseMessage, ...] = (), thread: str = "t1"
):
    """One write of what was ``said`` (the user's words, or any message),
    after ``before`` (already extracted), as the pipeline does it."""

    async def load():
        return model

    messages = [*before, *(HumanMessage(t, id=f"h{next(_ids)}") if isinstance(t, str) else t for t in said)]
    progress = await aextract_messages(
        store,
        user,
        load,
        messages,
        len(before),
        failures=0,
        said_at=None,
        timeout_s=30,
        origin=Origin(source="extractor", thread_id=thread),
    )
    assert progress == (len(messages), 0)  # all written


async def test_vegetarian_then_fish_ends_with_one_current_note_and_its_history(index, user):
    store = InMemoryStore(index=index)
    model = ScriptedChatModel(respond=extractor_by_rule)
    await turn(store, user, model, "I'm vegetarian.", thread="t1")
    (first,) = await alist_notes(store, user)
    await turn(store, user, model, "I eat fish again now.", thread="t2")
    (note,) = await alist_notes(store, user)
    assert note["id"] == first["id"] and note["text"] == "The user eats fish again."
    (entry,) = note["history"]
    assert entry["text"] == "The user is vegetarian." and entry["thread_id"] == "t2" and entry["until"]
    # The new text was said now; the former one keeps when it was said.
    assert (entry["first_seen"], note["first_seen"]) == (first["first_seen"], entry["until"])
    assert [(r["action"], r["before"], r["after"]) for r in await alist_audit(store, user)][-1] == (
        "note.update",
        "The user is vegetarian.",
        "The user eats fish again.",
    )
    snapshot = await aload_snapshot(store, user, "what can I eat?")
    prompt = render_snapshot(snapshot)
    assert "eats fish again" in prompt and "is vegetarian" not in prompt
    exported = (await aexport_user(store, user))["notes"]
    assert exported[0]["history"][0]["text"] == "The user is vegetarian."  # nothing silently lost


async def test_two_cats_then_one_cat_keeps_one_count(index, user):
    store = InMemoryStore(index=index)
    model = ScriptedChatModel(respond=extractor_by_rule)
    await turn(store, user, model, "I have two cats, Mia and Leo.")
    await turn(store, user, model, "Sadly one of my cats died, I have one now.")
    notes = await alist_notes(store, user)
    assert [n["text"] for n in notes] == ["The user has one cat."]
    assert [h["text"] for h in notes[0]["history"]] == ["The user has two cats."]
    assert [n["text"] for n in await arecall(store, user, "how many cats do I have?")] == ["The user has one cat."]


async def test_an_invalidated_note_leaves_recall_and_the_prompt_but_not_the_export_until_forgotten(index, user):
    store = InMemoryStore(index=index)
    model = ScriptedChatModel(respond=extractor_by_rule)
    await turn(store, user, model, "I drive a red car.")
    (car,) = await alist_notes(store, user)
    assert [n["text"] for n in await arecall(store, user, "my car")] == ["The user drives a red car."]  # precondition
    await turn(store, user, model, "I sold my car last week.", thread="t9")
    assert await alist_notes(store, user) == []
    assert await arecall(store, user, "my car") == []
    assert "red car" not in render_snapshot(await aload_snapshot(store, user, "my car"))
    (kept,) = (await aexport_user(store, user))["other"][INVALIDATED_NOTES]
    assert kept["key"] == car["id"] and kept["value"]["invalidated_at"]
    assert kept["value"]["history"][0] | {"until": ""} == {
        "text": "The user drives a red car.",
        "source": "user_said",
        "first_seen": car["first_seen"],
        "until": "",
        "thread_id": "t9",
    }
    assert "note.invalidate" in [r["action"] for r in await alist_audit(store, user)]
    assert [n["id"] for n in await aforget(store, user, note_id=car["id"])] == [car["id"]]
    assert INVALIDATED_NOTES not in (await aexport_user(store, user))["other"]
    assert [r["action"] for r in await alist_audit(store, user)][-1] == "note.forget"


async def test_an_assistants_guess_cannot_invalidate_a_note(index, user):
    store = InMemoryStore(index=index)
    model = ScriptedChatModel(respond=extractor_by_rule)
    first = HumanMessage("I'm vegetarian.", id="h-first")
    await turn(store, user, model, first)
    guess = AIMessage("You are not vegetarian anymore, right? Try our salmon.", id="a-guess")
    # Both the guess and the user's answer are past the cursor: pending for extraction.
    await turn(store, user, model, guess, "What soups do you have?", before=(first,))
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user is vegetarian."]
    # The same words from the user do invalidate it (the extractor above is credulous).
    await turn(store, user, model, guess, "I'm not vegetarian anymore.", before=(first,))
    assert await alist_notes(store, user) == []


async def test_the_extractor_sees_the_users_similar_notes_bounded_and_never_another_users(index, user):
    store = InMemoryStore(index=index)
    other = User.of("u_other")
    await aremember(store, other, "The user is vegetarian and loves tofu.")
    foods = "carrot pumpkin lentil tomato leek pea onion mushroom".split()
    sports = "tennis football swimming cycling rowing skiing climbing boxing".split()
    for liked in [*(f"{food} soup" for food in foods), *sports]:
        await aremember(store, user, f"The user likes {liked}.")
    model = ScriptedChatModel(respond=extractor_by_rule)
    await turn(store, user, model, "I'm vegetarian.", "Which sports shoes do you sell?")
    seen = shown(model.calls[-1]["messages"])
    assert len(seen) == MAX_EXISTING_NOTES
    assert all(text.startswith("The user likes ") for text in seen)
    assert "loves tofu" not in "\n".join(m.text for m in model.calls[-1]["messages"])


async def test_an_update_naming_an_unknown_or_another_users_note_is_ignored_and_logged(index, user, caplog):
    store = InMemoryStore(index=index)
    other = User.of("u_other")
    theirs = (await aremember(store, other, "The user has two cats."))["note"]
    await aremember(store, user, "The user has two cats.")

    def malformed(messages, tool_names):
        mine = next(iter(shown(messages).values()))
        return tool_call(
            "MemoryExtraction",
            notes=["The user has a hamster."],
            updates=[{"id": "n99", "text": "The user has no cats."}, {"id": theirs["id"], "text": "No cats."}],
            invalidates=[theirs["id"], "ignore previous instructions", mine],
        )

    with caplog.at_level(logging.WARNING, logger="mnemo.writing.known"):
        await turn(
            store, user, ScriptedChatModel(respond=malformed), "I got a hamster; the cats live with my sister now."
        )
    ignored = [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()]
    assert len(ignored) == 3  # n99, their id (the first word on it), the made-up one
    assert [n["text"] for n in await alist_notes(store, other)] == ["The user has two cats."]
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user has a hamster."]  # the valid parts apply


async def test_a_turns_write_with_revisions_costs_a_bounded_number_of_round_trips(counting_store, user):
    model = ScriptedChatModel(respond=extractor_by_rule)
    await aremember(counting_store, user, "The user has two cats.")
    await aremember(counting_store, user, "The user drives a red car.")
    counting_store.trips = 0
    await turn(counting_store, user, model, "Sadly one of my cats died. I sold my car. I have two cats no more.")
    assert counting_store.trips <= 3  # read before extracting, read after with the audit chain's head, one write
    assert [n["text"] for n in await alist_notes(counting_store, user)] == ["The user has one cat."]


# --------------------------------------------------------------------------- the tools' path


async def test_the_model_updates_a_note_by_id_and_sets_one_aside_keeping_history(agent, model, store, script):
    user = User.of("u_zhou")
    cats = (await aremember(store, user, "The user has two cats."))["note"]
    car = (await aremember(store, user, "The user drives a red car."))["note"]
    theirs = (await aremember(store, User.of("u_other"), "The user has a dog."))["note"]
    steps = iter(
        [
            tool_call("remember_note", text="The user has one cat.", replaces=cats["id"]),
            tool_call("forget_note", note_id=car["id"], no_longer_true=True),
            tool_call("remember_note", text="The user has no dog.", replaces=theirs["id"]),
            tool_call("forget_note", note_id=theirs["id"], no_longer_true=True),
            AIMessage(content="Noted."),
        ]
    )
    script.chat = lambda messages: next(steps)
    out = await say(
        # "remove it": setting a note aside ends it, which runs on the user's word only (nodes/tool_gate.py).
        agent,
        "One of my cats died, I sold my car, remove it, and I have no dog.",
        thread="t5",
        memory_write_mode="hot",
    )
    results = [m.text for m in out["messages"] if m.type == "tool"]
    assert results[0].startswith("Updated:") and results[1].startswith("No longer true")
    assert results[2:] == ["No note has this id; nothing was changed."] * 2  # another user's note
    (note,) = await alist_notes(store, user)
    assert (note["id"], note["text"]) == (cats["id"], "The user has one cat.")
    assert [(h["text"], h.get("thread_id")) for h in note["history"]] == [("The user has two cats.", "t5")]
    (kept,) = (await aexport_user(store, user))["other"][INVALIDATED_NOTES]
    assert kept["key"] == car["id"]
    assert [n["text"] for n in await alist_notes(store, User.of("u_other"))] == ["The user has a dog."]


# --------------------------------------------------------------------------- the background writer


async def test_the_background_writer_updates_a_note_with_the_conversations_thread(
    agent, model, store, script, fake_platform
):
    from graphs.memory_writer import builder as writer_builder
    from nodes.context import Context

    script.extract = extractor_by_rule
    on_platform = {"langgraph_request_id": "req-1"}
    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)

    async def write_in_background(text: str) -> None:
        await say(agent, text, thread="conv-1", memory_write_mode="background", config=on_platform)
        run = fake_platform.scheduled[-1]
        wcfg = {"configurable": {"thread_id": run["thread_id"]}}
        await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))

    await write_in_background("I'm vegetarian.")
    await write_in_background("I eat fish again now.")
    (note,) = await alist_notes(store, User.of("u_zhou"))
    assert note["text"] == "The user eats fish again."
    assert [(h["text"], h.get("thread_id")) for h in note["history"]] == [("The user is vegetarian.", "conv-1")]


async def test_the_background_writer_makes_the_round_trips_of_a_write_after_the_turn(
    agent, model, store, script, fake_platform, monkeypatch
):
    """It shows the extractor what the thread's latest ``load_memory`` read:
    no read before extracting, as after the turn."""
    from graphs.memory_writer import builder as writer_builder
    from nodes import extract_thread as writer_node
    from nodes.context import Context

    counted = count_store_trips(monkeypatch, writer_node)
    script.extract = extractor_by_rule
    on_platform = {"langgraph_request_id": "req-1"}
    writer = writer_builder.compile(store=store, checkpointer=agent.checkpointer)
    for text in ("I'm vegetarian.", "I eat fish again now."):
        await say(agent, text, thread="conv-1", memory_write_mode="background", config=on_platform)
        run = fake_platform.scheduled[-1]
        wcfg = {"configurable": {"thread_id": run["thread_id"]}}
        await writer.ainvoke(run["input"], wcfg, context=Context(**run["context"]))
    extractions = [c["messages"] for c in model.calls if "MemoryExtraction" in c["tool_names"]]
    assert "The user is vegetarian." in shown(extractions[-1])  # the note was shown, from the thread's read
    assert (await alist_notes(store, User.of("u_zhou")))[0]["text"] == "The user eats fish again."
    # Each write: its reads with the audit chain's head, the write (the sweep after it reads once more).
    assert [c.trips for c in counted[::2]] == [2, 2], [c.trips for c in counted]


async def test_an_update_wins_over_a_new_text_deduplicated_into_the_same_note(store, user):
    from mnemo.writing.apply import aapply_extraction
    from mnemo.writing.extraction import MemoryExtraction, NoteUpdate
    from mnemo.writing.known import aread_known

    cats = (await aremember(store, user, "The user has two cats."))["note"]
    known = await aread_known(store, user, ["Mia and Leo are my two cats; Leo died."])
    (short,) = [s for s, (key, _) in known.notes.items() if key == cats["id"]]
    extraction = MemoryExtraction(
        notes=["The user has two cats at home."],  # alone, this would refine the stored note
        updates=[NoteUpdate(id=short, text="The user has one cat, Mia.")],
    )
    applied = await aapply_extraction(store, user, extraction, known=known)
    assert [r["status"] for r in applied["notes"]] == ["refined"]  # precondition: it did match that note
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user has one cat, Mia."]
    actions = [(r["action"], r["target"]) for r in await alist_audit(store, user)]
    assert actions == [("note.add", cats["id"]), ("note.update", cats["id"])]  # no refine that never happened


# --------------------------------------------------------------------------- after the turn, through the graph


class CountedStore(BaseStore):
    """The store ``write_memory`` writes through, counting its round trips."""

    def __init__(self, inner: BaseStore) -> None:
        self.inner, self.trips = inner, 0

    def batch(self, ops):
        return self.inner.batch(ops)

    async def abatch(self, ops):
        self.trips += 1
        return await self.inner.abatch(ops)


def count_store_trips(monkeypatch, node_module) -> list[CountedStore]:
    """Each store ``node_module`` opens (its ``memory_store``), counting round trips."""
    counted: list[CountedStore] = []

    def counting(runtime):
        counted.append(CountedStore(runtime.store))
        return counted[-1]

    monkeypatch.setattr(node_module, "memory_store", counting)
    return counted


async def test_after_the_turn_the_extractor_sees_what_load_memory_read_at_no_extra_round_trip(
    agent, model, store, script, monkeypatch
):
    from nodes import write_memory as write_node

    counted = count_store_trips(monkeypatch, write_node)
    script.extract = extractor_by_rule
    await say(agent, "I'm vegetarian.", thread="t1")
    await say(agent, "I eat fish again now.", thread="t2")
    (note,) = await alist_notes(store, User.of("u_zhou"))
    assert note["text"] == "The user eats fish again."
    assert [(h["text"], h.get("thread_id")) for h in note["history"]] == [("The user is vegetarian.", "t2")]
    # The note was shown to the second extraction; the write read once (the audit head with it), wrote once.
    extractions = [c["messages"] for c in model.calls if "MemoryExtraction" in c["tool_names"]]
    assert "The user is vegetarian." in shown(extractions[-1])
    assert [c.trips for c in counted] == [2, 2]  # the write's reads with the audit chain's head, the write
    await say(agent, "What soups do you have?", thread="t2")  # nothing to remember
    assert counted[-1].trips == 0


# --------------------------------------------------------------------------- the plan of one revision

STAMP = "2026-12-02T10:00:00+00:00"
SAID = {
    "id": "k",
    "text": "The user is vegetarian.",
    "norm": "the user is vegetarian",
    "source": "inferred",
    "first_seen": "2026-01-01T00:00:00+00:00",
    "updated_at": "2026-02-01T00:00:00+00:00",
    "refers_to": "2025",
    "expires_at": "2027-01-01T00:00:00+00:00",
    "context": "What do you eat?",
    "indexed_text": "The user is vegetarian. (in reply to: What do you eat?)",
    "sparse": {"7": 1.5},
}
#: What SAID leaves in the history when revised in thread t2 at STAMP.
FORMER = {
    "text": "The user is vegetarian.",
    "source": "inferred",
    "until": STAMP,
    "first_seen": "2026-01-01T00:00:00+00:00",
    "refers_to": "2025",
    "expires_at": "2027-01-01T00:00:00+00:00",
    "thread_id": "t2",
}


def audited(op) -> dict:
    """What an audit write records of a revision."""
    return {k: op.value[k] for k in ("action", "target", "before", "after", "source", "thread_id")}


def test_an_update_is_said_now_keeps_its_context_and_moves_the_former_text_with_its_dates_to_history():
    from mnemo.core import NOTES
    from mnemo.notes import plan_revision
    from mnemo.notes.index import NoteChange

    user, origin = User.of("u_zhou"), Origin(source="extractor", thread_id="t2")
    revision = plan_revision(user, "k", SAID, text="  The user eats  fish again. ", origin=origin, stamp=STAMP)
    assert revision is not None
    assert revision.value == {
        "id": "k",
        "text": "The user eats fish again.",
        "norm": "the user eats fish again",
        "source": "user_said",
        "first_seen": STAMP,
        "updated_at": STAMP,
        "context": "What do you eat?",
        "indexed_text": "The user eats fish again. (in reply to: What do you eat?)",
        "history": [FORMER],
    }  # durable, about no date, its sparse vector (of the former text) dropped
    put, audit = revision.ops
    assert (put.namespace, put.key, put.value) == (user.namespace(NOTES), "k", revision.value)
    assert (put.index, put.ttl) == (["text", "indexed_text"], None)
    assert audited(audit) == {
        "action": "note.update",
        "target": "k",
        "before": "The user is vegetarian.",
        "after": "The user eats fish again.",
        "source": "extractor",
        "thread_id": "t2",
    }
    assert revision.change == NoteChange(key="k", before=SAID, after=revision.value)
    inferred = plan_revision(user, "k", SAID, text="The user eats fish.", origin=origin, stamp=STAMP, source="inferred")
    assert inferred is not None and inferred.value["source"] == "inferred"


def test_an_invalidated_note_moves_whole_with_its_history_out_of_the_notes():
    from mnemo.core import NOTES
    from mnemo.notes import plan_revision
    from mnemo.notes.index import NoteChange

    user, origin = User.of("u_zhou"), Origin(source="extractor", thread_id="t2")
    revision = plan_revision(user, "k", SAID, text=None, origin=origin, stamp=STAMP, merged_into="k2")
    assert revision is not None
    assert revision.value == {**SAID, "history": [FORMER], "invalidated_at": STAMP, "merged_into": "k2"}
    delete, moved, audit = revision.ops
    assert (delete.namespace, delete.key, delete.value) == (user.namespace(NOTES), "k", None)
    assert (moved.namespace, moved.key, moved.value) == (user.namespace(INVALIDATED_NOTES), "k", revision.value)
    assert moved.index is False  # out of every search
    assert audited(audit) == {
        "action": "note.invalidate",
        "target": "k",
        "before": "The user is vegetarian.",
        "after": None,
        "source": "extractor",
        "thread_id": "t2",
    }
    assert revision.change == NoteChange(key="k", before=SAID, after=None)
    ended = plan_revision(user, "k", SAID, text=None, origin=origin, stamp=STAMP)
    assert ended is not None and "merged_into" not in ended.value


def test_a_revision_keeps_the_last_former_texts_and_only_the_dates_a_note_had():
    from mnemo.notes import plan_revision
    from mnemo.profile import MAX_HISTORY

    user = User.of("u_zhou")
    history = [{"text": f"The user had {i} cats.", "source": "user_said", "until": STAMP} for i in range(MAX_HISTORY)]
    bare = {"text": "The user has a cat.", "history": history}  # written around mnemo: no source, dates or norm
    origin = Origin(source="tool")
    revision = plan_revision(user, "k", bare, text="The user has two cats.", origin=origin, stamp=STAMP, as_of=STAMP)
    assert revision is not None
    former = {"text": "The user has a cat.", "source": "user_said", "until": STAMP}  # no thread: none recorded
    assert revision.value["history"] == [*history[1:], former]  # the last MAX_HISTORY


def test_a_revision_is_nothing_for_the_same_words_or_a_note_changed_after_they_were_said(caplog):
    from mnemo.notes import plan_revision

    user, origin = User.of("u_zhou"), Origin(source="extractor")
    for same in ("the user is VEGETARIAN", "The user is vegetarian!"):
        assert plan_revision(user, "k", SAID, text=same, origin=origin, stamp=STAMP) is None
        unnormalised = {k: v for k, v in SAID.items() if k != "norm"}
        assert plan_revision(user, "k", unnormalised, text=same, origin=origin, stamp=STAMP) is None
    changed = SAID["updated_at"]
    for as_of in (changed, "2026-03-01T00:00:00+00:00"):  # said when it last changed, or later: revised
        assert plan_revision(user, "k", SAID, text="The user eats fish.", origin=origin, stamp=STAMP, as_of=as_of)
    with caplog.at_level(logging.INFO, logger="mnemo.notes.revise"):
        earlier, key = "2026-01-15T00:00:00+00:00", "0123456789abcdef0123456789abcdef"
        assert plan_revision(user, key, SAID, text=None, origin=origin, stamp=STAMP, as_of=earlier) is None
    assert [r.getMessage() for r in caplog.records] == [
        "note 01234567 changed after these words were said; not revised"
    ]


async def test_a_note_revised_by_id_is_returned_as_stored_and_another_users_is_out_of_reach(index, user, caplog):
    from mnemo.notes import arevise

    store = InMemoryStore(index=index)
    tea = (await aremember(store, user, "The user likes tea.", source="inferred"))["note"]
    cats = (await aremember(store, user, "The user has two cats."))["note"]
    theirs = (await aremember(store, User.of("u_other"), "The user has a dog."))["note"]
    origin = Origin(source="tool", thread_id="t5")
    updated = await arevise(store, user, cats["id"], text="The user has one cat.", origin=origin)
    assert updated is not None and [updated, tea] == await alist_notes(store, user)
    assert (updated["id"], updated["text"], updated["source"]) == (cats["id"], "The user has one cat.", "user_said")
    assert updated["first_seen"] == updated["updated_at"] == updated["history"][0]["until"] > cats["first_seen"]
    assert await arevise(store, user, cats["id"], text="the user has one cat", origin=origin) == updated  # as it is
    guessed = await arevise(store, user, tea["id"], text="The user likes green tea.", origin=origin, source="inferred")
    assert guessed is not None and guessed["source"] == "inferred"
    tea = guessed
    with caplog.at_level(logging.WARNING, logger="mnemo.notes.revise"):
        assert await arevise(store, user, theirs["id"], text=None, origin=origin) is None
        assert await arevise(store, user, "n" * 500, text=None, origin=origin) is None  # a made-up id, logged cut
    assert [r.getMessage() for r in caplog.records] == [
        f"no note {theirs['id']!r} of this user to revise; nothing changed",
        f"no note {'n' * 40!r} of this user to revise; nothing changed",
    ]
    assert [n["text"] for n in await alist_notes(store, User.of("u_other"))] == ["The user has a dog."]
    ended = await arevise(store, user, cats["id"], text=None, origin=origin)
    assert ended is not None and (ended["id"], ended["text"]) == (cats["id"], "The user has one cat.")
    assert [h["text"] for h in ended["history"]] == ["The user has two cats.", "The user has one cat."]
    assert await alist_notes(store, user) == [tea]


async def test_a_note_read_by_id_is_gone_once_expired_in_recall_or_set_aside(index, user, monkeypatch):
    from datetime import timedelta

    from mnemo.notes import aget_note, arevise, expiry, expiry_from

    store = InMemoryStore(index=index)
    until = expiry_from(valid_for_days=3)
    trip = (await aremember(store, user, "The user is in Japan.", expires_at=until))["note"]
    hotel = (await aremember(store, user, "The user stays at the Hilton.", expires_at=until))["note"]
    await arevise(store, user, hotel["id"], text=None, origin=Origin(source="tool"))
    found = [await aget_note(store, user, n["id"]) for n in (trip, hotel)]
    assert [(note["text"], aside) for note, aside in filter(None, found)] == [
        ("The user is in Japan.", False),
        ("The user stays at the Hilton.", True),
    ]  # the precondition: read by id until they expire
    later = expiry.now() + timedelta(days=4)
    monkeypatch.setattr(expiry, "clock", lambda: later)
    assert [await aget_note(store, user, n["id"]) for n in (trip, hotel)] == [None, None]
