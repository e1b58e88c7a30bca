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
from mnemo.notes import Note
from mnemo.turn.parts import part_budgets, part_names, prompt_blocks, turn_settings
from mnemo.turn.snapshot import MEMORY_CHAR_BUDGET, aload_snapshot, fit_snapshot, render_blocks, render_snapshot


class ExplainedNote(TypedDict, total=False):
    """A note of the explanation: the note, and why it is (or is not) in the prompt."""

    note: Note
    in_prompt: bool
    """Whether it fitted the character budget (else reachable through the ``recall_notes`` tool only)."""
    found_by: dict[str, int]
    """Relevant notes only: the rankings that found it (``meaning``, ``words``, ``sparse``) and its place in each."""


#: What :func:`aexplain` answers (``GET /memory/search``'s body), keyed by:
#:
#: - ``query``: the part of the message the search reads (:func:`mnemo.core.bounded_query`);
#: - ``relevant`` (best first) and ``recent`` (those already relevant left out): lists of
#:   :class:`ExplainedNote`;
#: - each registered part's value by its name (:data:`mnemo.turn.parts.PARTS`:
#:   ``profile``, ``episodes``, ``similar``, ...);
#: - ``memory``: the memory block exactly as the prompt carries it; each part's block
#:   by its slot (``examples``: the past cases block), exactly as the prompt carries it
#:   (``""``: none);
#: - ``budget``: ``memory_chars``, ``memory_char_budget``, ``notes_left_out`` (relevant
#:   and recent notes found but past the budget), and each block's characters and
#:   budget by their names (``episode_chars``, ``episode_char_budget``);
#: - ``blocks``: per block, ``slot``, ``tag``, the ``part`` it renders, ``chars`` and
#:   ``char_budget`` (for a client that lists the blocks without knowing them).
Explanation = dict[str, Any]


async def aexplain(
    store: BaseStore, user: User, query: str, *, char_budget: int = MEMORY_CHAR_BUDGET, **settings: Any
) -> Explanation:
    """What a turn of ``user`` whose latest message is ``query`` is shown, with a
    turn's defaults (``nodes.context.Context``'s): ``settings`` are
    :func:`mnemo.turn.aload_snapshot`'s limits and the blocks' budgets, by name.

    Raises:
        TypeError: a setting no part, block or snapshot takes.
    """
    limits, budgets = turn_settings(settings)
    snapshot: Any = await aload_snapshot(store, user, query, **limits)
    shown = fit_snapshot(snapshot, char_budget=char_budget)
    memory = render_snapshot(snapshot, char_budget=char_budget)
    rendered = render_blocks(snapshot, **budgets)
    found = snapshot.get("found_by", {})

    def explained(section: str) -> list[ExplainedNote]:
        kept = {n["id"] for n in shown[section]}  # type: ignore[literal-required]
        out: list[ExplainedNote] = []
        for note in snapshot[section]:
            entry = ExplainedNote(note=note, in_prompt=note["id"] in kept)
            if section == "relevant":
                entry["found_by"] = found.get(note["id"], {})
            out.append(entry)
        return out

    relevant, recent = explained("relevant"), explained("recent")
    budget: dict[str, int] = {
        "memory_chars": len(memory),
        "memory_char_budget": char_budget,
        "notes_left_out": sum(not e["in_prompt"] for e in [*relevant, *recent]),
    }
    shown_blocks, given_budgets = [], part_budgets(budgets)
    for part, block in prompt_blocks():
        chars, given = len(rendered[block.slot]), given_budgets[block.budget]
        budget |= {block.chars: chars, block.budget: given}
        shown_blocks.append({"slot": block.slot, "tag": block.tag, "part": part, "chars": chars, "char_budget": given})
    return {
        "query": bounded_query(query),
        **{name: snapshot[name] for name in part_names()},
        "relevant": relevant,
        "recent": recent,
        "budget": budget,
        "memory": memory,
        **rendered,
        "blocks": shown_blocks,
    }


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
