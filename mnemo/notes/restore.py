"""Notes written back as they were (an import, a migration): their ids, dates and
history kept, with the note index and sparse vectors of any other write.

The write path of new notes (:mod:`mnemo.notes.writes`) stamps, dedupes and derives keys;
a restore must not: the note is the document's."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.store.base import BaseStore, Op

from mnemo.core import NOTES, User
from mnemo.notes import index as note_index
from mnemo.notes import sparse_vectors
from mnemo.notes.expiry import parse_expiry
from mnemo.notes.model import normalize_note, validate_context, validate_note, validate_refers_to
from mnemo.notes.plan import note_put, set_context


def note_value(
    key: str,
    text: str,
    *,
    source: str,
    first_seen: str,
    updated_at: str,
    history: Sequence[Mapping[str, Any]] = (),
    expires_at: str | None = None,
    refers_to: str | None = None,
    context: str | None = None,
) -> dict[str, Any]:
    """The stored value of a note restored as given (checked as any note's parts are).

    Raises:
        InvalidInputError: an invalid text, expiry, date or context.
    """
    value: dict[str, Any] = {
        "id": key,
        "text": validate_note(text),
        "norm": normalize_note(text),
        "source": source,
        "first_seen": first_seen,
        "updated_at": updated_at,
    }
    if expires_at:
        value["expires_at"] = parse_expiry(expires_at).isoformat()
    if day := validate_refers_to(refers_to):
        value["refers_to"] = day
    if history:
        value["history"] = [dict(h) for h in history]
    set_context(value, validate_context(context, strict=True))
    return value


def same_note(stored: Mapping[str, Any] | None, value: Mapping[str, Any]) -> bool:
    """Whether ``stored`` already is ``value`` (its sparse vector, derived, aside)."""
    if stored is None:
        return False
    return {k: v for k, v in stored.items() if k != sparse_vectors.SPARSE_FIELD} == {
        k: v for k, v in value.items() if k != sparse_vectors.SPARSE_FIELD
    }


async def arestore(
    store: BaseStore,
    user: User,
    values: Mapping[str, dict[str, Any]],
    *,
    before: Mapping[str, Mapping[str, Any]],
    extra: Sequence[Op] = (),
) -> None:
    """Write the notes ``values`` (id -> stored value, from :func:`note_value`)
    over what the user has (``before``: id -> stored value), with their sparse
    vectors and index entries and ``extra`` (audit records), in one batch after
    one read of the index."""
    stamped = [dict(v) for v in values.values()]
    await sparse_vectors.astamp(stamped)
    ns = user.namespace(NOTES)
    puts = [note_put(ns, v["id"], v, v.get("expires_at")) for v in stamped]
    changes = [note_index.NoteChange(key=v["id"], before=before.get(v["id"]), after=v) for v in stamped]
    await note_index.aapply(store, user, changes, extra=[*puts, *extra])
