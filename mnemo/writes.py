"""Applying an extraction to the store through the profile and notes APIs."""

from __future__ import annotations

from typing import TypedDict

from langgraph.store.base import BaseStore

from mnemo.audit import Origin
from mnemo.errors import InvalidInputError
from mnemo.expiry import expiry_from
from mnemo.extraction import MemoryExtraction
from mnemo.guards import business_record_term
from mnemo.identity import User
from mnemo.notes import RememberResult, aremember_many, validate_note
from mnemo.profile import ProfileChange, aupdate_profile, normalize_field


class AppliedExtraction(TypedDict):
    profile: list[ProfileChange]
    notes: list[RememberResult]


async def aapply_extraction(
    store: BaseStore,
    user: User,
    extraction: MemoryExtraction,
    *,
    origin: Origin | None = None,
    as_of: str | None = None,
) -> AppliedExtraction:
    """Merge the profile changes and add the notes; writes nothing for an empty
    extraction. Invalid items (e.g. an oversized note, an expiry in the past)
    are dropped one by one, so one bad value does not cost the others. Audited
    as ``origin`` (default: source ``extractor``, no thread or run).

    ``as_of``: time of the newest message extracted; profile fields updated
    after it are not overwritten (:func:`mnemo.profile.aupdate_profile`)."""
    origin = origin or Origin(source="extractor")
    # "not mentioned" values are dropped here too, so an extraction that changes
    # no field skips the profile read.
    changes = {
        f: v for f, v in extraction.profile_changes().items() if _validated_or_none(normalize_field, f, v) is not None
    }
    # Orders, refunds and payments are the order system's, never memory's,
    # whatever the extractor returned (mnemo.guards).
    notes: list[tuple[str, str | None]] = [(text, None) for text in extraction.notes]
    for temporary in extraction.temporary_notes:
        # An unreadable or past expiry drops the note: never kept as durable.
        if (expires := _validated_or_none(lambda until: expiry_from(until=until), temporary.expires)) is not None:
            notes.append((temporary.text, expires))
    notes = [
        (text, expires)
        for text, expires in notes
        if _validated_or_none(validate_note, text) is not None and business_record_term(text) is None
    ]
    profile: list[ProfileChange] = []
    if extraction.forget_fields or changes:
        profile = await aupdate_profile(
            store, user, changes, forget=extraction.forget_fields, source="user_said", as_of=as_of, origin=origin
        )
    added = []
    if notes:
        added = await aremember_many(
            store, user, [t for t, _ in notes], source="user_said", expires_at=[e for _, e in notes], origin=origin
        )
    return AppliedExtraction(profile=profile, notes=added)


def _validated_or_none(validate, *args):
    """``validate(*args)`` (the cleaned value, ``None`` for "not mentioned"),
    or ``None`` when it rejects the input."""
    try:
        return validate(*args)
    except InvalidInputError:
        return None
