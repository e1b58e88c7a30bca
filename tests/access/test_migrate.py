"""mnemo.access.migrate: items written as LangGraph's memory-agent and
memory-template write them (their ``upsert_memory`` tool and their
``handle_patch_memory`` / ``handle_insertion_memory`` nodes), moved into mnemo."""

from __future__ import annotations

import uuid

import pytest

from mnemo import InvalidInputError, User, aget_profile, aupdate_profile
from mnemo.access import amigrate_langgraph
from mnemo.access.migrate import namespace_of
from mnemo.audit import Origin
from mnemo.audit.chain import alist_audit
from mnemo.notes import alist_notes
from mnemo.turn import aload_snapshot

ADMIN = Origin(source="admin", actor="ops", route="python -m mnemo import")


async def memory_agent_writes(store, user_id: str, content: str, context: str) -> None:
    """memory-agent's tools.upsert_memory, as it stores a memory."""
    await store.aput(("memories", user_id), key=str(uuid.uuid4()), value={"content": content, "context": context})


async def test_memory_agent_memories_become_notes_with_their_context_and_a_second_run_adds_nothing(store):
    user = User.of("u_zhou")
    await memory_agent_writes(
        store,
        "u_zhou",
        "User expressed interest in learning about French.",
        "This was mentioned while discussing career options in Europe.",
    )
    await memory_agent_writes(store, "u_zhou", "User has a dog called Max.", "Talking about weekend plans.")
    await memory_agent_writes(store, "u_li", "User lives in Beijing.", "Introductions.")  # another user's
    dry = await amigrate_langgraph(store, user, "memories/{user_id}", origin=ADMIN, dry_run=True)
    assert dry["items"] == 2 and [n["text"] for n in dry["notes"]] == [
        "User expressed interest in learning about French.",
        "User has a dog called Max.",
    ]
    assert await alist_notes(store, user) == []  # a dry run writes nothing

    done = await amigrate_langgraph(store, user, "memories/{user_id}", origin=ADMIN)
    assert done["notes_written"] == {"stored": 2}
    notes = await alist_notes(store, user)
    assert {n["text"]: (n["source"], n.get("context")) for n in notes} == {
        "User expressed interest in learning about French.": (
            "inferred",
            "This was mentioned while discussing career options in Europe.",
        ),
        "User has a dog called Max.": ("inferred", "Talking about weekend plans."),
    }
    # Through mnemo's write path: audited (route and caller), indexed (the words find it).
    assert {(r["action"], r["actor"], r["route"]) for r in await alist_audit(store, user)} == {
        ("note.add", "ops", "python -m mnemo import")
    }
    snapshot = await aload_snapshot(store, user, "what is my dog called?")
    assert snapshot["relevant"][0]["text"] == "User has a dog called Max."
    again = await amigrate_langgraph(store, user, "memories/{user_id}", origin=ADMIN)
    assert again["notes_written"] == {"duplicate": 2} and len(await alist_notes(store, user)) == 2
    assert len(await alist_audit(store, user)) == 2
    assert [n["text"] for n in await alist_notes(store, User.of("u_li"))] == []


async def test_memory_template_profile_document_and_notes_are_moved_as_inferred(store):
    user = User.of("u_ning")
    # memory-template's handle_patch_memory: one document, key "memory".
    await store.aput(
        ("u_ning", "user_states", "User"),
        "memory",
        {
            "user_name": "Ning",
            "age": 34,
            "interests": ["hiking", "tea"],
            "home": "Hangzhou",
            "occupation": "nurse",
            "conversation_preferences": ["short answers"],
        },
    )
    # ...and handle_insertion_memory: one item per Note, a uuid key.
    await store.aput(
        ("u_ning", "events", "Note"),
        str(uuid.uuid4()),
        {"context": "Ordering gifts.", "content": "Buys presents for her mother every May."},
    )
    profile = await amigrate_langgraph(store, user, "{user_id}/user_states/User", origin=ADMIN)
    assert profile["profile"] == {"name": "Ning", "city": "Hangzhou"}
    stored = await aget_profile(store, user)
    assert {f: (e["value"], e["source"]) for f, e in stored.items()} == {
        "name": ("Ning", "inferred"),
        "city": ("Hangzhou", "inferred"),
    }
    assert sorted(n["text"] for n in await alist_notes(store, user)) == [
        "Age: 34",
        "Conversation preferences: short answers",
        "Interests: hiking, tea",
        "Occupation: nurse",
    ]
    notes = await amigrate_langgraph(store, user, "{user_id}/events/Note", origin=ADMIN)
    assert notes["notes_written"] == {"stored": 1}
    # A home described at length is no city: kept whole, as a note.
    lin = User.of("u_lin")
    home = "A flat on the third floor near West Lake, " * 6
    await store.aput(("u_lin", "user_states", "User"), "memory", {"user_name": "Lin", "home": home})
    report = await amigrate_langgraph(store, lin, "{user_id}/user_states/User", origin=ADMIN)
    assert report["profile"] == {"name": "Lin"} and "city" not in await aget_profile(store, lin)
    assert [n["text"] for n in await alist_notes(store, lin)] == [f"Home: {home.strip()}"]
    # What the user says later replaces what the template's model inferred.
    await aupdate_profile(store, user, {"city": "Suzhou"}, source="user_said")
    await amigrate_langgraph(store, user, "{user_id}/user_states/User", origin=ADMIN)
    assert (await aget_profile(store, user))["city"]["value"] == "Suzhou"


async def test_items_of_another_shape_are_skipped_and_a_bad_template_is_refused(store):
    user = User.of("u_zhou")
    await store.aput(("memories", "u_zhou"), "odd", {"something": "else"})
    report = await amigrate_langgraph(store, user, "memories/{user_id}", origin=ADMIN)
    assert report["skipped"] == ["odd"] and report["notes_written"] == {}
    for bad in ("memories", "memories//{user_id}", ""):
        with pytest.raises(InvalidInputError):
            namespace_of(bad, "u_zhou")
    assert namespace_of("memories/{user_id}", "u_zhou") == ("memories", "u_zhou")


async def test_a_profile_value_the_profile_refuses_becomes_a_note_of_its_own_field(store):
    """As the profile's write path bounds it (mnemo.profile.normalize_field): whitespace
    collapsed first, then at most 200 characters; past it, the note says which field it was."""
    wu = User.of("u_wu")
    name = "Wu " + "Xiaoming the Third of the Western Hills, " * 5  # 208 characters
    spaced = "Hangzhou" + " " * 300 + "West Lake"  # 317 characters, 18 once collapsed: a city
    await store.aput(("u_wu", "user_states", "User"), "memory", {"user_name": name, "home": spaced})
    report = await amigrate_langgraph(store, wu, "{user_id}/user_states/User", origin=ADMIN)
    assert report["profile"] == {"city": "Hangzhou West Lake"}
    assert [n["text"] for n in await alist_notes(store, wu)] == [f"Name: {name.strip()}"]
    assert "name" not in await aget_profile(store, wu)
