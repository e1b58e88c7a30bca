"""mnemo.turn.explain: what a turn would be shown, and why, as the turn renders it."""

from __future__ import annotations

import pytest

from mnemo import aremember_many, aupdate_profile
from mnemo.turn import aexplain, aload_snapshot, render_snapshot, summary_lines


async def test_notes_past_the_budget_are_said_to_be_left_out_and_the_block_is_the_turns(store, user):
    texts = [f"Ordered parcel number {i} for the garden shed project." for i in range(8)]
    await aremember_many(store, user, texts)
    await aupdate_profile(store, user, {"city": "Hangzhou"})
    explained = await aexplain(store, user, "Where is my garden parcel?", char_budget=300)
    entries = [*explained["relevant"], *explained["recent"]]
    shown = [e for e in entries if e["in_prompt"]]
    left = [e for e in entries if not e["in_prompt"]]
    assert shown and left and explained["budget"]["notes_left_out"] == len(left)
    snapshot = await aload_snapshot(store, user, "Where is my garden parcel?")
    assert explained["memory"] == render_snapshot(snapshot, char_budget=300)
    assert all(e["note"]["text"] in explained["memory"] for e in shown)
    assert not any(e["note"]["text"] in explained["memory"] for e in left)
    assert explained["budget"]["memory_chars"] == len(explained["memory"]) <= 300
    assert any("(left out)" in line for line in summary_lines(explained))


async def test_each_relevant_note_says_which_rankings_found_it(store, user):
    await aremember_many(store, user, ["Has a dog called Max.", "Likes green tea.", "Lives near the river."])
    explained = await aexplain(store, user, "dog")
    top = explained["relevant"][0]
    assert top["note"]["text"] == "Has a dog called Max."
    assert top["found_by"]["words"] == 1  # the only note with the word
    assert all("words" not in e["found_by"] for e in explained["relevant"][1:])


async def test_it_takes_the_snapshots_settings_by_name_over_a_turns_defaults(store, user):
    from mnemo.episodes import EPISODE_CHAR_BUDGET, EPISODE_LIMIT, arecord_episode, build_episode
    from tests.episodes.test_cases import case_messages

    episode = build_episode(case_messages(), assistant_id="a1", thread_id="t1", source="test")
    assert episode is not None
    await arecord_episode(store, user, episode)
    query = "空气净化器不出风了。"
    turn = await aexplain(store, user, query, episode_min_score=0.0)  # a turn reads EPISODE_LIMIT cases
    assert EPISODE_LIMIT > 0 and [e["id"] for e in turn["episodes"]] == [episode["id"]]
    assert turn["examples"] and turn["budget"]["episode_chars"] == len(turn["examples"])
    assert turn["budget"]["episode_char_budget"] == EPISODE_CHAR_BUDGET
    tight = await aexplain(store, user, query, episode_min_score=0.0, episode_char_budget=10)
    assert tight["episodes"] and tight["examples"] == "" and tight["budget"]["episode_char_budget"] == 10
    assert (await aexplain(store, user, query, episode_min_score=0.0, episode_limit=0))["episodes"] == []
    with pytest.raises(TypeError, match="episode_limt"):
        await aexplain(store, user, query, episode_limt=1)
