"""nodes.tool_gate: a call that deletes or ends memory runs only on the user's own
word (their latest message asks, or confirms the call held the turn before), however
the call arose: returned by the model or written as text (issue 56.3)."""

from __future__ import annotations

from langchain_core.messages import AIMessage, ToolMessage

from harness.scripted import tool_call
from mnemo import User, aremember
from mnemo.access import effect_of
from mnemo.notes import alist_notes
from nodes.tools import MODEL_TOOLS
from tests.agent_harness import say

ZHOU = User.of("u_zhou")
FORGET_TEXT = '```json\n{"name": "forget_note", "arguments": {"about": "cats"}}\n```'


def test_every_tool_declares_what_it_does_to_memory_and_forget_note_ends_it():
    declared = {t.name: (t.metadata or {}).get("memory_effect") for t in MODEL_TOOLS}
    assert None not in declared.values(), declared  # a new tool declares its effect
    assert {n for n in declared if effect_of(next(t for t in MODEL_TOOLS if t.name == n)) == "ends"} == {"forget_note"}


def _last_result(out):
    return [m for m in out["messages"] if isinstance(m, ToolMessage)][-1]


async def _turn(agent, script, said, *replies):
    """One turn in which the model answers ``replies`` in order; the turn's last tool result."""
    steps = iter(replies)
    script.chat = lambda messages: next(steps)
    return _last_result(await say(agent, said, memory_write_mode="hot"))


async def test_a_forget_the_user_did_not_ask_for_waits_and_a_yes_runs_it(agent, model, store, script):
    await aremember(store, ZHOU, "The user has two cats.")
    kept = ["The user has two cats."]
    for written in (tool_call("forget_note", about="cats"), AIMessage(content=FORGET_TEXT)):  # real, then as text
        result = await _turn(agent, script, "Tell me about my cats.", written, AIMessage("Shall I forget them?"))
        assert result.name == "forget_note" and result.text.startswith("Not done: forget_note deletes or ends")
        assert [n["text"] for n in await alist_notes(store, ZHOU)] == kept

    result = await _turn(agent, script, "yes", tool_call("forget_note", about="dogs"), AIMessage("ok"))
    assert result.text.startswith("Not done")  # a yes confirms the call held, not another
    await _turn(agent, script, "What do you know about my cats?", AIMessage(content=FORGET_TEXT), AIMessage("?"))
    assert [n["text"] for n in await alist_notes(store, ZHOU)] == kept

    # 是的 confirms the call held the turn before: it runs.
    result = await _turn(agent, script, "是的", tool_call("forget_note", about="cats"), AIMessage("Forgotten."))
    assert result.text.startswith("Deleted:")
    assert await alist_notes(store, ZHOU) == []


async def test_a_forget_the_user_asked_for_runs_at_once_in_either_language(agent, model, store, script):
    for said, about in (("Please delete the note about my cats.", "cats"), ("把我对花生过敏的记录删掉", "花生")):
        await aremember(store, ZHOU, f"The user likes {about}.")
        result = await _turn(agent, script, said, tool_call("forget_note", about=about), AIMessage("Done."))
        assert result.text.startswith("Deleted:"), result.text
    assert await alist_notes(store, ZHOU) == []
