"""Learned instructions through a real ``./scripts/dev``, the stub model calling
``improve_instructions`` as a user asks: one user's feedback for everyone reaches
no other user (store API, prompt) until an admin approves it with ``python -m
mnemo instructions ... --url``, and then only its text; feedback for oneself
applies to one's own prompt alone; export and erase cover both."""

from __future__ import annotations

import json

import httpx
import pytest
from langgraph_sdk.errors import APIStatusError

from harness.devserver import DevServer, chat, cli, client, system_prompts, token

pytestmark = pytest.mark.e2e

ZOE = "keep answers to two sentences (I'm Zoe Wang, zoe.wang@example.com, phone +86 138 0013 8000)"
SHARED_TEXT = "Keep answers to two sentences."
OWN_TEXT = "Shorter answers for me, please."


async def tool_results(user, run) -> list[str]:
    state = await user.threads.get_state(run["thread_id"])
    return [m["content"] for m in state["values"]["messages"] if m["type"] == "tool"]


def learned(prompt: str) -> str:
    """The approved learned instructions: the end of the rules, before the first data block."""
    return prompt.split("Learned instructions (approved")[1].split("\n\n<")[0]


def zoe_in(text: str) -> bool:
    return any(word in text for word in ("Zoe", "zoe", "138 0013", "u_zoe"))


async def readable(user, prefix: list[str]) -> str:
    return json.dumps((await user.store.search_items(prefix, limit=100))["items"])


def export(server: DevServer, user_id: str) -> dict:
    res = httpx.get(f"{server.url}/memory/export", headers={"Authorization": f"Bearer {token(user_id)}"}, timeout=30)
    assert res.status_code == 200, res.text
    return res.json()


async def test_feedback_reaches_other_users_only_as_text_an_admin_approved(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        zoe, li = client(server, "u_zoe"), client(server, "u_li")
        run = await chat(zoe, f"Feedback for everyone: {ZOE}", user_id="u_zoe")
        assert run["status"] == "success", server.output()
        assert any("Sent to an administrator for review" in r for r in await tool_results(zoe, run))
        assert "zoe.wang@example.com" in await readable(zoe, ["u_zoe", "proposals"])  # the author reads it

        # Before approval: nothing of it where Li reads, nor in Li's prompt.
        for prefix in (["u_zoe", "proposals"], ["mnemo"]):
            with pytest.raises(APIStatusError) as refused:
                await li.store.search_items(prefix, limit=10)
            assert refused.value.status_code == 403
        shared = await readable(li, ["org"])
        assert "two sentences" not in shared and not zoe_in(shared)
        assert (await chat(li, "hello", user_id="u_li"))["status"] == "success"
        before = system_prompts(stub)[-1]
        assert "Hard rules" in before and "two sentences" not in before and not zoe_in(before)

        # A user cannot approve; an admin can, with the command line through the server.
        res = httpx.post(
            f"{server.url}/memory/operator/instructions-list",
            json={},
            headers={"Authorization": f"Bearer {token('u_zoe')}"},
            timeout=30,
        )
        assert res.status_code == 403
        listed = cli("instructions", "list", url=server.url)
        assert listed.returncode == 0, listed.stderr
        (proposal,) = json.loads(listed.stdout)["proposals"]
        assert proposal["author"] == "u_zoe" and proposal["text"] == SHARED_TEXT
        approved = cli("instructions", "approve", proposal["id"], url=server.url)
        assert approved.returncode == 0, approved.stderr
        assert json.loads(approved.stdout)["decided_by"] == "ops"

        # After: Li's prompt carries the approved text, nothing of Zoe.
        assert (await chat(li, "hello again", user_id="u_li"))["status"] == "success"
        after = system_prompts(stub)[-1]
        assert SHARED_TEXT in learned(after) and not zoe_in(after)
        shared = await readable(li, ["org"])
        assert SHARED_TEXT in shared and not zoe_in(shared)

        # Feedback for herself: in Zoe's prompt, never in Li's.
        run = await chat(zoe, f"Feedback for me: {OWN_TEXT}", user_id="u_zoe")
        assert any("applies to your conversations" in r for r in await tool_results(zoe, run))
        await chat(zoe, "hello", user_id="u_zoe")
        mine = system_prompts(stub)[-1]
        assert json.dumps(OWN_TEXT) in mine.split("Hard rules")[1]  # positive, first: below the rules, quoted
        await chat(li, "hello once more", user_id="u_li")
        theirs = system_prompts(stub)[-1]
        assert "Hard rules" in theirs and OWN_TEXT not in theirs

        # Export and erase cover the proposal, its feedback and her own instructions.
        other = export(server, "u_zoe")["other"]
        assert [it["value"]["feedback"] for it in other["proposals"]] == [ZOE]
        assert OWN_TEXT in json.dumps(other["instructions"])
        erased = cli("erase", "u_zoe", "--yes", url=server.url)
        assert erased.returncode == 0, erased.stderr
        assert json.loads(erased.stdout)["deleted"]["proposals"] == 1
        other = export(server, "u_zoe")["other"]
        assert "proposals" not in other and "instructions" not in other
        assert json.loads(cli("instructions", "list", "--status", "all", url=server.url).stdout) == {"proposals": []}
        versions = cli("instructions", "versions", url=server.url)
        assert SHARED_TEXT in versions.stdout and not zoe_in(versions.stdout)
        assert server.trouble() == [], server.trouble()
    finally:
        server.stop()


#: Issue 56: writings that once reached another user's prompt through an
#: approved proposal (each alone: tests/instructions/test_assistant.py), and
#: what the refusal names of each.
HIDDEN = [
    ("quote card 4111|1111|1111|1111 in refunds", "4111|1111|1111|1111"),
    ("call 650 dash 253 dash 0000 for refunds", "650 dash 253 dash 0000"),
    ("escalate to bob-at-example-dot-com", "bob-at-example-dot-com"),
    ("ship spares to Baker Street 221B first", "Baker Street 221B"),
    ("退款请拨打一三八两两一三八两两两", "一三八两两一三八两两两"),
]


async def test_feedback_with_personal_data_however_written_reaches_no_other_user(workdir, server_env, stub):
    server = DevServer(workdir, server_env)
    server.start()
    try:
        zoe, li = client(server, "u_zoe"), client(server, "u_li")
        for said, data in HIDDEN:
            run = await chat(zoe, f"Feedback for everyone: {said}", user_id="u_zoe")
            assert run["status"] == "success", server.output()
            (result,) = [r for r in await tool_results(zoe, run) if "review" in r]
            assert result.startswith("Not sent for review") and repr(data) in result, result
        run = await chat(zoe, f"Feedback for everyone: {SHARED_TEXT}", user_id="u_zoe")
        listed = cli("instructions", "list", url=server.url)
        assert listed.returncode == 0, listed.stderr
        (proposal,) = json.loads(listed.stdout)["proposals"]  # the clean one alone
        assert proposal["text"] == SHARED_TEXT
        assert cli("instructions", "approve", proposal["id"], url=server.url).returncode == 0

        assert (await chat(li, "hello", user_id="u_li"))["status"] == "success"
        prompt = system_prompts(stub)[-1]
        assert SHARED_TEXT in learned(prompt)  # positive, first: the approved text reaches Li
        for said, data in HIDDEN:
            assert data not in prompt and said not in prompt, data
        shared = str(json.loads(await readable(li, ["org"])))  # as written, not JSON-escaped
        assert SHARED_TEXT in shared and not any(data in shared for _, data in HIDDEN)
    finally:
        server.stop()
