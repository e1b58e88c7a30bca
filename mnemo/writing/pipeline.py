"""The one pipeline turning a thread's unextracted user messages into memory.

:func:`aextract_messages` serves ``write_memory``, the ``memory_writer`` graph and
``compact_history``: oldest messages first, in a bounded number of bounded calls;
the cursor it returns passes only messages written (or given up after repeated
extractor failures, never after a store failure or a timeout); ``said_at`` gives each write its ``as_of``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.store.base import BaseStore

from mnemo.audit import Origin
from mnemo.core import MAX_MESSAGE_CHARS, InvalidInputError, User, now_iso
from mnemo.notes import validate_context
from mnemo.writing.apply import Said, aapply_extraction
from mnemo.writing.extraction import TIMED_OUT, TimedOut, aextract, build_extractor
from mnemo.writing.known import Known, aread_known

logger = logging.getLogger(__name__)


#: One extractor call reads at most this many user messages.
MESSAGES_PER_CALL = 10

#: Failures in a row at which a batch is one message (``batch_size``): a
#: timeout shrinks the batch down to it, never past it (never given up).
SLOWEST = 3

#: One caller makes at most this many extractor calls per turn, oldest messages
#: first; the rest of a backlog stays pending and drains over the next turns.
MAX_EXTRACTION_CALLS = 3


class Progress(NamedTuple):
    """How far :func:`aextract_messages` got; the caller keeps both."""

    cursor: int
    """Index in the thread below which every user message is written (or given up)."""

    failures: int
    """Extractor failures in a row on the user message at ``cursor`` (0 once it moves)."""


def batch_size(failures: int) -> int:
    """User messages in the next extractor call after ``failures`` failures in a
    row on the first of them: 10, 5, 2, 1, then 0 (that message is given up),
    so one message the extractor keeps failing on holds up no other."""
    return MESSAGES_PER_CALL >> failures


def stamp_said_at(messages: Sequence[BaseMessage], said_at: Mapping[str, str] | None) -> dict[str, str] | None:
    """``said_at`` with the time of every user message not stamped yet, or
    ``None`` when nothing is new (no state update needed)."""
    said_at = dict(said_at or {})
    new = [m.id for m in messages if isinstance(m, HumanMessage) and m.id and m.id not in said_at]
    if not new:
        return None
    stamp = now_iso()
    said_at.update(dict.fromkeys(new, stamp))
    return said_at


def pending(messages: Sequence[BaseMessage], start: int, end: int | None = None) -> list[HumanMessage]:
    """User messages in ``messages[start:end]`` (``start`` clamped to the list)."""
    start = max(0, min(start, len(messages)))
    return [m for m in messages[start:end] if isinstance(m, HumanMessage) and m.text.strip()]


#: The tool that keeps what the user asks to remember (nodes/tools.py).
REMEMBER_TOOL = "remember_note"


def tool_took(messages: Sequence[BaseMessage], said: Sequence[HumanMessage]) -> list[bool]:
    """For each of ``said`` (user messages of ``messages``), whether :data:`REMEMBER_TOOL`
    took it before the next user message: answered with no error (written, queued or a
    duplicate), so the writing never quotes it again (:mod:`mnemo.writing.remembered`).
    An error answer took nothing: the tool refused the model's wording ("write it in the
    user's words"), the gate denied the call or the store failed; the user's words are
    then the writing's, as if the model had called no tool."""
    position = {id(m): i for i, m in enumerate(messages)}
    took = []
    for message in said:
        after = messages[position.get(id(message), len(messages)) + 1 :]
        turn = next((after[:i] for i, m in enumerate(after) if isinstance(m, HumanMessage)), after)
        took.append(any(isinstance(m, ToolMessage) and m.name == REMEMBER_TOOL and m.status != "error" for m in turn))
    return took


def called_remember(messages: Sequence[BaseMessage]) -> bool:
    """Whether :data:`REMEMBER_TOOL` took the latest user message of ``messages`` (this turn)."""
    last = [m for m in messages if isinstance(m, HumanMessage)][-1:]
    return any(tool_took(messages, last))


def replied_to(messages: Sequence[BaseMessage], said: Sequence[HumanMessage]) -> list[str | None]:
    """For each of ``said`` (user messages of ``messages``), the text of the
    assistant's last message before it; ``None`` for none (the thread's
    first message, or words no store may keep). Two user messages in a row
    reply to the same one. Cleaned as a context (:func:`mnemo.notes.model.validate_context`).

    The notes extracted from a message carry it as their context
    (:func:`mnemo.notes.writes.aremember_many`'s ``contexts``): a note is found by
    the conversation it came up in as well as by its own words. The context
    is embedded with the note, never shown as the fact and never given to
    the extractor, so the assistant's words still cannot become a user fact.
    """
    position = {id(m): i for i, m in enumerate(messages)}
    contexts: list[str | None] = []
    for message in said:
        before = messages[: position.get(id(message), 0)]
        reply = next((m.text for m in reversed(before) if isinstance(m, AIMessage) and m.text.strip()), None)
        try:
            contexts.append(validate_context(reply))
        except InvalidInputError:
            # e.g. a NUL the model emitted: the note is still written, without a
            # context, rather than every later extraction failing on it.
            contexts.append(None)
    return contexts


def as_of(said: Sequence[HumanMessage], said_at: Mapping[str, str] | None) -> str:
    """Time the newest of ``said`` was said; now when it was never stamped."""
    stamps = [(said_at or {}).get(m.id or "") for m in said]
    return max((s for s in stamps if s), default=None) or now_iso()


async def aextract_messages(
    store: BaseStore,
    user: User,
    load_model: Callable[[], Awaitable[BaseChatModel]],
    thread: Sequence[BaseMessage],
    start: int,
    end: int | None = None,
    *,
    failures: int,
    said_at: Mapping[str, str] | None,
    timeout_s: float,
    origin: Origin | None = None,
    similar_notes: Sequence[Mapping[str, str]] | None = None,
) -> Progress:
    """Extract the user messages of ``thread[start:end]`` into memory, oldest
    first, in at most :data:`MAX_EXTRACTION_CALLS` calls of at most
    :data:`MESSAGES_PER_CALL` messages: the one entry point of every write
    mode. Never raises.

    Returns the new cursor (``end``, or the thread's length, when all is
    written) and the failures on the message at it. The cursor stops at the
    first message not written: when the calls of this turn are used up, when
    the model or its extractor could not be built, the store failed or the
    extractor outlived its deadline (nothing is lost: those messages stay
    pending, whatever the outage's length; a timeout only shrinks the next
    batch, down to :data:`SLOWEST`), or when the extractor failed.
    ``failures`` (the caller's count from last time) shrinks
    the batch after extractor failures (:func:`batch_size`); a message the
    extractor failed on alone is given up (logged) so later ones get written.

    ``load_model`` is called only when there is something to extract.
    ``origin``: the run the writes are audited as (default: the extractor, no run).
    ``similar_notes``: the user's notes (``id``, ``text``) the extractor is
    shown, when already read (the turn's ``load_memory``); ``None``: read them
    first (:func:`mnemo.writing.known.aread_known`)."""
    end = len(thread) if end is None else max(0, min(end, len(thread)))
    said = pending(thread, start, end)
    if not said:
        # The failures are those of the first user message from here on: none at the thread's end.
        return Progress(max(start, end), failures if end < len(thread) else 0)
    try:
        extractor = build_extractor(await load_model())
    except Exception:
        logger.exception("could not build the memory extractor; will retry next turn")
        return Progress(start, failures)
    position = {id(m): i for i, m in enumerate(thread)}
    cursor, calls = start, 0
    known = Known.of_notes(similar_notes) if similar_notes is not None else None
    while said and calls < MAX_EXTRACTION_CALLS:
        size = batch_size(failures)
        if size == 0:
            logger.warning(
                "the extractor failed %d times in a row on the user message at position %d; giving it up",
                failures,
                position[id(said[0])],
            )
            cursor, failures, said = position[id(said[0])] + 1, 0, said[1:]
            continue
        batch, calls = said[:size], calls + 1
        written = await _aextract_said(
            store,
            user,
            extractor,
            batch,
            thread=thread,
            said_at=said_at,
            timeout_s=timeout_s,
            origin=origin,
            known=known,
        )
        if written is None:
            return Progress(cursor, failures)  # the store failed: no failure of these messages
        if written is TIMED_OUT:
            # Too slow for this batch: a smaller one next time, never given up for it.
            return Progress(cursor, min(failures + 1, SLOWEST))
        if not written:
            return Progress(cursor, failures + 1)
        cursor, failures, said = position[id(batch[-1])] + 1, 0, said[size:]
    return Progress(cursor if said else end, failures)


async def _aextract_said(
    store: BaseStore,
    user: User,
    extractor: Any,
    said: Sequence[HumanMessage],
    *,
    thread: Sequence[BaseMessage],
    said_at: Mapping[str, str] | None,
    timeout_s: float,
    origin: Origin | None,
    known: Known | None,
) -> bool | Literal[TimedOut.TIMED_OUT] | None:
    """Extract memory from ``said`` (at most :data:`MESSAGES_PER_CALL`
    user messages of ``thread``) and write it, each note with what its
    message replied to as context (:func:`replied_to`). ``True`` when
    written, ``False`` when the extractor failed, ``None`` when the store did
    (nothing counted against these messages), :data:`TIMED_OUT` when the
    extractor outlived its deadline."""
    # Bounded: a message refused as too long may still sit in the thread.
    texts = [m.text[:MAX_MESSAGE_CHARS] for m in said]
    try:
        known = known if known is not None else await aread_known(store, user, texts)
    except Exception:
        logger.exception("could not read the user's memory before extracting; will retry with the next turn")
        return None
    extraction = await aextract(extractor, texts, timeout_s=timeout_s, existing=known.shown())
    if extraction is TIMED_OUT:
        return TIMED_OUT
    if extraction is None:
        return False  # failed or unusable: retried later, given up after repeated failures
    try:
        await aapply_extraction(
            store,
            user,
            extraction,
            as_of=as_of(said, said_at),
            origin=origin,
            said=[
                Said(m.text, reply, tool_took=took)
                for m, reply, took in zip(said, replied_to(thread, said), tool_took(thread, said), strict=True)
            ],
            known=known,
        )
    except Exception:
        logger.exception("memory write failed; will retry with the next turn")
        return None
    return True
