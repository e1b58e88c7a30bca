"""The one pipeline turning a thread's unextracted user messages into memory.

:func:`aextract_pending` serves ``write_memory``, the ``memory_writer`` graph and
``compact_history``; ``memory_cursor`` advances only when extraction succeeded, and
``said_at`` gives each write its ``as_of``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.store.base import BaseStore

from mnemo.core import MAX_MESSAGE_CHARS, InvalidInputError, User, now_iso
from mnemo.kinds import Origin
from mnemo.notes import validate_context
from mnemo.writing.apply import Said, aapply_extraction
from mnemo.writing.extraction import aextract, build_extractor

logger = logging.getLogger(__name__)


#: At most this many pending user messages are sent to the extractor (a long
#: backlog after repeated failures is cut to the latest ones).
MAX_PENDING_MESSAGES = 10


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


async def aextract_pending(
    store: BaseStore,
    user: User,
    model: BaseChatModel,
    said: Sequence[HumanMessage],
    *,
    thread: Sequence[BaseMessage],
    said_at: Mapping[str, str] | None,
    timeout_s: float,
    origin: Origin | None = None,
) -> bool:
    """Extract memory from ``said`` (the latest :data:`MAX_PENDING_MESSAGES`
    of ``thread``'s user messages) and write it, each note with what its
    message replied to as context (:func:`replied_to`). ``True`` when done
    (or nothing to do): the caller advances its cursor. ``False`` when the extractor or the store failed: nothing was
    lost, the caller keeps the messages pending. Never raises. ``origin``:
    the run the writes are audited as (default: the extractor, no run)."""
    said = list(said)[-MAX_PENDING_MESSAGES:]
    if not said:
        return True
    try:
        extractor = build_extractor(model)
    except Exception:
        logger.exception("could not build the memory extractor; will retry next turn")
        return False
    # Bounded: a message refused as too long may still sit in the thread.
    extraction = await aextract(extractor, [m.text[:MAX_MESSAGE_CHARS] for m in said], timeout_s=timeout_s)
    if extraction is None:
        return False  # failed, timed out or returned nothing: retried later
    try:
        await aapply_extraction(
            store,
            user,
            extraction,
            as_of=as_of(said, said_at),
            origin=origin,
            said=[Said(m.text, reply) for m, reply in zip(said, replied_to(thread, said), strict=True)],
        )
    except Exception:
        logger.exception("memory write failed; will retry with the next turn")
        return False
    return True
