"""mnemo.access.consent: what counts as the user's own word to forget, in English
and Chinese, and when a call that ends memory may run (issue 56.3)."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from mnemo.access.consent import asks_to_end, confirms, consent_refusal, declare, effect_of, held

CALL = {"name": "forget_note", "args": {"about": "my cats"}, "id": "c1"}


@pytest.mark.parametrize(
    "text",
    [
        "Forget that I have cats.",
        "Please delete the note about my cats",
        "remove my address",
        "Erase everything about my job.",
        "Don't remember my address any more.",
        "do not keep that",
        "请忘记我养猫的事",
        "删除关于我猫的记录",
        "把我的地址删掉",
        "去掉那条",
        "不要记我的地址",
        "Don't forget to delete my old address.",
        "不要记住我的地址，删掉旧的",
    ],
)
def test_a_request_to_forget_is_the_users_word(text):
    assert asks_to_end(text)


@pytest.mark.parametrize(
    "text",
    [
        "My purifier makes no air, what should I do?",
        "Don't forget that I'm allergic to peanuts.",
        "Please do not delete my notes",
        "Never forget my birthday.",
        "I remember my cats fondly.",
        "不要忘记我对花生过敏",
        "别删我的笔记",
        "I don't want you to delete my notes.",
        "我不想让你删除它",
        "别把它删了",
        "我的净化器不出风了",
    ],
)
def test_anything_else_and_a_negated_request_are_not(text):
    assert not asks_to_end(text)


@pytest.mark.parametrize(
    "text", ["yes", "Yes.", "OK, go ahead", "yes please", "Confirm", "是的", "确认", "删吧", "好的，删吧"]
)
def test_a_confirmation(text):
    assert confirms(text)


@pytest.mark.parametrize("text", ["no", "yes but not that one", "What?", "", "不要", "不是", "ok what about my dog?"])
def test_not_a_confirmation(text):
    assert not confirms(text)


def _turns(*later):
    return [HumanMessage("Tell me about my cats."), AIMessage("", tool_calls=[CALL]), *later]


def test_a_call_that_ends_memory_waits_for_the_users_word():
    assert consent_refusal("reads", CALL, _turns()) is None and consent_refusal("writes", CALL, _turns()) is None
    why = consent_refusal("ends", CALL, _turns())
    assert why and why.startswith("Not done: forget_note deletes or ends") and "ask them to confirm" in why
    assert consent_refusal("ends", CALL, [HumanMessage("Forget my cats."), AIMessage("", tool_calls=[CALL])]) is None
    assert consent_refusal("ends", CALL, []) is not None  # no user message: no word


def test_a_confirmation_runs_only_the_call_held_in_the_turn_before():
    asked = ToolMessage("Not done", tool_call_id="c1", name="forget_note", status="error", artifact=held(CALL))
    answered = [*_turns(asked, AIMessage("Shall I forget your cats?")), HumanMessage("yes")]
    assert consent_refusal("ends", CALL, [*answered, AIMessage("", tool_calls=[CALL])]) is None
    other = {**CALL, "args": {"about": "my dog"}}
    assert consent_refusal("ends", other, answered) is not None  # not the call held
    without = [*_turns(ToolMessage("Not done", tool_call_id="c1", name="forget_note")), HumanMessage("yes")]
    assert consent_refusal("ends", CALL, without) is not None  # nothing was held: a tool's words are not a hold
    later = [*answered, AIMessage("Done."), HumanMessage("yes")]
    assert consent_refusal("ends", CALL, later) is not None  # held two turns ago: no longer
    assert consent_refusal("ends", CALL, [*answered[:-1], HumanMessage("hmm")]) is not None  # not a confirmation


def test_a_tool_that_declares_nothing_counts_as_ending_memory():
    @tool
    def wipe(x: str) -> str:
        """Wipe."""
        return x

    assert effect_of(wipe) == "ends"
    assert effect_of(declare("reads")(wipe)) == "reads"
    with pytest.raises(ValueError, match="one of"):
        declare("deletes")
