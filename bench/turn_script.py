"""The scripted conversation and model of the per-turn cost benchmark (:mod:`bench.turn_cost`).

Three users (English, Chinese, English) in two threads each, with tool calls
on some turns, and a fourth who starts with a few hundred made-up notes
(:func:`seed_notes`, no third-party data); :class:`Script` answers for the chat
model and the extractor by rule, so no model server is needed.
:func:`scripted_model` lets a model answering by rule serve the runs of a block
(every in-process benchmark of the agent: turn-cost, overhead, reindex-turn).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage


@contextmanager
def scripted_model(name: str, respond: Callable[[list[BaseMessage], list[str]], AIMessage]) -> Iterator[None]:
    """``tests/scripted.py``'s chat model answering by ``respond(messages, tool names)``,
    among the models a run may name (``mnemo.models.build.MODELS``) as ``name`` for the block."""
    from mnemo.models.build import MODELS
    from tests.scripted import ScriptedChatModel

    MODELS[name] = ScriptedChatModel(respond=respond)
    try:
        yield
    finally:
        MODELS.pop(name, None)


@dataclass
class ScriptedTurn:
    """One user message and what the scripted models do with it."""

    user: str
    thread: str
    text: str
    extract: dict[str, Any] = field(default_factory=dict)
    """Arguments of the ``MemoryExtraction`` the extractor returns."""
    tool: tuple[str, dict[str, Any]] | None = None
    """A tool call the chat model makes before answering."""


def conversation(smoke: bool) -> list[ScriptedTurn]:
    """Three users (English, Chinese, English), two threads each, turns
    interleaved across users as a server would see them."""
    ana = [
        ScriptedTurn("u_ana", "ana-1", "Hi, I'm Ana and I live in Lisbon.", {"name": "Ana", "city": "Lisbon"}),
        ScriptedTurn(
            "u_ana",
            "ana-1",
            "I'm allergic to peanuts, please keep that in mind.",
            {"notes": ["The user is allergic to peanuts."]},
        ),
        ScriptedTurn("u_ana", "ana-1", "Do you ship air purifiers to Portugal?"),
        ScriptedTurn(
            "u_ana", "ana-1", "I have two cats and a dog at home.", {"notes": ["The user has two cats and a dog."]}
        ),
        ScriptedTurn("u_ana", "ana-2", "Which of your snacks are safe for me?"),
        ScriptedTurn(
            "u_ana",
            "ana-2",
            "Remember that I prefer email over phone calls.",
            tool=("remember_note", {"text": "The user prefers email over phone calls."}),
        ),
        ScriptedTurn(
            "u_ana", "ana-2", "As I said, I have a peanut allergy.", {"notes": ["The user has a peanut allergy."]}
        ),
        ScriptedTurn("u_ana", "ana-2", "What do you remember about my pets?", tool=("recall_notes", {"query": "pets"})),
    ]
    zhou = [
        ScriptedTurn("u_zhou", "zhou-1", "你好，我叫周伟，住在杭州。", {"name": "周伟", "city": "杭州"}),
        ScriptedTurn("u_zhou", "zhou-1", "我家里有一台小米空气净化器。", {"notes": ["用户家里有一台小米空气净化器。"]}),
        ScriptedTurn("u_zhou", "zhou-1", "请回答得简洁一点。", {"response_style": "concise"}),
        ScriptedTurn("u_zhou", "zhou-1", "我对花生过敏。", {"notes": ["用户对花生过敏。"]}),
        ScriptedTurn("u_zhou", "zhou-2", "我的净化器滤网多久换一次？"),
        ScriptedTurn("u_zhou", "zhou-2", "我每个月去上海出差。", {"notes": ["用户每个月去上海出差。"]}),
        ScriptedTurn("u_zhou", "zhou-2", "你还记得我对什么过敏吗？", tool=("recall_notes", {"query": "过敏"})),
        ScriptedTurn("u_zhou", "zhou-2", "谢谢！"),
    ]
    max_ = [
        ScriptedTurn("u_max", "max-1", "Hello, my name is Max.", {"name": "Max"}),
        ScriptedTurn(
            "u_max", "max-1", "I work night shifts, so I order late.", {"notes": ["The user works night shifts."]}
        ),
        ScriptedTurn("u_max", "max-1", "Can you recommend a quiet fan for my bedroom?"),
        ScriptedTurn(
            "u_max",
            "max-1",
            "My daughter Mia is allergic to dust.",
            {"notes": ["The user's daughter Mia is allergic to dust."]},
        ),
        ScriptedTurn("u_max", "max-2", "Is there a purifier that helps with dust allergies?"),
        ScriptedTurn("u_max", "max-2", "I drive an electric car.", {"notes": ["The user drives an electric car."]}),
        ScriptedTurn("u_max", "max-2", "Any accessories for my car?"),
        ScriptedTurn("u_max", "max-2", "Thanks, that's all."),
    ]
    big = [
        ScriptedTurn("u_big", "big-1", "Hi again, do you have new coffee beans?"),
        ScriptedTurn("u_big", "big-1", "I switched to oat milk recently.", {"notes": ["The user drinks oat milk."]}),
        ScriptedTurn("u_big", "big-2", "What grinder would suit my espresso machine?"),
        ScriptedTurn("u_big", "big-2", "Thanks!"),
    ]
    users = [ana[:3], zhou[:3]] if smoke else [ana, zhou, max_, big]
    turns: list[ScriptedTurn] = []
    for i in range(max(len(u) for u in users)):  # round-robin across users
        turns.extend(u[i] for u in users if i < len(u))
    return turns


def seed_notes(n: int) -> list[str]:
    """``n`` distinct, made-up facts for the large-memory user (no third-party data)."""
    subjects = [
        "coffee",
        "tea",
        "running shoes",
        "headphones",
        "a road bike",
        "a standing desk",
        "house plants",
        "board games",
        "a sourdough starter",
        "a camera",
        "hiking boots",
        "a robot vacuum",
        "jazz records",
        "a fountain pen",
        "winter tyres",
        "a sewing machine",
        "an aquarium",
        "a telescope",
        "a kayak",
        "a piano",
    ]
    verbs = [
        "owns",
        "wants to buy",
        "recently returned",
        "gave away",
        "repaired",
        "is saving for",
        "borrowed",
        "collects",
        "sold",
        "is comparing prices of",
        "received as a gift",
        "is unhappy with",
        "cleans weekly",
        "upgraded",
    ]
    notes = []
    for i in range(n):
        s, v = subjects[i % len(subjects)], verbs[(i // len(subjects)) % len(verbs)]
        notes.append(f"The user {v} {s} (item {i + 1}, bought in year {2000 + i % 25}).")
    return notes


class Script:
    """Responder for :class:`tests.scripted.ScriptedChatModel`."""

    def __init__(self, turns: list[ScriptedTurn], extraction_latency_s: float = 0.0) -> None:
        self.by_text = {t.text: t for t in turns}
        self.extraction_latency_s = extraction_latency_s
        self.extractor_inputs: list[str] = []
        """Everything each extraction call was sent (its messages' text)."""

    def __call__(self, messages: list[BaseMessage], tool_names: list[str]) -> AIMessage:
        from tests.scripted import tool_call

        if "MemoryExtraction" in tool_names:
            time.sleep(self.extraction_latency_s)  # runs in a worker thread (ScriptedChatModel)
            self.extractor_inputs.append("\n".join(m.text for m in messages))
            # The extractor sees "- <user message>" lines (quoted: JSON strings); merge what the script says for each.
            args: dict[str, Any] = {}
            for line in messages[-1].text.split("<existing_notes>")[0].splitlines():
                said = line[2:].strip()
                try:
                    said = json.loads(said) if said.startswith('"') else said
                except ValueError:  # not a quoted message (an instruction line of an older prompt)
                    continue
                turn = self.by_text.get(said) if line.startswith("- ") else None
                if turn:
                    for key, value in turn.extract.items():
                        args[key] = args.get(key, []) + value if key == "notes" else value
            return tool_call("MemoryExtraction", **args)
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(content="Done.")
        turn = self.by_text.get(last.text) if isinstance(last, HumanMessage) else None
        if turn and turn.tool:
            name, args = turn.tool
            return tool_call(name, **args)
        return AIMessage(content="Sure.")
