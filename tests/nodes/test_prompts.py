"""The prompt's layout (nodes/prompts.py): what every user shares first, what the
turn recalled last, and one system message for a model that takes only one.
Through the served agent: tests/e2e/test_prompt_layout.py."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai import ChatOpenAI

from harness.scripted import ScriptedChatModel
from nodes.prompts import (
    MEMORY_TAG,
    OWN_TAG,
    SUMMARY_TAG,
    TURN_END,
    anchor_for,
    for_model,
    lay_out,
    render_prompt,
    turn_digest,
)

EARLIER = [HumanMessage("Hi, I'm Zhou.", id="h1"), AIMessage("Hello Zhou!", id="a1")]
TURN = [
    HumanMessage("Remember I'm vegetarian.", id="h2"),
    AIMessage("", tool_calls=[{"name": "remember_note", "args": {"text": "vegetarian"}, "id": "c1"}], id="a2"),
    ToolMessage("ok", tool_call_id="c1", id="t1"),
]


def parts(**kw):
    return render_prompt(instructions="Be kind.", memory='Profile:\n- name: "Zhou"', **kw)


def test_the_rules_are_the_same_whoever_the_user_and_whatever_they_said():
    zhou = parts(summary="Zhou asked about a parcel.", own_instructions="Short answers.")
    li = render_prompt(instructions="Be kind.", memory='Profile:\n- name: "Li"', blocks={})
    assert "Hard rules (always apply" in zhou.rules and "Be kind." in zhou.rules  # positive, first
    assert zhou.rules == li.rules
    for text in ("Zhou", "parcel", "Short answers", f"<{MEMORY_TAG}>\n", f"<{SUMMARY_TAG}>\n", f"<{OWN_TAG}>\n"):
        assert text in zhou.joined() and text not in zhou.rules, text


def test_what_lasts_a_thread_stands_before_it_and_what_the_turn_recalled_comes_last():
    p = parts(summary="Zhou asked about a parcel.", own_instructions="Short answers.")
    assert f"<{OWN_TAG}>\n" in p.standing and f"<{SUMMARY_TAG}>\n" in p.standing
    assert f"<{MEMORY_TAG}>\n" in p.turn and p.turn.endswith(TURN_END)
    assert f"<{MEMORY_TAG}>" not in p.standing and f"<{SUMMARY_TAG}>" not in p.turn
    assert parts().standing == ""  # nothing stands: the message is left out


def test_lay_out_puts_the_turn_part_just_before_the_turns_user_message():
    p = parts(summary="earlier")
    prompt = lay_out(rules=p.rules, standing=p.standing, turn=p.turn, messages=[*EARLIER, *TURN])
    assert [type(m).__name__ for m in prompt] == [
        "SystemMessage",
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
    ]
    assert [prompt[0].text, prompt[1].text, prompt[4].text] == [p.rules, p.standing, p.turn]
    assert prompt[2:4] == EARLIER and prompt[5:] == TURN
    # No standing part: no empty message; no user message yet: the turn part leads the thread.
    bare = lay_out(rules="R", standing="", turn="T", messages=[AIMessage("x")])
    assert [m.text for m in bare] == ["R", "T", "x"]


def test_the_next_turn_reuses_everything_before_the_turn_part():
    p = parts()
    first = lay_out(rules=p.rules, standing="", turn=p.turn, messages=EARLIER[:1])
    second = lay_out(rules=p.rules, standing="", turn="other notes", messages=[*EARLIER, TURN[0]])
    shared = [a for a, b in zip(first, second, strict=False) if a == b]
    assert shared == first[:1] and second[1:3] == EARLIER  # the rules, then the thread as it was


def test_an_openai_compatible_model_keeps_the_parts_and_another_gets_them_joined_in_order():
    p = parts(summary="earlier")
    prompt = lay_out(rules=p.rules, standing=p.standing, turn=p.turn, messages=[*EARLIER, *TURN])
    openai = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    assert for_model(openai, prompt) == prompt
    joined = for_model(ScriptedChatModel(respond=lambda messages, tool_names: AIMessage("ok")), prompt)
    assert isinstance(joined[0], SystemMessage) and joined[0].text == p.joined()
    assert joined[1:] == [*EARLIER, *TURN]  # every other message kept, in order
    assert not any(isinstance(m, SystemMessage) for m in joined[1:])


def test_an_unchanged_turn_part_stays_where_it_stood_so_the_whole_last_request_is_reused():
    p = parts()
    first = lay_out(
        rules=p.rules, standing="", turn=p.turn, messages=EARLIER[:1], anchor=anchor_for(EARLIER[:1], p.turn, None)
    )
    kept = {"digest": turn_digest(p.turn), "anchor": anchor_for(EARLIER[:1], p.turn, None)}
    assert kept["anchor"] == "h1"  # positive, first: the turn's own user message
    later = [*EARLIER, TURN[0]]
    same = lay_out(rules=p.rules, standing="", turn=p.turn, messages=later, anchor=anchor_for(later, p.turn, kept))
    assert same[: len(first)] == first  # the last request, whole, then what is new
    assert [m.text for m in same[len(first) :]] == ["Hello Zhou!", "Remember I'm vegetarian."]
    # A changed part goes before the turn's own message; so does one whose message is no longer shown.
    assert anchor_for(later, "other notes", kept) == "h2"
    assert anchor_for(later[1:], p.turn, kept) == "h2"
    assert anchor_for([AIMessage("x")], p.turn, kept) is None
    moved = lay_out(rules="R", standing="", turn="T", messages=later, anchor="gone")
    assert [m.text for m in moved][-2:] == ["T", "Remember I'm vegetarian."]
