"""The snapshot's parts (mnemo.turn.registry): every key of a snapshot besides
the notes' recall is one registered part, and each part reads its own results
by name, so their order in the batch does not matter."""

from __future__ import annotations

import pytest

from mnemo import aupdate_profile
from mnemo.kinds.episodes import arecord_episode, build_episode, render_episodes
from mnemo.notes.writes import aremember_many
from mnemo.turn import registry
from mnemo.turn.snapshot import MemorySnapshot, aload_snapshot, render_blocks
from tests.kinds.test_episodes import case_messages

#: The snapshot's keys the notes' recall fills (mnemo.notes.recall.aread_notes).
RECALL_KEYS = {"relevant", "recent", "found_by"}


def test_every_key_of_a_snapshot_besides_recall_is_a_registered_part():
    keys = MemorySnapshot.__required_keys__ | MemorySnapshot.__optional_keys__
    assert RECALL_KEYS <= keys
    assert [p.name for p in registry.PARTS] == ["profile", "episodes", "similar"]
    assert {p.name for p in registry.PARTS} == keys - RECALL_KEYS


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

    monkeypatch.setattr(registry, "PARTS", registry.PARTS[::-1])
    assert await aload_snapshot(store, user, query, **limits) == before


async def test_the_snapshot_takes_the_parts_limits_by_name_and_no_other(store, user):
    assert registry.part_limits({}) == {"episode_limit": 0, "episode_min_score": 0.88, "similar_limit": 0}
    assert registry.part_limits({"similar_limit": 2})["similar_limit"] == 2
    with pytest.raises(TypeError, match="episode_limt"):
        await aload_snapshot(store, user, "hello", episode_limt=2)


def test_a_run_sets_the_parts_limits_and_the_blocks_budgets_by_their_names():
    from nodes.context import Context

    ctx = Context(episode_limit=1, episode_char_budget=300)
    limits, budgets = registry.settings_of(ctx)
    assert limits == {"episode_limit": 1, "episode_min_score": ctx.episode_min_score}  # no similar_limit: not a knob
    assert budgets == {"episode_char_budget": 300}
    assert registry.slots() == ["examples"]


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
