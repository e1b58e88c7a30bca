"""What the agent is shown about a user at the start of a turn.

:func:`aload_snapshot` reads the profile, the notes most relevant to the
latest message and the most recent notes in at most **two** ``abatch`` calls
and one query embedding, whatever the number of notes: the most recent notes
come from the index maintained at write time (:mod:`mnemo.note_index`), not
from a listing (see :func:`mnemo.recall.aread_notes`). The profile is listed
page by page (explicit paging: the store's ``limit`` would otherwise silently
truncate), which takes one more read only past 100 profile fields.

:func:`render_snapshot` turns it into prompt text under a character budget;
the profile goes first and is never cut, then relevant notes, then recent ones.
"""

from __future__ import annotations

from typing import TypedDict

from langgraph.store.base import BaseStore

from mnemo.store_reads import alist_rest, list_op, search_result
from mnemo.identity import PROFILE, User
from mnemo.notes import Note
from mnemo.recall import RECALL_MIN_SCORE, aread_notes
from mnemo.profile import Profile, format_profile, profile_from_items


#: Notes relevant to the latest message put in the prompt (``Context.recall_limit``).
RECALL_LIMIT = 5
#: Most recent notes put in the prompt as well (``Context.recent_limit``).
RECENT_LIMIT = 3
#: Upper bound of the memory block in the prompt (``Context.memory_char_budget``).
MEMORY_CHAR_BUDGET = 2000


class MemorySnapshot(TypedDict):
    profile: Profile
    relevant: list[Note]
    """Best first: dense hits above the threshold fused with BM25 (see
    :func:`mnemo.recall.aread_notes`)."""
    recent: list[Note]
    """Most recently updated first, excluding those already in ``relevant``."""


async def aload_snapshot(
    store: BaseStore,
    user: User,
    query: str,
    *,
    recall_limit: int = RECALL_LIMIT,
    recent_limit: int = RECENT_LIMIT,
    min_score: float = RECALL_MIN_SCORE,
) -> MemorySnapshot:
    profile_ns = user.namespace(PROFILE)
    read = await aread_notes(store, user, query, limit=recall_limit, min_score=min_score, extra=[list_op(profile_ns)])
    profile_items = await alist_rest(store, profile_ns, search_result(read.extra[0]))
    relevant = read.relevant
    seen = {n["id"] for n in relevant}
    recent = [n for n in read.recent if n["id"] not in seen][:recent_limit]
    return MemorySnapshot(profile=profile_from_items(profile_items), relevant=relevant, recent=recent)


def render_snapshot(snapshot: MemorySnapshot, *, char_budget: int = MEMORY_CHAR_BUDGET) -> str:
    """Prompt text for ``snapshot``, at most ``char_budget`` characters of notes
    after the profile (whole lines only; what does not fit is left out and
    stays reachable through the ``recall_notes`` tool)."""
    parts = ["Profile:", format_profile(snapshot["profile"])]
    used = sum(len(p) + 1 for p in parts)
    for title, notes in (("Notes relevant to the latest message:", snapshot["relevant"]),
                         ("Most recent notes:", snapshot["recent"])):
        lines = []
        for note in notes:
            line = f"- {note['text']}  (note {note['id'][:8]})"
            if used + len(title) + len(line) + 2 > char_budget:
                break
            lines.append(line)
            used += len(line) + 1
        if lines:
            parts.append(title)
            used += len(title) + 1
            parts.extend(lines)
    if not snapshot["relevant"] and not snapshot["recent"]:
        parts.append("Notes: (none)")
    return "\n".join(parts)
