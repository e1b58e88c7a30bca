"""Notes the model asks to keep during a turn, written after the reply.

``remember_note`` checks a note with :func:`defer_note` and puts it in the user's
queue in the store with :func:`aqueue_note` (nothing embedded) before it answers
"will be remembered": the queue is not the run's state, which a rollback of the
run deletes. :func:`adrain` writes the queue through :func:`mnemo.notes.aremember_many`
(dedupe lookup, passages, sparse stamp, audit record with the run that queued the
note), each entry's removal in the same batch as its write: ``write_memory`` drains
the run's own entries after the reply, and the entries of any run of the same user
that is no longer in progress (rolled back, cancelled, stopped). A store that fails
keeps the queue for the next turn. Why: docs/write-path.md.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore, PutOp, SearchOp
from typing_extensions import TypedDict  # pydantic reads the graph's state schema (Python < 3.12)

from mnemo.audit import Origin
from mnemo.core import QUEUED_NOTES, InvalidInputError, User, now_iso, search_result
from mnemo.notes import MAX_QUEUED_NOTES, aremember_many, validate_context, validate_note
from mnemo.writing.refusals import refuse_business_record

logger = logging.getLogger(__name__)

#: Seconds after which an entry whose run's progress cannot be known (no server
#: to ask, or it did not answer) is written by another run anyway: longer than a turn.
STALE_S = 15 * 60

#: Whether the run ``(thread_id, run_id)`` is in progress; ``None``: cannot tell.
RunInProgress = Callable[[str | None, str | None], Awaitable[bool | None]]


class DeferredNote(TypedDict):
    """A note queued until written: the value of its item in ``(label, QUEUED_NOTES)``."""

    id: str
    """The queue entry's own id, its key (not the note's: dedupe decides that)."""
    text: str
    expires_at: str | None
    context: str | None
    queued_at: str
    """UTC ISO time the tool queued it."""
    thread_id: str | None
    run_id: str | None
    """The run whose tool queued it: its write's audited origin."""


def defer_note(
    text: str, *, expires_at: str | None = None, context: str | None = None, origin: Origin | None = None
) -> DeferredNote:
    """``text`` as a queued note of ``origin``'s run, checked as its write will check it.

    Raises:
        InvalidInputError: empty or oversized text or context, or a business record.
    """
    refuse_business_record(text)
    return {
        "id": uuid.uuid4().hex,
        "text": validate_note(text),
        "expires_at": expires_at,
        "context": validate_context(context),
        "queued_at": now_iso(),
        "thread_id": origin.thread_id if origin else None,
        "run_id": origin.run_id if origin else None,
    }


async def aqueue_note(store: BaseStore, user: User, note: DeferredNote) -> None:
    """Put ``note`` in ``user``'s queue (one write, nothing embedded). Raises what
    the store raises: then nothing was queued, and the tool must not say it will be."""
    await store.abatch([PutOp(user.namespace(QUEUED_NOTES), note["id"], dict(note), index=False)])


def queue_notes(left: Sequence[Any] | None, right: Any) -> list[dict[str, Any]]:
    """The reducer of the thread state's ``pending_notes``, where versions before
    the store queue kept their queue: ``{"done": [ids]}`` removes what
    :func:`amove_legacy` moved to the store; nothing adds to it any more."""
    done = set(right.get("done") or ()) if isinstance(right, dict) else set()
    return [n for n in (left or []) if not (isinstance(n, dict) and n.get("id") in done)]


async def amove_legacy(store: BaseStore, user: User, state_queue: Sequence[Any], origin: Origin) -> list[str]:
    """Move the notes an older version queued in a thread's state into the store
    queue, as entries of ``origin``'s run; the ids moved (none when the store failed)."""
    moved: list[DeferredNote] = [
        {**_entry(n), "thread_id": origin.thread_id, "run_id": origin.run_id}
        for n in state_queue
        if isinstance(n, dict) and n.get("id") and isinstance(n.get("text"), str)
    ]
    if not moved:
        return []
    try:
        await store.abatch([PutOp(user.namespace(QUEUED_NOTES), n["id"], dict(n), index=False) for n in moved])
    except Exception:
        logger.exception("could not move %d notes queued in the thread's state; they stay there", len(moved))
        return []
    return [n["id"] for n in moved]


def _entry(value: Any) -> DeferredNote:
    """A stored queue entry as :class:`DeferredNote` (a missing field read as absent)."""
    n = value if isinstance(value, dict) else {}
    text = n.get("text")
    return {
        "id": str(n.get("id")),
        "text": text if isinstance(text, str) else "",
        "expires_at": n.get("expires_at"),
        "context": n.get("context"),
        "queued_at": str(n.get("queued_at") or ""),
        "thread_id": n.get("thread_id"),
        "run_id": n.get("run_id"),
    }


async def adrain(
    store: BaseStore,
    user: User,
    origin: Origin,
    *,
    in_progress: RunInProgress | None = None,
    now: datetime | None = None,
) -> list[str]:
    """Write ``user``'s queued notes that ``origin``'s run may write: its own, and
    those of runs known not to be in progress (``in_progress`` says ``False``:
    ended, or gone as a rollback leaves them) or, when that cannot be known, queued
    more than :data:`STALE_S` ago. Each run's entries are written with that run as
    the audited origin, and removed in the same batch. Returns the ids of the
    entries done with (written, repeated, or no longer valid: logged). Never
    raises: what a failing store leaves stays queued."""
    ns = user.namespace(QUEUED_NOTES)
    try:
        (found,) = await store.abatch([SearchOp(ns, limit=MAX_QUEUED_NOTES)])
    except Exception:
        logger.exception("could not read the queued notes; they wait for the next turn")
        return []
    runs: dict[tuple[str | None, str | None], list[DeferredNote]] = {}
    for it in search_result(found):
        entry = _entry({**it.value, "id": it.key})
        runs.setdefault((entry["thread_id"], entry["run_id"]), []).append(entry)
    done: list[str] = []
    for (thread_id, run_id), queued in runs.items():
        own = (thread_id, run_id) == (origin.thread_id, origin.run_id)
        if own or await _ended(thread_id, run_id, queued, in_progress, now or datetime.now(UTC)):
            done += await awrite_deferred(store, user, queued)
    return done


async def _ended(
    thread_id: str | None,
    run_id: str | None,
    queued: list[DeferredNote],
    in_progress: RunInProgress | None,
    now: datetime,
) -> bool:
    running = None
    if in_progress is not None:
        try:
            running = await in_progress(thread_id, run_id)
        except Exception:
            logger.exception("could not tell whether run %s is in progress", run_id)
    if running is not None:
        return not running
    oldest = min(_age_s(e, now) for e in queued)
    return oldest > STALE_S


def _age_s(entry: DeferredNote, now: datetime) -> float:
    try:
        return (now - datetime.fromisoformat(entry["queued_at"])).total_seconds()
    except (TypeError, ValueError):
        return float("inf")  # no time it was queued: no run is waiting to write it


async def awrite_deferred(store: BaseStore, user: User, queued: Sequence[DeferredNote]) -> list[str]:
    """Write one run's ``queued`` entries (deduplicated, capped, audited with that
    run as the origin) and remove them from the queue in the same batch; the ids
    done with: all of them once written, repeated or over the cap (logged), the
    invalid ones (logged), none when the store failed. Never raises."""
    if not queued:
        return []
    ns = user.namespace(QUEUED_NOTES)
    valid, invalid = [], []
    for n in queued:
        try:
            refuse_business_record(n["text"])
            validate_note(n["text"])
            validate_context(n.get("context"))
            valid.append(n)
        except InvalidInputError as exc:  # no longer valid (a rule changed since it was queued): dropped
            logger.warning("a queued note was dropped: %s", exc)
            invalid.append(n)
    removed = [PutOp(ns, n["id"], None) for n in [*valid, *invalid]]
    origin = Origin(source="tool", thread_id=queued[0]["thread_id"], run_id=queued[0]["run_id"])
    try:
        results = await aremember_many(
            store,
            user,
            [n["text"] for n in valid],
            source="user_said",
            origin=origin,
            expires_at=[n.get("expires_at") for n in valid],
            contexts=[n.get("context") for n in valid],
            at_limit="drop",
            extra=removed,
        )
    except InvalidInputError as exc:  # a rule of the write itself refused them: dropped
        logger.warning("%d queued notes dropped: %s", len(valid), exc)
        return await _remove(store, removed)
    except Exception:
        logger.exception("could not write %d queued notes; will retry with the next turn", len(queued))
        return []
    if dropped := [r["note"]["text"] for r in results if r["status"] == "over_limit"]:
        logger.warning("%d queued notes not stored: the user is at the note cap", len(dropped))
    return [op.key for op in removed]


async def _remove(store: BaseStore, removed: list[PutOp]) -> list[str]:
    try:
        await store.abatch(removed)
    except Exception:
        logger.exception("could not remove %d queued notes; they are tried again next turn", len(removed))
        return []
    return [op.key for op in removed]
