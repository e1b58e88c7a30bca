"""Notes the model asks to keep during a turn, written after the reply.

``remember_note`` queues a note with :func:`defer_note` (validated, nothing read,
embedded or written) and answers at once; ``write_memory`` writes the queue with
:func:`awrite_deferred` after the answer, in the same run: the dedupe lookup, the
passages, the sparse stamp and the audit record of :func:`mnemo.notes.aremember_many`.
What a failing store leaves stays queued for the next turn. Why: docs/write-path.md.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore
from typing_extensions import TypedDict  # pydantic reads the graph's state schema (Python < 3.12)

from mnemo.audit import Origin
from mnemo.core import InvalidInputError, User
from mnemo.notes import MAX_NOTES_PER_TURN, aremember_many, validate_context, validate_note
from mnemo.writing.refusals import refuse_business_record

logger = logging.getLogger(__name__)

#: Notes a thread keeps queued at most; past it the oldest are dropped (logged):
#: only a store that keeps failing turn after turn lets a queue grow.
MAX_QUEUED_NOTES = 4 * MAX_NOTES_PER_TURN


class DeferredNote(TypedDict):
    """A note queued in the thread's state (``pending_notes``) until written."""

    id: str
    """The queue entry's own id (not the note's: dedupe decides that)."""
    text: str
    expires_at: str | None
    context: str | None


def defer_note(text: str, *, expires_at: str | None = None, context: str | None = None) -> DeferredNote:
    """``text`` as a queued note, checked as its write will check it.

    Raises:
        InvalidInputError: empty or oversized text or context, or a business record.
    """
    refuse_business_record(text)
    return {
        "id": uuid.uuid4().hex,
        "text": validate_note(text),
        "expires_at": expires_at,
        "context": validate_context(context),
    }


def queue_notes(left: Sequence[Any] | None, right: Any) -> list[DeferredNote]:
    """The ``pending_notes`` reducer: ``{"add": [notes]}`` appends (tools run in
    parallel, each adds its own), ``{"done": [ids]}`` removes what was written;
    at most :data:`MAX_QUEUED_NOTES` kept, the newest."""
    queue = list(left or [])
    if isinstance(right, dict):
        done = set(right.get("done") or ())
        queue = [n for n in queue if n.get("id") not in done] + list(right.get("add") or ())
    if len(queue) > MAX_QUEUED_NOTES:
        logger.warning("%d queued notes dropped: a thread keeps %d", len(queue) - MAX_QUEUED_NOTES, MAX_QUEUED_NOTES)
        queue = queue[-MAX_QUEUED_NOTES:]
    return queue


async def awrite_deferred(
    store: BaseStore, user: User, queued: Sequence[DeferredNote], *, origin: Origin | None = None
) -> list[str]:
    """Write ``queued`` (deduplicated, capped, audited, in two round trips);
    the ids of the entries done with: all of them once written, repeated or
    over the cap (logged), none when the store failed (they stay queued). Never raises."""
    if not queued:
        return []
    try:
        results = await aremember_many(
            store,
            user,
            [n["text"] for n in queued],
            source="user_said",
            origin=origin,
            expires_at=[n.get("expires_at") for n in queued],
            contexts=[n.get("context") for n in queued],
            at_limit="drop",
        )
    except InvalidInputError as exc:  # no longer valid (e.g. a queue from an older version): dropped
        logger.warning("%d queued notes dropped: %s", len(queued), exc)
        return [n["id"] for n in queued]
    except Exception:
        logger.exception("could not write %d queued notes; will retry with the next turn", len(queued))
        return []
    if dropped := [r["note"]["text"] for r in results if r["status"] == "over_limit"]:
        logger.warning("%d queued notes not stored: the user is at the note cap", len(dropped))
    return [n["id"] for n in queued]
