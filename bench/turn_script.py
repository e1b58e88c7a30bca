"""A model answering by rule for the in-process runs of the agent, and made-up notes.

:func:`scripted_model` lets a model answering by rule (``tests/scripted.py``'s)
serve the runs of a block (overhead's in-process counts); :func:`seed_notes`
writes the made-up facts the scale benchmarks load (no third-party data).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from langchain_core.messages import AIMessage, BaseMessage


@contextmanager
def scripted_model(name: str, respond: Callable[[list[BaseMessage], list[str]], AIMessage]) -> Iterator[None]:
    """``harness/scripted.py``'s chat model answering by ``respond(messages, tool names)``,
    among the models a run may name (``mnemo.models.build.MODELS``) as ``name`` for the block."""
    from harness.scripted import ScriptedChatModel
    from mnemo.models.build import MODELS

    MODELS[name] = ScriptedChatModel(respond=respond)
    try:
        yield
    finally:
        MODELS.pop(name, None)


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
