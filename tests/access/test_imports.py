"""mnemo.access.imports: an export written back. The round trip through
``./scripts/dev`` on both stores: tests/e2e/test_app_memory.py."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from mnemo import InvalidInputError, User, aget_profile, aremember, aupdate_profile
from mnemo.access import aerase_user, aexport_user, aimport_user
from mnemo.audit import Origin, averify
from mnemo.audit.chain import alist_audit
from mnemo.core import EPISODES, NOTES, NoteLimitError
from mnemo.episodes import build_episode
from mnemo.notes import aforget, alist_notes, arevise, expiry_from
from mnemo.notes.sparse_vectors import SPARSE_FIELD
from mnemo.turn import aload_snapshot

ADMIN = Origin(source="admin", actor="ops")


async def seeded(store, user: User) -> None:
    await aupdate_profile(store, user, {"name": "Zhou", "city": "Hangzhou"})
    await aupdate_profile(store, user, {"city": "Suzhou"}, source="app", origin=ADMIN)
    await aremember(store, user, "Has a dog called Max.", context="Any pets?", refers_to="2024-03")
    await aremember(store, user, "Is travelling to Japan.", expires_at=expiry_from(valid_for_days=5))
    wrong = await aremember(store, user, "Prefers phone calls.")
    await arevise(store, user, wrong["note"]["id"], text="Prefers e-mail over phone.", origin=ADMIN)
    gone = await aremember(store, user, "Works at the bakery.")
    await arevise(store, user, gone["note"]["id"], text=None, origin=ADMIN)  # invalidated: kept in the export
    from langchain_core.messages import AIMessage, HumanMessage

    episode = build_episode(
        [HumanMessage("Where is my parcel?"), AIMessage("It ships tomorrow.")],
        assistant_id="agent",
        thread_id="t1",
        outcome="resolved",
        source="feedback_route",
    )
    assert episode is not None
    await store.aput(user.namespace(EPISODES), episode["id"], dict(episode), index=["text"])


def memory(document: Any) -> tuple[Any, Any, Any]:
    """What a round trip keeps: the notes, the profile, the other kinds' values."""
    other = {kind: sorted((it["key"], it["value"]) for it in items) for kind, items in document["other"].items()}
    return document["notes"], document["profile"], other


async def test_export_erase_import_export_gives_the_same_memory_and_importing_again_changes_nothing(store, user):
    await seeded(store, user)
    before = await aexport_user(store, user)
    assert len(before["notes"]) == 3
    assert any(n.get("history") for n in before["notes"]) and "notes_invalidated" in before["other"]
    await aerase_user(store, user, origin=ADMIN)
    assert (await aexport_user(store, user))["notes"] == []

    report = await aimport_user(store, user, before, origin=ADMIN)
    assert report["written"] == {"notes": 3, "profile": 2, "notes_invalidated": 1, "episodes": 1}
    after = await aexport_user(store, user)
    assert memory(after) == memory(before)
    # The notes are back in the index (words), the vectors (meaning) and the prompt.
    snapshot = await aload_snapshot(store, user, "what is my dog called?")
    assert snapshot["relevant"][0]["text"] == "Has a dog called Max."
    assert {"words", "meaning"} <= set(snapshot["found_by"][snapshot["relevant"][0]["id"]])
    stored = await store.asearch(user.namespace(NOTES), limit=10)
    assert len(stored) == 3 and all(SPARSE_FIELD in it.value for it in stored)  # the weights are installed (_venv.sh)
    # Audited as an import, the chain intact; a second import writes nothing, records nothing.
    trail = await alist_audit(store, user)
    assert [r["action"] for r in trail] == ["erase", "import"] and trail[-1]["actor"] == "ops"
    again = await aimport_user(store, user, before, origin=ADMIN)
    assert again["written"] == {} and sum(again["unchanged"].values()) == 7
    assert len(await alist_audit(store, user)) == 2 and (await averify(store, user))["ok"]
    assert memory(await aexport_user(store, user)) == memory(before)


async def test_an_import_into_another_user_restores_there_and_a_dry_run_writes_nothing(store, user):
    await seeded(store, user)
    document = await aexport_user(store, user)
    other = User.of("u_new")
    dry = await aimport_user(store, other, document, origin=ADMIN, dry_run=True)
    assert dry["dry_run"] and dry["written"]["notes"] == 3
    assert await alist_notes(store, other) == [] and await alist_audit(store, other) == []
    await aimport_user(store, other, document, origin=ADMIN)
    assert sorted(n["text"] for n in await alist_notes(store, other)) == sorted(
        n["text"] for n in await alist_notes(store, user)
    )
    # Forgetting an imported note takes it out of the index too.
    note = (await alist_notes(store, other))[0]
    assert await aforget(store, other, note_id=note["id"])
    assert note["id"] not in {n["id"] for n in (await aload_snapshot(store, other, "")).get("recent", [])}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda d: d.update(format="mem0/1"), "not an export document"),
        (lambda d: d["notes"][0].update(text=""), "cannot be empty"),
        (lambda d: d["notes"][0].update(id="../../other"), "an id is"),
        (lambda d: d["notes"][1].update(source="model"), "source is one of"),
        (lambda d: d["notes"][0].update(refers_to="March"), "refers_to"),
        (lambda d: d["profile"].update(shoe_size={"value": "42"}), "unknown profile field"),
        (lambda d: d["profile"]["city"].update(history=[{}] * 11), "at most 10"),
        (lambda d: d["other"]["episodes"][0].update(value="text"), "key and value"),
    ],
)
async def test_a_bad_document_is_refused_saying_what_and_nothing_is_written(store, user, change, says):
    await seeded(store, user)
    document = copy.deepcopy(await aexport_user(store, user))  # the in-memory store's values are the export's
    other = User.of("u_new")
    change(document)
    with pytest.raises(InvalidInputError, match=says):
        await aimport_user(store, other, document, origin=ADMIN)
    assert await store.asearch(other.root, limit=1) == []
    await aimport_user(store, other, await aexport_user(store, user), origin=ADMIN)  # the document unchanged
    assert await store.asearch(other.root, limit=1) != []


async def test_an_expired_note_in_the_document_is_not_brought_back(store, user):
    await seeded(store, user)
    document = copy.deepcopy(await aexport_user(store, user))
    travelling = next(n for n in document["notes"] if "Japan" in n["text"])
    travelling["expires_at"] = "2001-01-01T00:00:00+00:00"
    other = User.of("u_new")
    report = await aimport_user(store, other, document, origin=ADMIN)
    assert report["written"]["notes"] == 2 and any("expired" in s for s in report["skipped"])
    assert "Japan" not in str(await alist_notes(store, other))


async def test_imported_notes_join_the_word_index_a_user_already_has(store, user):
    await seeded(store, user)
    document = await aexport_user(store, user)
    other = User.of("u_new")
    await aremember(store, other, "Likes green tea.")  # an index exists: no rebuild will cover for a missing entry
    await aimport_user(store, other, document, origin=ADMIN)
    snapshot = await aload_snapshot(store, other, "Max")
    dog = next(n for n in snapshot["relevant"] if n["text"] == "Has a dog called Max.")
    assert "words" in snapshot["found_by"][dog["id"]]
    recent = {n["text"] for n in (await aload_snapshot(store, other, "", recent_limit=10))["recent"]}
    assert {"Likes green tea.", "Has a dog called Max."} <= recent


async def test_an_import_that_would_pass_the_note_cap_is_refused_whole(store, user, monkeypatch):
    import mnemo.access.imports

    await seeded(store, user)
    document = await aexport_user(store, user)
    other = User.of("u_new")
    await aremember(store, other, "Likes green tea.")
    monkeypatch.setattr(mnemo.access.imports, "MAX_NOTES_PER_USER", 3)  # 1 + the document's 3
    with pytest.raises(NoteLimitError):
        await aimport_user(store, other, document, origin=ADMIN)
    assert [n["text"] for n in await alist_notes(store, other)] == ["Likes green tea."]
    assert await aget_profile(store, other) == {}


@pytest.mark.parametrize("part", ["profile", "other"])
async def test_every_import_that_writes_is_audited_also_one_without_notes(store, user, part):
    await seeded(store, user)
    document = copy.deepcopy(await aexport_user(store, user))
    document["notes"] = []
    if part == "profile":
        document["other"] = {}
    else:
        document["profile"] = {}
    other = User.of("u_new")
    report = await aimport_user(store, other, document, origin=ADMIN)
    assert report["written"] and "notes" not in report["written"]  # the precondition: it wrote, no notes
    assert await store.asearch(other.root, limit=1) != []
    trail = await alist_audit(store, other)
    assert [(r["action"], r["actor"], r["after"]["written"]) for r in trail] == [("import", "ops", report["written"])]
    assert (await averify(store, other))["ok"]


async def test_a_field_changed_more_times_than_the_history_keeps_exports_a_document_that_imports(store, user):
    from mnemo.profile import MAX_HISTORY

    cities = [f"City {i}" for i in range(MAX_HISTORY + 3)]
    for city in cities:
        await aupdate_profile(store, user, {"city": city})
    note = (await aremember(store, user, "Reads one book."))["note"]
    for n in range(2, MAX_HISTORY + 4):
        await arevise(store, user, note["id"], text=f"Reads {n} books.", origin=ADMIN)
    document = await aexport_user(store, user)
    other = User.of("u_new")
    report = await aimport_user(store, other, document, origin=ADMIN)
    assert report["written"] == {"notes": 1, "profile": 1}
    (revised,) = document["notes"]
    assert len(document["profile"]["city"]["history"]) == len(revised["history"]) == MAX_HISTORY  # full
    assert document["profile"]["city"]["history"][-1]["value"] == cities[-2]  # the newest kept
    assert memory(await aexport_user(store, other))[:2] == memory(document)[:2]
