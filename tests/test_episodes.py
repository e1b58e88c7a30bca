"""Episodic memory (mnemo.kinds.episodes): a resolved case becomes an example for a
similar case in a new thread, never for an unrelated one; shared exemplars
carry no personal data. (That the similarity threshold is the measured one
is bench's test: bench/tests/test_episode_threshold.py.)"""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from mnemo import User, aupdate_profile
from mnemo.core import EPISODES, SHARED_EPISODES_NAMESPACE
from mnemo.kinds.episodes import (
    apromote_episode,
    arecord_episode,
    asimilar_episodes,
    build_episode,
    render_episodes,
)
from tests.agent_harness import chat_prompts, say
from tests.scripted import tool_call

EXAMPLES = "Past cases that went well"


def case_messages():
    call = tool_call("search_policy", query="purifier no air")
    return [
        HumanMessage("空气净化器不出风了。", id="h1"),
        call,
        ToolMessage(
            "Check that the plastic film was removed from the filter.",
            tool_call_id=call.tool_calls[0]["id"],
            name="search_policy",
        ),
        AIMessage("请先撕掉滤芯上的塑料保护膜，然后重新开机。"),
        HumanMessage("谢谢，好了！", id="h2"),
    ]


def test_an_episode_is_the_request_the_actions_and_the_answer_abridged():
    episode = build_episode(case_messages(), assistant_id="a1", thread_id="t1", source="test")
    assert episode["text"] == "空气净化器不出风了。"
    assert episode["actions"] == [
        "search_policy({'query': 'purifier no air'}) -> Check that the plastic film was removed from the filter."
    ]
    assert episode["answer"].startswith("请先撕掉") and episode["outcome"] == "resolved"
    assert episode["id"] == build_episode(case_messages(), assistant_id="a1", thread_id="t1", source="x")["id"]
    assert build_episode(case_messages()[:1], assistant_id="a1", thread_id="t1", source="test") is None  # no answer yet


async def test_a_resolved_case_is_an_example_for_a_similar_case_only(agent, model, store, script):
    steps = iter(
        [
            AIMessage("请先撕掉滤芯上的塑料保护膜，然后重新开机。"),
            tool_call("mark_resolved", how="Removing the plastic film from the new filter."),
            AIMessage("不客气！"),
        ]
    )
    script.chat = lambda messages: next(steps, AIMessage("ok"))
    await say(agent, "空气净化器不出风了。", thread="t1")
    out = await say(agent, "谢谢，好了！", thread="t1")
    assert "Kept this case" in [m for m in out["messages"] if isinstance(m, ToolMessage)][-1].content

    await say(agent, "净化器开着但是没有风", thread="t2")  # a similar case, new thread
    prompt = chat_prompts(model)[-1]
    assert EXAMPLES in prompt and "空气净化器不出风了。" in prompt.split(EXAMPLES)[1]
    assert "Removing the plastic film" in prompt
    assert "谢谢" not in prompt.split(EXAMPLES)[1]  # the thanks is not part of the case

    await say(agent, "滤芯多久换一次？", thread="t3")  # same shop, another problem
    assert EXAMPLES not in chat_prompts(model)[-1]
    await say(agent, "净化器开着但是没有风", user="someone_else", thread="t4")  # another user's case stays theirs
    assert EXAMPLES not in chat_prompts(model)[-1]


async def test_only_resolved_cases_are_examples(store, user):
    unresolved = build_episode(case_messages(), assistant_id="a", thread_id="t9", outcome="unresolved", source="test")
    await arecord_episode(store, user, unresolved)
    assert await asimilar_episodes(store, user, "净化器开着但是没有风") == []
    await arecord_episode(store, user, build_episode(case_messages(), assistant_id="a", thread_id="t9", source="test"))
    assert len(await asimilar_episodes(store, user, "净化器开着但是没有风")) == 1  # same case, now resolved: replaced


async def test_an_unresolved_case_never_becomes_a_shared_example(store, user):
    import pytest

    from mnemo import InvalidInputError

    unresolved = build_episode(case_messages(), assistant_id="a", thread_id="t9", outcome="unresolved", source="test")
    episode = await arecord_episode(store, user, unresolved)
    assert [it.key for it in await store.asearch(user.namespace(EPISODES))] == [episode["id"]]  # it is there
    with pytest.raises(InvalidInputError, match="resolved"):
        await apromote_episode(store, user, episode["id"], promoted_by="admin:li")
    assert await store.asearch(SHARED_EPISODES_NAMESPACE) == []


async def test_shared_exemplars_carry_no_personal_data(store):
    zhou = User.of("zhou.wang@x.com")
    await aupdate_profile(store, zhou, {"name": "Zhou Wang", "city": "Hangzhou"})
    messages = [
        HumanMessage(
            "Hi, I'm Zhou Wang from Hangzhou, my purifier order 884213 makes no air. "
            "Reach me at zhou.wang@x.com or +86 138 0013 8000.",
            id="h1",
        ),
        AIMessage("Zhou Wang, please remove the plastic film from the filter and restart it."),
    ]
    episode = await arecord_episode(
        store, zhou, build_episode(messages, assistant_id="a", thread_id="t1", source="test")
    )
    shared = await apromote_episode(
        store, zhou, episode["id"], promoted_by="admin:li", personal=["Zhou Wang", "Hangzhou"]
    )
    text = " ".join([shared["text"], shared["answer"], *shared["actions"]])
    for secret in ("Zhou", "Hangzhou", "884213", "zhou.wang@x.com", "138", "t1"):
        assert secret not in text and secret not in str(shared.get("thread_id", ""))
    assert "remove the plastic film" in shared["answer"]  # the know-how survives
    assert shared["promoted_by"] == "admin:li"
    other = User.of("u_other")
    found = await asimilar_episodes(store, other, "My purifier makes no air, what should I do?", min_score=0.8)
    assert [e["id"] for e in found] == [shared["id"]]
    stored = await store.asearch(SHARED_EPISODES_NAMESPACE, limit=10)
    assert all("Zhou" not in str(it.value) for it in stored)


def test_examples_stay_under_their_cap():
    episode = build_episode(case_messages(), assistant_id="a", thread_id="t", source="test")
    one = render_episodes([episode])
    assert "Example 1." in one
    assert render_episodes([episode, {**episode, "id": "b"}], char_budget=len(one) + 10).count("Example") == 1
    assert render_episodes([episode], char_budget=50) == "" and render_episodes([]) == ""


async def test_an_admin_promotes_an_episode_from_the_command_line(pg, cached_index):
    """``python -m mnemo promote-episode`` (here on PostgreSQL): the user's
    profile values are scrubbed along with e-mails, numbers and the id."""
    import json
    import os
    import subprocess
    import sys

    from mnemo.stores.factory import open_store
    from tests.store_backends import ROOT, truncate

    zhou = User.of("u_zhou_promote")
    async with open_store(postgres_uri=pg.uri, index=cached_index) as store:
        await truncate(pg.uri)
        await aupdate_profile(store, zhou, {"name": "Zhou Wang", "city": "Hangzhou"})
        messages = [
            HumanMessage("I'm Zhou Wang from Hangzhou; my purifier makes no air.", id="h1"),
            AIMessage("Please remove the plastic film from the filter and restart it."),
        ]
        episode = await arecord_episode(
            store, zhou, build_episode(messages, assistant_id="a", thread_id="t1", source="test")
        )
        env = {**os.environ, "POSTGRES_URI": pg.uri}
        env.pop("MNEMO_URL", None)
        done = subprocess.run(
            [sys.executable, "-m", "mnemo", "promote-episode", zhou.id, episode["id"]],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        shared = json.loads(done.stdout)
        stored = await store.asearch(SHARED_EPISODES_NAMESPACE, limit=10)
    assert [it.key for it in stored] == [shared["id"]]
    assert "purifier" in shared["text"] and "Zhou" not in str(stored[0].value) and "Hangzhou" not in shared["text"]
    missing = subprocess.run(
        [sys.executable, "-m", "mnemo", "promote-episode", zhou.id, "no-such-id"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert missing.returncode == 2 and "no episode" in missing.stderr
