"""mnemo.writing.consolidate: one user's notes that say the same thing are
merged (nothing lost), likely contradictions are listed, not resolved;
bounded in model calls and store round trips."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from harness.scripted import ScriptedChatModel, tool_call, unbounded
from mnemo.access import aexport_user
from mnemo.audit import Origin
from mnemo.audit.chain import alist_audit
from mnemo.core import INVALIDATED_NOTES, User
from mnemo.notes import alist_notes, aremember
from mnemo.writing import aconsolidate
from mnemo.writing import consolidate as consolidation

ADMIN = Origin(source="admin", actor="test")
NOTES = [
    "The user is allergic to peanuts.",
    "Peanuts make the user sick.",
    "The user has two cats.",
    "The user has one cat.",
    "The user drives an electric car.",
]
SHOWN = re.compile(r'^- "(.*)"  \(id "(n\d+)"\)$', re.M)


def judge(messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
    """Merges the peanut notes, flags the cats; and two malformed merges."""
    ids = dict(SHOWN.findall(messages[-1].text))
    merges, contradictions = [], []
    if "The user is allergic to peanuts." in ids:
        pair = [ids["The user is allergic to peanuts."], ids["Peanuts make the user sick."]]
        merges.append({"ids": pair, "text": "The user is allergic to peanuts and cannot eat them."})
        merges.append({"ids": [pair[0], "n77"], "text": "The user likes peanuts."})  # unknown id: ignored
    if "The user has two cats." in ids:
        contradictions.append({"ids": [ids["The user has two cats."], ids["The user has one cat."]], "why": "count"})
        merges.append(
            {"ids": [ids["The user has two cats."]], "text": "The user has three cats."}
        )  # one note: no merge
    return tool_call("Consolidation", merges=merges, contradictions=contradictions)


async def seeded(store) -> tuple[User, dict[str, str]]:
    user = User.of("u_zhou")
    ids = {text: (await aremember(store, user, text))["note"]["id"] for text in NOTES}
    assert len({*ids.values()}) == len(NOTES)  # precondition: write-time dedupe kept them apart
    return user, ids


async def test_merges_what_says_the_same_and_lists_contradictions_keeping_everything(counting_store):
    user, ids = await seeded(counting_store)
    model = ScriptedChatModel(respond=judge)
    counting_store.trips = 0
    report = await aconsolidate(counting_store, user, model, origin=ADMIN)
    assert counting_store.trips <= 5  # list, one search batch, index read, audit head read, one write
    assert report["model_calls"] == len(model.calls) == 1
    kept = ids["The user is allergic to peanuts."]
    merged = ids["Peanuts make the user sick."]
    assert report["merged"] == [
        {"kept": kept, "text": "The user is allergic to peanuts and cannot eat them.", "merged": [merged]}
    ]
    (contradiction,) = report["contradictions"]
    assert {n["text"] for n in contradiction["notes"]} == {"The user has two cats.", "The user has one cat."}
    notes = {n["text"]: n for n in await alist_notes(counting_store, user)}
    assert set(notes) == {
        "The user is allergic to peanuts and cannot eat them.",
        "The user has two cats.",  # a contradiction is listed, never resolved here
        "The user has one cat.",
        "The user drives an electric car.",
    }
    assert notes["The user is allergic to peanuts and cannot eat them."]["history"][0]["text"] == NOTES[0]
    (moved,) = (await aexport_user(counting_store, user))["other"][INVALIDATED_NOTES]
    assert (moved["key"], moved["value"]["merged_into"]) == (merged, kept)
    assert moved["value"]["history"][0]["text"] == "Peanuts make the user sick."


def test_every_string_and_list_of_the_consolidation_schema_is_bounded():
    """A grammar-constrained server (llama.cpp, vLLM) cannot generate without end."""
    assert unbounded(consolidation.Consolidation.model_json_schema()) == (4, 4, [])  # ids x2, text, why; 4 lists


async def test_an_answer_past_the_bounds_is_cut_to_them_not_refused(store):
    """Lists and reasons are cut; a merged text is kept whole (the notes it
    replaces are set aside), up to a note's own limit."""
    user, ids = await seeded(store)
    merged = " ".join(["The user is allergic to peanuts and cannot eat them."] * 7)
    assert consolidation.MAX_MERGED_TEXT < len(merged) < 1000  # past the schema's bound, within a note's

    def overlong(messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
        shown = dict(SHOWN.findall(messages[-1].text))
        peanuts, cats = [shown[NOTES[0]], shown[NOTES[1]]], [shown[NOTES[2]], shown[NOTES[3]]]
        return tool_call(
            "Consolidation",
            merges=[{"ids": [*peanuts, *["n99"] * 30], "text": merged}],
            contradictions=[{"ids": cats, "why": "w" * 1000}] * 9,
        )

    report = await aconsolidate(store, user, ScriptedChatModel(respond=overlong), origin=ADMIN)
    assert report["merged"] == [
        {"kept": ids[NOTES[0]], "text": merged, "merged": [ids[NOTES[1]]]}
    ]  # the ids cut to the first ones
    assert len(report["contradictions"]) == consolidation.MAX_CONTRADICTIONS
    assert {c["why"] for c in report["contradictions"]} == {"w" * consolidation.MAX_WHY_CHARS}
    assert merged in {n["text"] for n in await alist_notes(store, user)}


async def test_model_calls_are_bounded_and_the_rest_is_left_for_later(store, monkeypatch):
    monkeypatch.setattr(consolidation, "MAX_NOTES_PER_CALL", 2)  # one group per call
    user, _ = await seeded(store)
    model = ScriptedChatModel(respond=judge)
    report = await aconsolidate(store, user, model, origin=ADMIN, max_calls=1)
    assert report["model_calls"] == len(model.calls) == 1
    assert report["groups_not_examined"] >= 1


@pytest.mark.parametrize(
    "answer", [AIMessage(content="no tool call"), tool_call("Consolidation", merges=[{"ids": ["x"]}])]
)
async def test_a_failed_or_malformed_judgement_changes_nothing(store, answer):
    user, _ = await seeded(store)
    report = await aconsolidate(store, user, ScriptedChatModel(respond=lambda m, t: answer), origin=ADMIN)
    assert report["merged"] == [] and report["model_calls"] == 1
    assert sorted(n["text"] for n in await alist_notes(store, user)) == sorted(NOTES)


def test_the_cli_command_consolidates_one_user_and_prints_the_report(store, monkeypatch, capsys):
    import asyncio
    import json
    from contextlib import asynccontextmanager

    from mnemo.cli import main, memory_commands
    from mnemo.models.build import MODELS

    user, ids = asyncio.run(seeded(store))

    @asynccontextmanager
    async def local_store():
        yield store

    monkeypatch.setattr(memory_commands, "open_local_store", local_store)
    monkeypatch.setitem(MODELS, "scripted:any", ScriptedChatModel(respond=judge))
    # The server's one way to build a model: the allow list holds for operators too.
    monkeypatch.setenv("MNEMO_ALLOWED_MODELS", "openai:other")
    assert main(["consolidate", user.id, "--model", "openai:not-allowed"]) == 2
    assert "model 'openai:not-allowed' is not allowed" in capsys.readouterr().err
    monkeypatch.setenv("MNEMO_ALLOWED_MODELS", "scripted:any")
    assert main(["consolidate", user.id, "--model", "scripted:any"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["merged"][0]["kept"] == ids["The user is allergic to peanuts."]
    assert report["model_calls"] == 1 and len(report["contradictions"]) == 1
    records = asyncio.run(alist_audit(store, user))
    assert {r["source"] for r in records if r["action"] in ("note.update", "note.invalidate")} == {"admin"}


@pytest.mark.parametrize("profile", ["llamacpp", "nostructured"])
async def test_a_pass_against_the_servers_users_run_reads_their_answer_or_says_why(store, caplog, profile):
    """llama.cpp answers the json_schema it enforces (once a pydantic
    ValidationError on ``None``); a server with no structured output leaves
    the notes as they are, with one WARNING naming the fix, no traceback."""
    import logging

    from langchain.chat_models import init_chat_model

    from harness.stub_openai import StubServer

    user, ids = await seeded(store)
    caplog.set_level(logging.WARNING)
    with StubServer(profile=profile) as stub:
        model = init_chat_model("openai:stub", base_url=stub.base_url, api_key="not-a-key", max_retries=0)
        report = await aconsolidate(store, user, model, origin=ADMIN)
        assert report["model_calls"] == 1 and report["merged"] == [] and report["contradictions"] == []
        assert stub.requests[0]["response_format"]["json_schema"]["name"] == "Consolidation"
        assert unbounded(stub.requests[0]["response_format"]["json_schema"]["schema"]) == (4, 4, [])  # bounds sent
    warnings = [r for r in caplog.records if r.levelname == "WARNING"]
    if profile == "llamacpp":
        assert warnings == [], [r.getMessage() for r in warnings]
    else:
        (warning,) = warnings
        assert "consolidation: the model server gave no usable structured answer" in warning.getMessage()
        assert "python -m mnemo doctor" in warning.getMessage() and warning.exc_info is None
    assert len(await alist_notes(store, user)) == len(ids)  # nothing lost either way
