"""What the agent is shown about a user at the start of a turn.

:func:`aload_snapshot` reads it in at most two ``abatch`` calls and one query
embedding, whatever the number of notes (two more to delete the expired notes it
met, when it met any); :func:`render_snapshot` renders it under a character
budget, every remembered value quoted data.
"""

from __future__ import annotations

from typing import Any, NotRequired, TypedDict, cast

from langgraph.store.base import BaseStore

from mnemo.core import Ask, User, bounded_query, quote
from mnemo.episodes import Episode
from mnemo.notes import RECALL_MARGIN, Note, adelete_notes, aread_notes, note_dates
from mnemo.profile import Profile, format_profile
from mnemo.turn.parts import aparse_parts, part_budgets, part_limits, part_ops, prompt_blocks

#: Notes relevant to the latest message put in the prompt (``Context.recall_limit``).
RECALL_LIMIT = 5
#: Most recent notes put in the prompt as well (``Context.recent_limit``).
RECENT_LIMIT = 3
#: Upper bound of the memory block in the prompt (``Context.memory_char_budget``).
MEMORY_CHAR_BUDGET = 2000


class MemorySnapshot(TypedDict):
    """The notes' recall (``relevant``, ``recent``, ``found_by``) and one key per
    registered part (:data:`mnemo.turn.parts.PARTS`; tests/turn/test_parts.py
    holds the two lists equal)."""

    profile: Profile
    relevant: list[Note]
    """Best first: the relevant dense hits fused with BM25 (see
    :func:`mnemo.notes.recall.aread_notes`)."""
    recent: list[Note]
    """Most recently updated first, excluding those already in ``relevant``."""
    episodes: list[Episode]
    """Resolved past cases similar to the query (the user's and shared), best first."""
    similar: list[Note]
    """The notes nearest to the query by meaning, best first, not filtered by
    relevance (``similar_limit``; what the turn's extractor is shown)."""
    queued: int
    """How many notes wait in the user's queue (``mnemo.notes.queued``): the
    turn's ``write_memory`` reads the queue only when some do, or it queued some."""
    found_by: NotRequired[dict[str, dict[str, int]]]
    """Per relevant note, the rankings that found it and its place in each
    (:attr:`mnemo.notes.recall.NotesRead.found_by`)."""


async def aload_snapshot(
    store: BaseStore,
    user: User,
    query: str,
    *,
    recall_limit: int = RECALL_LIMIT,
    recent_limit: int = RECENT_LIMIT,
    recall_margin: float | None = RECALL_MARGIN,
    **limits: Any,
) -> MemorySnapshot:
    """The snapshot of ``user`` for ``query``: the notes' recall, and every
    registered part (``limits``: the parts' own, by name, e.g. ``episode_limit``,
    ``episode_min_score``, ``similar_limit``; :data:`mnemo.turn.parts.PARTS`).

    Raises:
        TypeError: a limit no part takes.
    """
    ask = Ask(user, bounded_query(query), part_limits(limits))
    planned = part_ops(ask)
    extra = [op for _, ops in planned for op in ops]  # one batch: the query is embedded once
    read = await aread_notes(store, user, ask.query, limit=recall_limit, margin=recall_margin, extra=extra)
    parts = await aparse_parts(store, ask, planned, read.extra)
    # Expired notes met on the way go now, index entries included (two more
    # round trips, only when something expired); the rest when met, or by
    # mnemo.notes.expiry.asweep_all.
    await adelete_notes(store, user, read.stale)
    relevant = read.relevant
    seen = {n["id"] for n in relevant}
    recent = [n for n in read.recent if n["id"] not in seen][:recent_limit]
    return cast(MemorySnapshot, {**parts, "relevant": relevant, "recent": recent, "found_by": read.found_by})


_SECTIONS = (("relevant", "Notes relevant to the latest message:"), ("recent", "Most recent notes:"))


def note_line(note: Note, *, with_id: bool = False, with_expiry: bool = True) -> str:
    """A note as the model reads it, in the prompt and in tool results: one
    line, every value quoted (a note's text, id and expiry are whatever a
    user wrote: mnemo.core.quoting), who stated it and when, its full id when
    ``with_id`` (what ``forget_note`` and ``replaces`` take: a tool result's, never
    the prompt's, where an id would be tokens every turn reads and no tool takes)
    and when it stops being true unless not ``with_expiry``."""
    parts = [f"note {quote(note['id'])}"] if with_id else []
    parts.append(quote(note_dates(note)))
    if with_expiry and note.get("expires_at"):
        parts.append(f"true until {quote(note['expires_at'][:16])}")
    return f"- {quote(note['text'])}  ({', '.join(parts)})"


def fit_snapshot(snapshot: MemorySnapshot, *, char_budget: int = MEMORY_CHAR_BUDGET) -> MemorySnapshot:
    """``snapshot`` with only the notes :func:`render_snapshot` shows within
    ``char_budget``: whole lines, the profile first and never cut, then
    relevant notes, then recent ones, each list cut where the next line
    would not fit. What a caller measures (which notes the model saw) comes
    from here, not from parsing the prompt text."""
    used = len("Profile:") + 1 + len(format_profile(snapshot["profile"])) + 1
    kept: dict[str, list[Note]] = {}
    for section, title in _SECTIONS:
        kept[section] = []
        for note in snapshot[section]:  # type: ignore[literal-required]
            line = note_line(note)
            if used + len(title) + len(line) + 2 > char_budget:
                break
            kept[section].append(note)
            used += len(line) + 1
        if kept[section]:
            used += len(title) + 1
    fitted = snapshot.copy()
    fitted["relevant"], fitted["recent"] = kept["relevant"], kept["recent"]
    return fitted


def render_snapshot(snapshot: MemorySnapshot, *, char_budget: int = MEMORY_CHAR_BUDGET) -> str:
    """Prompt text for ``snapshot``, at most ``char_budget`` characters of notes
    after the profile (:func:`fit_snapshot`; what does not fit is left out
    and stays reachable through the ``recall_notes`` tool)."""
    shown = fit_snapshot(snapshot, char_budget=char_budget)
    parts = ["Profile:", format_profile(snapshot["profile"])]
    for section, title in _SECTIONS:
        if notes := shown[section]:  # type: ignore[literal-required]
            parts.append(title)
            parts.extend(note_line(note) for note in notes)
    if not snapshot["relevant"] and not snapshot["recent"]:
        parts.append("Notes: (none)")
    return "\n".join(parts)


def render_blocks(snapshot: MemorySnapshot, **budgets: int) -> dict[str, str]:
    """The prompt blocks the parts render apart from the memory block, by slot
    (e.g. ``examples``), each under its budget (``budgets`` by name, e.g.
    ``episode_char_budget``, over the blocks' defaults).

    Raises:
        TypeError: a budget no block takes.
    """
    given = part_budgets(budgets)
    return {block.slot: block.render(snapshot[part], given[block.budget]) for part, block in prompt_blocks()}  # type: ignore[literal-required]
