"""Why the agent said what it said: what ``load_memory`` would put in the
prompt for a message, with the reasons (``GET /memory/search``,
``python -m mnemo search``).

The same read and the same rendering as a turn (:func:`aload_snapshot`,
:func:`render_snapshot`, :func:`render_blocks`), so the answer is what the
model is shown, not a second opinion of it.
"""

from __future__ import annotations

from typing import Any, TypedDict

from langgraph.store.base import BaseStore

from mnemo.core import User, bounded_query
from mnemo.kinds import EPISODE_CHAR_BUDGET, EPISODE_LIMIT, EPISODE_MIN_SCORE, Episode, Profile
from mnemo.notes import RECALL_MARGIN, Note
from mnemo.turn.snapshot import (
    MEMORY_CHAR_BUDGET,
    RECALL_LIMIT,
    RECENT_LIMIT,
    aload_snapshot,
    fit_snapshot,
    render_blocks,
    render_snapshot,
)


class ExplainedNote(TypedDict, total=False):
    """A note of the explanation: the note, and why it is (or is not) in the prompt."""

    note: Note
    in_prompt: bool
    """Whether it fitted the character budget (else reachable through the ``recall_notes`` tool only)."""
    found_by: dict[str, int]
    """Relevant notes only: the rankings that found it (``meaning``, ``words``, ``sparse``) and its place in each."""


class Budget(TypedDict):
    memory_chars: int
    """Characters of the memory block (profile and notes) as rendered."""
    memory_char_budget: int
    notes_left_out: int
    """Relevant and recent notes found but past the budget."""
    episode_chars: int
    episode_char_budget: int


class Explanation(TypedDict):
    query: str
    """The part of the message the search reads (:func:`mnemo.core.bounded_query`)."""
    profile: Profile
    relevant: list[ExplainedNote]
    """Best first."""
    recent: list[ExplainedNote]
    """Most recently updated first, those already relevant left out."""
    episodes: list[Episode]
    budget: Budget
    memory: str
    """The memory block exactly as the prompt carries it."""
    examples: str
    """The past cases block exactly as the prompt carries it (``""``: none)."""


async def aexplain(
    store: BaseStore,
    user: User,
    query: str,
    *,
    recall_limit: int = RECALL_LIMIT,
    recent_limit: int = RECENT_LIMIT,
    recall_margin: float | None = RECALL_MARGIN,
    char_budget: int = MEMORY_CHAR_BUDGET,
    episode_limit: int = EPISODE_LIMIT,
    episode_min_score: float = EPISODE_MIN_SCORE,
    episode_char_budget: int = EPISODE_CHAR_BUDGET,
) -> Explanation:
    """What a turn of ``user`` whose latest message is ``query`` is shown,
    with the defaults of a run's context (``nodes.context.Context``)."""
    snapshot = await aload_snapshot(
        store,
        user,
        query,
        recall_limit=recall_limit,
        recent_limit=recent_limit,
        recall_margin=recall_margin,
        episode_limit=episode_limit,
        episode_min_score=episode_min_score,
    )
    shown = fit_snapshot(snapshot, char_budget=char_budget)
    memory = render_snapshot(snapshot, char_budget=char_budget)
    examples = render_blocks(snapshot, episode_char_budget=episode_char_budget)["examples"]
    found = snapshot.get("found_by", {})

    def explained(section: str) -> list[ExplainedNote]:
        kept = {n["id"] for n in shown[section]}  # type: ignore[literal-required]
        out: list[ExplainedNote] = []
        for note in snapshot[section]:  # type: ignore[literal-required]
            entry = ExplainedNote(note=note, in_prompt=note["id"] in kept)
            if section == "relevant":
                entry["found_by"] = found.get(note["id"], {})
            out.append(entry)
        return out

    relevant, recent = explained("relevant"), explained("recent")
    left_out = sum(not e["in_prompt"] for e in [*relevant, *recent])
    budget = Budget(
        memory_chars=len(memory),
        memory_char_budget=char_budget,
        notes_left_out=left_out,
        episode_chars=len(examples),
        episode_char_budget=episode_char_budget,
    )
    return Explanation(
        query=bounded_query(query),
        profile=snapshot["profile"],
        relevant=relevant,
        recent=recent,
        episodes=snapshot["episodes"],
        budget=budget,
        memory=memory,
        examples=examples,
    )


def summary_lines(explanation: Explanation) -> list[str]:
    """A short text form, for the command line."""
    lines: list[str] = []
    for entry in explanation["relevant"]:
        note: Any = entry["note"]
        ways = ", ".join(f"{k} #{v}" for k, v in entry.get("found_by", {}).items()) or "-"
        score = f"{note['score']:.3f}" if "score" in note else "  -  "
        lines.append(f"relevant {score} [{ways}] {'' if entry['in_prompt'] else '(left out) '}{note['text']}")
    lines += [f"recent   {'' if e['in_prompt'] else '(left out) '}{e['note']['text']}" for e in explanation["recent"]]
    b = explanation["budget"]
    lines.append(f"memory block: {b['memory_chars']} of {b['memory_char_budget']} characters")
    return lines
