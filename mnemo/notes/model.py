"""Notes: loose facts about the user, one store item per note.

Namespace ``(user_label, "notes")``, key derived from the normalised text
(:func:`note_key`), so two writers of one fact write one item; only ``text``
(and ``indexed_text`` for a note with a context) is embedded; a Latin-script
note also keeps its learned sparse vector (``sparse``, :mod:`mnemo.notes.sparse_vectors`),
never shown. Details: ``docs/memory.md``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import date
from typing import Any, Literal, NotRequired, TypedDict

from langgraph.store.base import BaseStore, Item

from mnemo.audit import Source, stated
from mnemo.core import (
    NOTES,
    InvalidInputError,
    User,
    alist_all,
    check_storable_text,
    collapse_whitespace,
    most_recent,
)
from mnemo.notes.expiry import live

#: Longest note accepted, in characters. A note is a fact, not a document.
MAX_NOTE_CHARS = 1000
#: Notes one user may keep. At the cap, ``remember_note`` is refused with a
#: message (forget some first) and the extractor's new notes are dropped
#: (logged); repeating or refining a known note still works. Kept within what
#: the in-memory store's exact scan of a user's notes serves (docs/bench.md).
MAX_NOTES_PER_USER = 2000
#: New notes one extraction (one turn) may add; the rest are dropped (logged).
MAX_NOTES_PER_TURN = 20

#: Similarity (the new text and the stored note both as passages: the dedupe
#: lookup searches by the vector the note's put reuses) at or above which a
#: stored note is a dedupe *candidate*; it is a duplicate only if the lexical
#: guard agrees. Chosen on the tune pairs (15 of 18 repeats and refinements
#: deduped, 0 of 10 distinct facts merged); held out: 5 of 10 and 0 of 10
#: (docs/thresholds.md).
DEDUPE_THRESHOLD = 0.87
#: Longest ``context`` kept with a note, in characters (longer is cut, at a
#: word): enough for the turn a note answers; it only steers the search.
MAX_CONTEXT_CHARS = 300
#: The value field embedded for a note with a context (:func:`indexed_text`).
INDEXED_TEXT_FIELD = "indexed_text"


class Note(TypedDict):
    """A note as mnemo returns it."""

    id: str
    text: str
    source: Source
    first_seen: str
    updated_at: str
    expires_at: NotRequired[str]
    """Only for a time-bound note: when it stops being true (UTC ISO)."""
    refers_to: NotRequired[str]
    """The date the fact is about (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``),
    when it is about a time ("moved to Suzhou in March 2024")."""
    context: NotRequired[str]
    """What the note was said in reply to (conversation text, not a fact
    about the user): embedded with the note so the search finds it in context."""
    history: NotRequired[list[NoteHistoryEntry]]
    """Its former texts, oldest first (:mod:`mnemo.notes.revise`)."""
    score: NotRequired[float]


class NoteHistoryEntry(TypedDict):
    """A former text of a note, and when and where it stopped being current."""

    text: str
    source: Source
    until: str
    """When it stopped being current."""
    first_seen: NotRequired[str]
    refers_to: NotRequired[str]
    expires_at: NotRequired[str]
    thread_id: NotRequired[str]
    """The thread in which the user's words replaced it."""


class RememberResult(TypedDict):
    """``stored``: a new note; ``duplicate``: already known (recency refreshed);
    ``refined``: replaced a less detailed wording of the same fact;
    ``over_limit``: new, but not stored (the user is at the note cap)."""

    status: Literal["stored", "duplicate", "refined", "over_limit"]
    note: Note


def normalize_note(text: str) -> str:
    """Key for exact dedupe: case-folded, whitespace collapsed, end punctuation dropped."""
    return collapse_whitespace(text).casefold().rstrip(".!?。！？")


def validate_note(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"a note is a string, got {type(text).__name__}")
    cleaned = collapse_whitespace(text)
    if not cleaned:
        raise InvalidInputError("a note cannot be empty")
    check_storable_text(cleaned, "the note")
    if len(cleaned) > MAX_NOTE_CHARS:
        raise InvalidInputError(
            f"a note is limited to {MAX_NOTE_CHARS} characters, this one has {len(cleaned)}; store one fact per note"
        )
    return cleaned


def to_note(item: Item) -> Note:
    return note_from_value(item.key, item.value, getattr(item, "score", None))


def note_from_value(key: str, value: Mapping[str, Any], score: float | None = None) -> Note:
    """A :class:`Note` from a stored value (or a copy of one, as the index keeps)."""
    note = Note(
        id=key,
        text=value["text"],
        source=value.get("source", "user_said"),
        first_seen=value.get("first_seen", ""),
        updated_at=value.get("updated_at", ""),
    )
    for optional in ("expires_at", "refers_to", "context", "history"):
        if value.get(optional):
            note[optional] = value[optional]
    if score is not None:
        note["score"] = round(float(score), 4)
    return note


def validate_context(context: object, *, strict: bool = False) -> str | None:
    """``context`` with white space collapsed, cut at a word to
    :data:`MAX_CONTEXT_CHARS`; ``None`` for no context. ``strict``: a
    context longer than a cut one is refused (a restored note's, as stored).

    Raises:
        InvalidInputError: not a string, not storable text, or too long to keep whole.
    """
    if context is None:
        return None
    if not isinstance(context, str):
        raise InvalidInputError(f"a note's context is a string, got {type(context).__name__}")
    cleaned = collapse_whitespace(context)
    if strict and len(cleaned) > MAX_CONTEXT_CHARS + len("…"):  # a cut one ends with its ellipsis
        raise InvalidInputError(f"a note's context is at most {MAX_CONTEXT_CHARS} characters, not {len(cleaned)}")
    if len(cleaned) > MAX_CONTEXT_CHARS:
        cut = cleaned[:MAX_CONTEXT_CHARS]
        cleaned = (cut.rsplit(" ", 1)[0] if " " in cut[MAX_CONTEXT_CHARS // 2 :] else cut) + "…"
    check_storable_text(cleaned, "the note's context")
    return cleaned or None


_REFERS_TO = re.compile(r"\d{4}(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?")


def validate_refers_to(refers_to: object) -> str | None:
    """``refers_to`` as ``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD`` (a datetime is
    cut to its date); ``None`` when not given.

    Raises:
        InvalidInputError: anything else.
    """
    if refers_to is None or refers_to == "":
        return None
    if isinstance(refers_to, str):
        day = refers_to.strip()[:10]
        if _REFERS_TO.fullmatch(day):
            try:
                if len(day) == 10:
                    date.fromisoformat(day)  # 2026-02-30 matches the pattern, is no day
                return day
            except ValueError:
                pass
    raise InvalidInputError(f"refers_to is a date: YYYY, YYYY-MM or YYYY-MM-DD, got {refers_to!r}")


def indexed_text(text: str, context: str | None) -> str:
    """What the store embeds for a note: its text, followed by its context.

    Measured on LoCoMo (chosen on the tune conversations, docs/bench.md):
    the text first and the turn it answers after ("in reply to"), scored
    beside the text alone, finds more evidence than the text alone; the
    context first finds less."""
    return f"{text} (in reply to: {context})" if context else text


def note_dates(note: Note) -> str:
    """Who stated a note, when, and what date it is about, for a prompt line:
    ``"said 2026-11-30, about 2024-03"``, ``"set by an application 2026-11-30"``
    (:func:`mnemo.audit.stated`; what the model needs for "when did I ...?" and to
    tell the user's words from others'; a date is left out when unknown)."""
    parts = [stated(note.get("source", "user_said"), note.get("first_seen"))]
    if note.get("refers_to"):
        parts.append(f"about {note['refers_to']}")
    return ", ".join(parts)


def note_key(norm: str) -> str:
    """Key of a new note: derived from its normalised text (32 hex digits)."""
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:32]


async def alist_notes(store: BaseStore, user: User) -> list[Note]:
    """Every live note of the user, most recent first (pages past the store's
    limit; expired time-bound notes are left out)."""
    items = live(await alist_all(store, user.namespace(NOTES)))
    return [to_note(it) for it in most_recent(items, len(items))]


async def arecent(store: BaseStore, user: User, n: int) -> list[Note]:
    """The ``n`` most recently updated notes (explicit sort, any backend)."""
    return (await alist_notes(store, user))[:n]
