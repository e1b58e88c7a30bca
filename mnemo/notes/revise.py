"""Revising a stored note: a new text (update) or its end (invalidate), as writes
for the caller's batch. Nothing is silently lost: the former text goes to the note's
``history``; an invalidated note moves whole to ``(label, INVALIDATED_NOTES)``, out of
recall and the prompt, in the export until forgotten (docs/notes.md)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from langgraph.store.base import BaseStore, PutOp, SearchOp

from mnemo.audit import Origin, Source, audit_op
from mnemo.core import INVALIDATED_NOTES, NOTES, User, now_iso, search_result
from mnemo.notes import index as note_index
from mnemo.notes.expiry import live
from mnemo.notes.index import NoteChange
from mnemo.notes.model import Note, normalize_note, note_from_value, to_note, validate_note
from mnemo.notes.plan import note_put, set_context
from mnemo.notes.sparse_vectors import SPARSE_FIELD
from mnemo.profile import MAX_HISTORY

logger = logging.getLogger(__name__)


class Revision(NamedTuple):
    """The writes of one revised note (note, moved copy, audit), its index
    change and its value after (where it now is: the notes or, invalidated, the invalidated notes)."""

    ops: list[PutOp]
    change: NoteChange
    value: dict[str, Any]


def plan_revision(
    user: User,
    key: str,
    before: Mapping[str, Any],
    *,
    text: str | None,
    origin: Origin,
    stamp: str,
    source: Source = "user_said",
    as_of: str | None = None,
    merged_into: str | None = None,
) -> Revision | None:
    """The revision of note ``key`` (stored value ``before``): its new
    ``text``, or ``None`` to invalidate it (``merged_into``: the id of the
    note that now says it). ``None`` when there is nothing to do: the same
    text again, or the note changed after ``as_of`` (logged).

    Raises:
        InvalidInputError: an invalid new text.
    """
    if as_of and str(before.get("updated_at", "")) > as_of:
        logger.info("note %s changed after these words were said; not revised", key[:8])
        return None
    entry = {"text": before["text"], "source": before.get("source", "user_said"), "until": stamp}
    # What dated the former text stays with it: the new one is said now, durable, about no date.
    entry |= {f: before[f] for f in ("first_seen", "refers_to", "expires_at") if before.get(f)}
    if origin.thread_id:
        entry["thread_id"] = origin.thread_id
    history = [*before.get("history", []), entry][-MAX_HISTORY:]
    if text is None:
        after = {**before, "history": history, "invalidated_at": stamp}
        if merged_into:
            after["merged_into"] = merged_into
        return Revision(
            [
                PutOp(user.namespace(NOTES), key, None),
                PutOp(user.namespace(INVALIDATED_NOTES), key, after, index=False),
                audit_op(user, origin, "note.invalidate", key, before=before["text"]),
            ],
            NoteChange(key=key, before=before, after=None),
            after,
        )
    text = validate_note(text)
    if normalize_note(text) == normalize_note(before["text"]):
        return None
    value = {**before, "text": text, "norm": normalize_note(text), "source": source, "first_seen": stamp}
    value |= {"updated_at": stamp, "history": history}
    value.pop("refers_to", None)
    value.pop("expires_at", None)
    value.pop(SPARSE_FIELD, None)  # of the former text: the note keeps its dense place until restamped
    set_context(value, value.get("context"))
    return Revision(
        [
            note_put(user.namespace(NOTES), key, value, None),  # durable, as said above
            audit_op(user, origin, "note.update", key, before=before["text"], after=text),
        ],
        NoteChange(key=key, before=before, after=value),
        value,
    )


async def arevise(
    store: BaseStore, user: User, note_id: str, *, text: str | None, origin: Origin, source: Source = "user_said"
) -> Note | None:
    """Update (``text``) or invalidate (``None``) the user's note ``note_id``
    (the tools' path): the note, its index and its audit record in one write.
    ``None`` when the user has no such note (another user's id included): nothing changes.

    Raises:
        InvalidInputError: an invalid new text.
    """
    found = await store.asearch(user.namespace(NOTES), filter={"id": note_id}, limit=1)
    item = next((it for it in found if it.key == note_id), None)
    if item is None:
        logger.warning("no note %r of this user to revise; nothing changed", note_id[:40])
        return None
    revision = plan_revision(user, item.key, item.value, text=text, origin=origin, stamp=now_iso(), source=source)
    if revision is None:
        return to_note(item)
    await aapply_revisions(store, user, [revision])
    return note_from_value(item.key, revision.value)


async def aget_note(store: BaseStore, user: User, note_id: str) -> tuple[Note, bool] | None:
    """The user's note ``note_id`` with its history, and whether it was
    invalidated (out of recall, kept until forgotten); ``None`` when the user
    has no such note (another user's id included). An expired note counts as gone."""
    found = await store.abatch(
        [
            SearchOp(ns, filter={"id": note_id}, limit=1)
            for ns in (user.namespace(NOTES), user.namespace(INVALIDATED_NOTES))
        ]
    )
    for invalidated, result in enumerate(found):
        for item in live(it for it in search_result(result) if it.key == note_id):
            return to_note(item), bool(invalidated)
    return None


async def aapply_revisions(store: BaseStore, user: User, revisions: Sequence[Revision]) -> None:
    """Write ``revisions`` with the index items they touch (one read, one write)."""
    if revisions:
        await note_index.aapply(
            store, user, [r.change for r in revisions], extra=[op for r in revisions for op in r.ops]
        )


def revision_terms(texts: Sequence[str]) -> list[str]:
    """The index terms a revision of notes with ``texts`` (old and new) touches,
    to read them with the rest of a write (:class:`~mnemo.notes.plan.NotesPlan`)."""
    return note_index.terms_touched([NoteChange(key="", before=None, after={"text": t}) for t in texts])
