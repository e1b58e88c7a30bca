"""The prompt's layout through a real ``./scripts/dev`` (issue 55, point 3): the
chat model (the stub, an OpenAI-compatible server) gets the rules as the first
system message, the same bytes for every user and turn; the thread's messages
after it; what the turn recalled in a system message just before the turn's
user message, or only what is new there when the part of an earlier turn still
holds. So a runtime's prompt cache reuses everything before the turn.
The parts themselves: tests/nodes/test_prompts.py."""

from __future__ import annotations

import pytest

from harness.devserver import DevServer, chat, client, system_prompts, system_text
from nodes.prompts import UPDATE_INTRO

pytestmark = pytest.mark.e2e


def chat_requests(stub) -> list[dict]:
    prompts = set(system_prompts(stub))
    return [r for r in stub.requests if system_text(r) in prompts]


def roles(request: dict) -> list[str]:
    return [m["role"] for m in request["messages"]]


async def test_every_user_shares_the_rules_and_a_thread_its_history(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        zhou, li = client(server, "u_zhou"), client(server, "u_li")
        first = await chat(zhou, "Hi, I'm Zhou and I live in Hangzhou.", user_id=None)
        assert first["status"] == "success", server.output()
        thread = first["thread_id"]
        again = await chat(zhou, "What do you know about me?", user_id=None, thread_id=thread)
        other = await chat(li, "Hi, I'm Li.", user_id=None)
        assert again["status"] == "success" and other["status"] == "success", server.output()
        before_thanks = len(stub.requests)
        thanks = await chat(zhou, "Thanks!", user_id=None, thread_id=thread)  # nothing new to remember
        assert thanks["status"] == "success", server.output()
    finally:
        server.stop()

    requests = chat_requests(stub)
    thanked = [r for r in requests if r in stub.requests[before_thanks:]]
    requests = [r for r in requests if r not in thanked]
    assert len(requests) >= 3 and len(thanked) == 1, [roles(r) for r in stub.requests]
    turn1, turn2, li_turn, turn3 = requests[0], requests[-2], requests[-1], thanked[0]
    # The rules: the first message, byte for byte the same for both users and every turn.
    rules = turn1["messages"][0]
    assert rules["role"] == "system" and "Hard rules (always apply" in rules["content"]  # positive, first
    assert {r["messages"][0]["content"] for r in requests} == {rules["content"]}
    assert "Zhou" not in rules["content"] and "Li" not in rules["content"].replace("Line", "")
    assert turn1.get("tools") and turn1["tools"] == turn2["tools"] == li_turn["tools"]  # the same tools after it
    # What the turn recalled: the system message just before the turn's user message.
    assert roles(turn2)[-2:] == ["system", "user"] and turn2["messages"][-1]["content"] == "What do you know about me?"
    recalled = turn2["messages"][-2]["content"]
    assert "<user_memory>" in recalled and "Zhou" in recalled and "Hard rules (always" not in recalled
    assert "Zhou" not in li_turn["messages"][-2]["content"]  # each user's own, at the end
    said = [m for m in turn2["messages"] if m["role"] == "user"]
    assert [m["content"] for m in said] == ["Hi, I'm Zhou and I live in Hangzhou.", "What do you know about me?"]
    # Turn 2 recalled what turn 1 did and more: turn 1's part stays where it stood, so all of turn 1's
    # request starts turn 2's, and only what is new (the name) comes in an update before the message.
    assert "(no profile yet" in turn1["messages"][1]["content"] and "Zhou" not in turn1["messages"][1]["content"]
    assert turn2["messages"][: len(turn1["messages"])] == turn1["messages"]
    assert roles(turn2)[len(turn1["messages"]) :] == ["assistant", "system", "user"]
    assert recalled.startswith(f"<user_memory>\n{UPDATE_INTRO}\n")
    # Turn 3 recalled the same as turn 2: its part stays where it stood, so all of turn 2's request is
    # the start of turn 3's (what a runtime has cached), then turn 2's answer and the new message.
    assert turn3["messages"][: len(turn2["messages"])] == turn2["messages"]
    assert roles(turn3)[len(turn2["messages"]) :] == ["assistant", "user"]
