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
    PLACED_BEYOND_TURN,
    SUMMARY_TAG,
    TURN_END,
    UPDATE_INTRO,
    for_model,
    lay_out,
    place_turn,
    render_prompt,
    turn_update,
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
    prompt = lay_out(rules=p.rules, standing=p.standing, placed=[(None, p.turn)], messages=[*EARLIER, *TURN])
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
    bare = lay_out(rules="R", standing="", placed=[(None, "T")], messages=[AIMessage("x")])
    assert [m.text for m in bare] == ["R", "T", "x"]


def test_a_part_that_adding_cannot_bring_up_to_date_moves_before_the_turns_message():
    p = parts()
    first = lay_out(rules=p.rules, standing="", placed=place_turn(EARLIER[:1], p.turn, None), messages=EARLIER[:1])
    kept = {"placed": place_turn(EARLIER[:1], p.turn, None)}
    gone = render_prompt(instructions="Be kind.", memory='Profile:\n- city: "Hangzhou"').turn  # the name line is gone
    later = [*EARLIER, TURN[0]]
    assert place_turn(later, gone, kept) == [("h2", gone)]
    second = lay_out(rules=p.rules, standing="", placed=place_turn(later, gone, kept), messages=later)
    shared = [a for a, b in zip(first, second, strict=False) if a == b]
    assert shared == first[:1] and second[1:3] == EARLIER  # the rules, then the thread as it was


def test_an_openai_compatible_model_keeps_the_parts_and_another_gets_them_joined_in_order():
    p = parts(summary="earlier")
    prompt = lay_out(rules=p.rules, standing=p.standing, placed=[(None, p.turn)], messages=[*EARLIER, *TURN])
    openai = ChatOpenAI(model="gpt-4o-mini", api_key="sk-test", base_url="http://127.0.0.1:9/v1")
    assert for_model(openai, prompt) == prompt
    joined = for_model(ScriptedChatModel(respond=lambda messages, tool_names: AIMessage("ok")), prompt)
    assert isinstance(joined[0], SystemMessage) and joined[0].text == p.joined()
    assert joined[1:] == [*EARLIER, *TURN]  # every other message kept, in order
    assert not any(isinstance(m, SystemMessage) for m in joined[1:])


def test_an_unchanged_turn_part_stays_where_it_stood_so_the_whole_last_request_is_reused():
    p = parts()
    placed = place_turn(EARLIER[:1], p.turn, None)
    assert placed == [("h1", p.turn)]  # positive, first: the turn's own user message
    first = lay_out(rules=p.rules, standing="", placed=placed, messages=EARLIER[:1])
    later = [*EARLIER, TURN[0]]
    kept = {"placed": [list(x) for x in placed]}  # as the state keeps it
    same = lay_out(rules=p.rules, standing="", placed=place_turn(later, p.turn, kept), messages=later)
    assert same[: len(first)] == first  # the last request, whole, then what is new
    assert [m.text for m in same[len(first) :]] == ["Hello Zhou!", "Remember I'm vegetarian."]
    # One whose message is no longer shown goes before the turn's own message; none without one.
    assert place_turn(later[1:], p.turn, kept) == [("h2", p.turn)]
    assert place_turn([AIMessage("x")], p.turn, kept) == [(None, p.turn)]
    moved = lay_out(rules="R", standing="", placed=[("gone", "T")], messages=later)
    assert [m.text for m in moved][-2:] == ["T", "Remember I'm vegetarian."]


def memory(*lines):
    return render_prompt(instructions="Be kind.", memory="\n".join(lines)).turn


BEFORE_MEMORY = "\n".join(
    ["Profile:", '- name: "Zhou"  ("said 2026-12-01")', "Most recent notes:", '- "Vegetarian."  ("said")']
)
BEFORE = memory(BEFORE_MEMORY)


def test_what_is_new_in_the_turn_part_comes_as_an_update_before_the_turns_message_and_the_rest_stays():
    now = memory(
        "Profile:",
        '- name: "Zhou"  ("said 2026-12-01")',
        '- city: "Hangzhou"  ("said 2026-12-07")',
        "Notes relevant to the latest message:",
        '- "Allergic to peanuts."  ("said")',
        "Most recent notes:",
        '- "Vegetarian."  ("said")',
    )
    update = turn_update([BEFORE], now)
    assert update and update.startswith(f"<{MEMORY_TAG}>\n{UPDATE_INTRO}\n") and update.endswith(TURN_END)
    assert f"<{MEMORY_TAG}>\n" in update
    shown = update.split("\n")
    assert 'Hangzhou"' in update and "Allergic to peanuts" in update  # positive, first: the new lines
    assert 'Zhou"' not in update and "Vegetarian" not in update  # shown already, not read again
    assert shown.index("Profile:") < shown.index('- city: "Hangzhou"  ("said 2026-12-07")')  # under their titles
    assert "Notes relevant to the latest message:" in shown and "Most recent notes:" not in shown
    later = [*EARLIER, TURN[0]]
    placed = place_turn(later, now, {"placed": [["h1", BEFORE]]})
    assert placed == [("h1", BEFORE), ("h2", update)]
    prompt = lay_out(rules="R", standing="", placed=placed, messages=later)
    assert [m.text for m in prompt] == ["R", BEFORE, "Hi, I'm Zhou.", "Hello Zhou!", update, "Remember I'm vegetarian."]
    # The next turn adds up what was shown: nothing new, nothing read again.
    assert turn_update([BEFORE, update], now) == ""
    assert place_turn([*later, AIMessage("ok"), HumanMessage("Thanks", id="h3")], now, {"placed": placed}) == placed


def test_a_line_changed_or_gone_or_another_block_changed_moves_the_whole_part():
    moved = memory(
        "Profile:", '- name: "Zhou Li"  ("said 2026-12-07")', "Most recent notes:", '- "Vegetarian."  ("said")'
    )
    assert turn_update([BEFORE], moved) is None  # "Zhou" would stay in view beside "Zhou Li"
    assert turn_update([BEFORE], memory("Profile:", '- name: "Zhou"  ("said 2026-12-01")', "Notes: (none)")) is None
    assert turn_update([BEFORE], memory("Profile:", "Most recent notes:", '- "Vegetarian."  ("said")')) is None
    # An empty memory's placeholders give way to what the user says; a notice that memory is unavailable moves.
    empty = memory("Profile:", "(no profile yet: nothing is known about this user; do not guess)", "Notes: (none)")
    named = turn_update([empty], memory("Profile:", '- name: "Zhou"  ("said 2026-12-01")', "Notes: (none)"))
    assert named and 'name: "Zhou"' in named and "no profile yet" not in named
    assert turn_update([empty], memory("(long-term memory is unavailable this turn: StoreUnavailableError)")) is None
    cases = render_prompt(instructions="", memory="Profile:", blocks={"examples": "Example 1."}).turn
    assert "<past_cases>" in cases  # positive: the examples have a block of their own
    first = turn_update(
        [BEFORE], render_prompt(instructions="", memory=BEFORE_MEMORY, blocks={"examples": "Example 1."}).turn
    )
    assert first and "<past_cases>\nExample 1.\n</past_cases>" in first  # a block not shown yet: whole
    with_cases = render_prompt(instructions="", memory=BEFORE_MEMORY, blocks={"examples": "Example 1."}).turn
    other = render_prompt(instructions="", memory=BEFORE_MEMORY, blocks={"examples": "Example 2."}).turn
    assert turn_update([with_cases], with_cases) == "" and turn_update([with_cases], other) is None
    assert turn_update([with_cases], BEFORE) is None  # a block no longer recalled
    later = [*EARLIER, TURN[0]]
    assert place_turn(later, moved, {"placed": [["h1", BEFORE]]}) == [("h2", moved)]
    # A model that gets its system messages joined: kept while unchanged, else moved, never updated.
    more = memory(BEFORE_MEMORY, '- "Allergic to peanuts."  ("said")')
    assert place_turn(later, more, {"placed": [["h1", BEFORE]]})[0] == ("h1", BEFORE)  # positive: updated
    assert place_turn(later, more, {"placed": [["h1", BEFORE]]}, updates=False) == [("h2", more)]
    assert place_turn(later, BEFORE, {"placed": [["h1", BEFORE]]}, updates=False) == [("h1", BEFORE)]


def test_updates_add_a_bounded_text_to_the_prompt_then_the_part_moves_whole():
    placed = place_turn(EARLIER[:1], BEFORE, None)
    thread = list(EARLIER[:1])
    lines = ["Profile:", '- name: "Zhou"  ("said 2026-12-01")', "Most recent notes:", '- "Vegetarian."  ("said")']
    for i in range(2, 60):
        thread += [AIMessage("ok", id=f"a{i}"), HumanMessage(f"fact {i}", id=f"h{i}")]
        lines.append(f'- "Fact number {i}."  ("said")')
        turn = memory(*lines)
        placed = place_turn(thread, turn, {"placed": placed})
        size = sum(len(t) for _, t in placed)
        assert size - len(turn) <= PLACED_BEYOND_TURN
        if len(placed) == 1:
            break
        assert placed[-1][0] == f"h{i}" and f"Fact number {i}." in placed[-1][1]  # positive: updates first
    assert placed == [(f"h{i}", turn)] and i > 10, (i, placed)  # then the whole part, before the turn's message
