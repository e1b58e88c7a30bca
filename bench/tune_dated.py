"""``python -m bench tune --only dated_notes``: notes that carry the day they
were said, an attempt (docs/bench.md): the turns written again with their
session's day in what the store embeds, against recall as it ships.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any
from unittest import mock

from bench.common import CachingEmbeddings, TokenCounter
from bench.locomo_ask import QuestionHook, QuestionResult
from bench.locomo_write import Timing, Written, write_mnemo
from bench.tune_stats import grid_table

#: Notes with the day they were said (an attempt, not shipped unless it
#: clears the bar of docs/bench.md): "none" is recall as it ships, "said_on"
#: the notes written again with the session's day in what is embedded
#: (:func:`dated_indexed_text`).
DATED_GRID = ("none", "said_on")


def said_on(date_time: str) -> str:
    """The day of a LoCoMo session's date and time ("1:56 pm on 8 May, 2023" -> "8 May, 2023")."""
    return date_time.rsplit(" on ", 1)[-1].strip()


def dated_indexed_text(text: str, context: str | None, day: str) -> str:
    """What the store would embed for a note carrying the day it was said:
    :func:`mnemo.notes.model.indexed_text` with the day beside the context."""
    return f"{text} (said on {day}; in reply to: {context})" if context else f"{text} (said on {day})"


async def prepare_dated(
    written: Written, emb: CachingEmbeddings, timing: Timing, counter: TokenCounter, ks: list[int]
) -> QuestionHook:
    """The attempt ``dated_notes``: the turns written again through
    :func:`mnemo.aremember_many`, each note embedded with the day of its
    session (``mnemo.notes.plan.indexed_text`` patched to
    :func:`dated_indexed_text`; a session's first turn, which has no
    context, gets its day as one so that it is embedded in context too), so
    that a question naming a date ("on October 13, 2023", "in May 2023")
    meets the notes of that day; in the product the day would be the note's
    ``first_seen``. Returns the hook that records both rankings per question."""
    from mnemo import arecall
    from mnemo.notes import validate_context
    from mnemo.notes.model import indexed_text

    conv, texts = written.conv, written.texts
    day_of: dict[str, str] = {}  # a text's day: that of its first turn (a repeat keeps the first note)
    for turn, text in zip(conv.turns, texts, strict=True):
        day_of.setdefault(text, said_on(conv.session_dates.get(turn.session, "")))
    contexts = [c or day_of[t] or None for t, c in zip(texts, written.contexts, strict=True)]

    def dated(text: str, context: str | None) -> str:
        day = day_of.get(text, "")
        if not day:
            return indexed_text(text, context)
        return dated_indexed_text(text, None if context == day else context, day)

    emb.warm(
        "p",
        [dated(t, validate_context(c)) for t, c in zip(texts, contexts, strict=True)],
        desc=f"{conv.sample_id}: notes with their day (passages)",
    )
    own: Timing = defaultdict(float)
    with mock.patch("mnemo.notes.plan.indexed_text", dated):
        store, covers = await write_mnemo(conv, texts, contexts, written.user, emb, Counter(), own)
    timing["dated_write_s"] += own["mnemo_write_s"]
    limit = max(ks)

    async def per_question(q: Any, r: QuestionResult) -> None:
        r.grids["dated"]["none"] = r.ranked["mnemo"]
        notes = await arecall(store, written.user, q.question, limit=limit, margin=None)
        r.grids["dated"]["said_on"] = [covers[n["id"]] for n in notes]

    return per_question


def dated_tables(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
    """``dated_notes``: recall with the notes embedded with their day, against recall as it ships."""
    return {
        "dated_notes": grid_table(
            results, ks, "dated", list(DATED_GRID), lambda s: {"notes": s}, shipped="none", baseline="none"
        )
    }
