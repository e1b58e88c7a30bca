"""The snapshot's parts (mnemo.turn.parts): every key of a snapshot besides
the notes' recall is one registered part, and each part reads its own results
by name, so their order in the batch does not matter; a kind registered there
reaches every path (the turn's read, the prompt, /memory/search, export, erase)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Op, Result, SearchOp

from mnemo import aupdate_profile
from mnemo.access.privacy import aerase_user, aexport_user
from mnemo.audit import Origin
from mnemo.core import Ask, Block, Caller, Part, User, quote
from mnemo.episodes.cases import arecord_episode, build_episode, render_episodes
from mnemo.notes.writes import aremember_many
from mnemo.turn import parts
from mnemo.turn.snapshot import MemorySnapshot, aload_snapshot, render_blocks
from tests.agent_harness import chat_prompts, say
from tests.episodes.test_cases import case_messages
from tests.web.test_app_memory import app_for, auth

#: The snapshot's keys the notes' recall fills (mnemo.notes.recall.aread_notes).
RECALL_KEYS = {"relevant", "recent", "found_by"}


def test_every_key_of_a_snapshot_besides_recall_is_a_registered_part():
    keys = MemorySnapshot.__required_keys__ | MemorySnapshot.__optional_keys__
    assert RECALL_KEYS <= keys and len(parts.PARTS) > 1
    assert {p.name for p in parts.PARTS} == keys - RECALL_KEYS


async def test_each_part_reads_its_own_results_whatever_their_place_in_the_batch(store, user, monkeypatch):
    await aupdate_profile(store, user, {"name": "Ann", "city": "Suzhou"})
    await aremember_many(store, user, ["The user owns an air purifier.", "The user has two cats."])
    episode = build_episode(case_messages(), assistant_id="a1", thread_id="t1", source="test")
    assert episode is not None
    await arecord_episode(store, user, episode)
    query = "空气净化器不出风了。"
    limits = {"episode_limit": 2, "episode_min_score": 0.0, "similar_limit": 2}

    before = await aload_snapshot(store, user, query, **limits)
    assert before["profile"]["city"]["value"] == "Suzhou"
    assert [e["id"] for e in before["episodes"]] == [episode["id"]]
    assert before["similar"] and all(n["text"].startswith("The user") for n in before["similar"])

    monkeypatch.setattr(parts, "PARTS", parts.PARTS[::-1])
    assert await aload_snapshot(store, user, query, **limits) == before


async def test_the_snapshot_takes_the_parts_limits_by_name_and_no_other(store, user):
    assert parts.part_limits({}) == {"episode_limit": 0, "episode_min_score": 0.88, "similar_limit": 0}
    assert parts.part_limits({"similar_limit": 2})["similar_limit"] == 2
    with pytest.raises(TypeError, match="episode_limt"):
        await aload_snapshot(store, user, "hello", episode_limt=2)


def test_a_run_sets_the_parts_limits_and_the_blocks_budgets_by_their_names():
    from nodes.context import Context

    ctx = Context(episode_limit=1, episode_char_budget=300)
    limits, budgets = parts.settings_of(ctx)
    assert limits == {"episode_limit": 1, "episode_min_score": ctx.episode_min_score}  # no similar_limit: not a knob
    assert budgets == {"episode_char_budget": 300}
    assert parts.slots() == ["examples"]


def test_a_runs_defaults_are_the_parts_turn_defaults():
    """What /memory/search and ``python -m mnemo search`` explain (mnemo.turn.aexplain,
    from the registry's turn defaults) is what a run with the default context reads."""
    from nodes.context import Context

    limits, budgets = parts.settings_of(Context())
    assert limits and budgets  # the precondition: the run sets some of them
    turn_limits, _ = parts.turn_settings({})
    assert limits == {name: parts.part_limits(turn_limits)[name] for name in limits}
    assert budgets == {name: parts.part_budgets({})[name] for name in budgets}


async def test_the_blocks_render_each_parts_value_under_its_budget(store, user):
    episode = build_episode(case_messages(), assistant_id="a1", thread_id="t1", source="test")
    assert episode is not None
    await arecord_episode(store, user, episode)
    snapshot = await aload_snapshot(store, user, "空气净化器不出风了。", episode_limit=2, episode_min_score=0.0)
    assert snapshot["episodes"]
    full = render_blocks(snapshot)["examples"]
    assert full == render_episodes(snapshot["episodes"]) and full.startswith("Past cases")
    assert render_blocks(snapshot, episode_char_budget=50) == {"examples": ""}  # the precondition: it had one
    with pytest.raises(TypeError, match="episode_char_budgt"):
        render_blocks(snapshot, episode_char_budgt=50)


# ------------------------------------------------------------ a kind that exists only here

#: The test kind's namespace under the user's root.
REMINDERS = "test_reminders"


def _reminder_ops(ask: Ask) -> list[Op]:
    limit = ask.limits["reminder_limit"]
    return [SearchOp(ask.user.namespace(REMINDERS), limit=limit)] if limit > 0 else []


async def _reminders(store: BaseStore, ask: Ask, results: Sequence[Result]) -> list[str]:
    return [item.value["text"] for result in results for item in result]  # type: ignore[union-attr]


def _render_reminders(reminders: list[str], budget: int) -> str:
    text = "\n".join(["Open reminders:", *(f"- {quote(r)}" for r in reminders)]) if reminders else ""
    return text if len(text) <= budget else ""


REMINDERS_PART = Part(
    "reminders",
    _reminder_ops,
    _reminders,
    limits={"reminder_limit": 3},
    block=Block(
        "reminders_block",
        "reminder_char_budget",
        500,
        _render_reminders,
        tag="open_reminders",
        about="are reminders the customer set",
    ),
)


def test_a_kind_registered_in_the_registry_alone_reaches_every_path(monkeypatch, store, agent, model):
    """Loaded by a turn, rendered in its prompt, shown by /memory/search, read (not
    written) over the store API, exported and erased: nothing but the registry knows the kind."""
    monkeypatch.setattr(parts, "PARTS", (*parts.PARTS, REMINDERS_PART))
    alice = User.of("alice")
    asyncio.run(store.aput(alice.namespace(REMINDERS), "r1", {"text": "Call back about the refund on Friday."}))
    wanted = ["Call back about the refund on Friday."]

    snapshot: Any = asyncio.run(aload_snapshot(store, alice, "Any news on my refund?"))
    assert snapshot["reminders"] == wanted

    asyncio.run(say(agent, "Any news on my refund?", user="alice"))
    (prompt,) = chat_prompts(model)
    block = _render_reminders(wanted, 500)
    assert f"<open_reminders>\n{block}\n</open_reminders>" in prompt
    assert "<open_reminders> are reminders the customer set" in prompt
    assert prompt.index("Hard rules (always") < prompt.index("</open_reminders>") < prompt.index("</user_memory>")

    found = app_for(monkeypatch, store).get("/memory/search", params={"q": "refund"}, headers=auth()).json()
    assert found["reminders"] == wanted and found["reminders_block"] == block
    assert found["budget"]["reminder_chars"] == len(block) and found["budget"]["reminder_char_budget"] == 500
    assert {"slot": "reminders_block", "tag": "open_reminders", "part": "reminders", "chars": len(block),
            "char_budget": 500} in found["blocks"]  # fmt: skip

    # Over the store's REST API the user reads it and writes it only through mnemo (server.access).
    from server.access import Forbidden, authorize_store

    assert authorize_store(Caller("alice"), "get", alice.namespace(REMINDERS)) == alice.namespace(REMINDERS)
    with pytest.raises(Forbidden, match="is memory"):
        authorize_store(Caller("alice"), "put", alice.namespace(REMINDERS))

    exported = asyncio.run(aexport_user(store, alice))
    assert [item["value"] for item in exported["other"][REMINDERS]] == [{"text": wanted[0]}]
    report = asyncio.run(aerase_user(store, alice, origin=Origin(source="admin", actor="test")))
    assert report["deleted"][REMINDERS] == 1
    assert asyncio.run(aload_snapshot(store, alice, "refund"))["reminders"] == []
