"""Applying an extraction to the store through the profile and notes APIs:
profile changes, new notes and revisions of the notes the extractor was
shown (:mod:`mnemo.writing.known`), in one batch of writes."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypedDict

from langgraph.store.base import BaseStore, Item, PutOp, Result, SearchOp

from mnemo.audit import Origin, abatch_audited, head_op
from mnemo.core import (
    AUDIT,
    PROFILE,
    InvalidInputError,
    User,
    abatch_named,
    adds_nothing,
    alist_rest,
    content_tokens,
    list_op,
    now_iso,
    search_result,
)
from mnemo.notes import (
    MAX_NOTES_PER_USER,
    NotesPlan,
    RememberResult,
    Revision,
    plan_revision,
    revision_terms,
)
from mnemo.profile import ProfileChange, plan_profile_update, profile_audit_ops, profile_from_items
from mnemo.writing.extraction import MemoryExtraction
from mnemo.writing.known import Known, RevisionRequest
from mnemo.writing.refusals import business_record_term
from mnemo.writing.wanted import Wanted, wanted_writes

logger = logging.getLogger(__name__)


class AppliedExtraction(TypedDict):
    profile: list[ProfileChange]
    notes: list[RememberResult]
    revised: list[str]
    """Ids of the notes updated or invalidated."""


async def aapply_extraction(
    store: BaseStore,
    user: User,
    extraction: MemoryExtraction,
    *,
    origin: Origin | None = None,
    as_of: str | None = None,
    said: Sequence[Said] = (),
    known: Known | None = None,
) -> AppliedExtraction:
    """Merge the profile changes and add the notes, all in one store batch
    (after one batch of reads, the audit chain's head among them); writes nothing for an empty extraction. At
    most :data:`~mnemo.notes.model.MAX_NOTES_PER_TURN` notes are kept; at the
    user's note cap, new notes are dropped (logged), the profile still
    applies. Invalid items (e.g. an oversized note, an expiry in the past) are
    dropped one by one, so one bad value does not cost the others. Audited
    as ``origin`` (default: source ``extractor``, no thread or run).

    ``as_of``: time of the newest message extracted; profile fields updated
    after it are not overwritten (:func:`mnemo.profile.record.aupdate_profile`).

    ``said``: the user messages extracted, each with what it replied to: a
    note gets the context of the message it came from (:func:`source_message`),
    and what they do not support is dropped (logged): a note or a revision's
    text they do not support, a name or city with a word not in them
    (:mod:`mnemo.writing.grounding`). Empty: nothing is checked (an
    application's own extraction).

    ``known``: the notes the extractor was shown (:mod:`mnemo.writing.known`):
    the extraction's ``updates`` and ``invalidates`` name notes by their short
    ids there; any other id is ignored (logged). What it did not read (the
    profile, the notes' values) is read with the rest, in the same batch.
    Without it, no note is revised."""
    origin = origin or Origin(source="extractor")
    wanted = wanted_writes(extraction, [m.text for m in said], known, asked=[m.text for m in said if not m.tool_took])
    if not wanted.with_profile and not wanted.notes and not wanted.requests:
        return AppliedExtraction(profile=[], notes=[], revised=[])
    # One batch of reads and one batch of writes for the whole extraction: a
    # store failure leaves the profile and the notes both written or neither.
    plan = _notes_plan(user, wanted, said)
    read_profile = wanted.with_profile and (known is None or known.profile is None)
    # The revised notes' current values, unless read before extracting.
    read_values = known is not None and known.values is None
    got = await abatch_named(
        store,
        {
            # The audit chain's head is read with the rest: no round trip of its own.
            "head": [head_op(user)],
            "profile": [list_op(user.namespace(PROFILE))] if read_profile else [],
            "lookups": plan.lookups() if wanted.notes or wanted.requests else [],
            "values": [SearchOp(plan.namespace, filter={"id": r.key}, limit=1) for r in wanted.requests]
            if read_values
            else [],
        },
    )
    shown = known.profile if known is not None and known.profile is not None else []
    ops, profile = await _profile_ops(store, user, wanted, got["profile"], shown, origin=origin, as_of=as_of)
    values = known.values if known is not None and known.values is not None else {}
    values = {**values, **{it.key: it.value for r in got["values"] for it in search_result(r)}}
    revisions = _revisions(
        user,
        wanted.requests,
        values,
        origin=origin,
        as_of=as_of,
        shown=known.shown_notes() if known is not None else {},
    )
    added, note_ops = await _note_ops(store, user, plan, got["lookups"], revisions, origin=origin)
    ops += note_ops
    if ops:
        (head,) = got["head"]
        await abatch_audited(store, ops, heads={user.label: head})
    return AppliedExtraction(profile=profile, notes=added, revised=[r.change.key for r in revisions])


def _notes_plan(user: User, wanted: Wanted, said: Sequence[Said]) -> NotesPlan:
    """The plan of the new notes, each with the context of the message it came
    from, reading the index terms of the revised notes with theirs."""
    notes = wanted.notes
    return NotesPlan.of(
        user,
        [n.text for n in notes],
        expires_at=[n.expires for n in notes],
        refers_to=[n.refers_to for n in notes],
        contexts=[said[i].in_reply_to if (i := source_message(n.text, said)) is not None else None for n in notes],
        source="user_said",
        more_terms=revision_terms([t for r in wanted.requests for t in (r.shown, r.text) if t is not None]),
    )


async def _profile_ops(
    store: BaseStore,
    user: User,
    wanted: Wanted,
    read: Sequence[Result],
    shown: Sequence[Item],
    *,
    origin: Origin,
    as_of: str | None,
) -> tuple[list[PutOp], list[ProfileChange]]:
    """The profile's writes and audit records: over the profile ``read`` now
    (its first page, the rest listed here), else the one ``shown`` to the extractor."""
    if not wanted.with_profile:
        return [], []
    profile_ns = user.namespace(PROFILE)
    items = await alist_rest(store, profile_ns, search_result(read[0])) if read else shown
    profile_ops, profile = plan_profile_update(
        profile_ns,
        profile_from_items(items),
        wanted.changes,
        forget=wanted.forget,
        source="user_said",
        as_of=as_of,
        sources=wanted.sources,
    )
    return [*profile_ops, *profile_audit_ops(user, profile, origin)], profile


async def _note_ops(
    store: BaseStore,
    user: User,
    plan: NotesPlan,
    lookups: Sequence[Result],
    revisions: Sequence[Revision],
    *,
    origin: Origin,
) -> tuple[list[RememberResult], list[PutOp]]:
    """The new notes (dropped at the user's cap, logged) and the revisions, with
    their index entries and audit records, given the plan's ``lookups``."""
    if not lookups:
        return [], []
    added, note_ops = plan.apply(lookups, origin=origin, at_limit="drop")
    if dropped := sum(r["status"] == "over_limit" for r in added):
        logger.warning("user at the note cap: %d new note(s) from the extractor not stored", dropped)
    # A revision is the user's word on that very note: it wins over a new
    # text deduplicated into it.
    revised = {r.change.key for r in revisions}
    note_ops = [op for op in note_ops if not _writes_to(op, plan.namespace, user.namespace(AUDIT), revised)]
    note_ops += await plan.aindex_ops(
        store, lookups, note_ops, max_notes=MAX_NOTES_PER_USER, also=[r.change for r in revisions]
    )
    return added, [*note_ops, *(op for r in revisions for op in r.ops)]


def _writes_to(op: PutOp, notes_ns: tuple[str, ...], audit_ns: tuple[str, ...], keys: set[str]) -> bool:
    """Whether ``op`` writes one of the notes ``keys``, or audits such a write."""
    if tuple(op.namespace) == notes_ns:
        return op.key in keys
    return tuple(op.namespace) == audit_ns and (op.value or {}).get("target") in keys


def _revisions(
    user: User,
    requests: Sequence[RevisionRequest],
    values: Mapping[str, Mapping[str, Any]],
    *,
    origin: Origin,
    as_of: str | None,
    shown: Mapping[str, str],
) -> list[Revision]:
    """The revisions asked for, of notes that still exist (``values``): a
    note gone since, an invalid or business-record text is ignored (logged).
    A new text that another note ``shown`` (id -> text) already says, one
    the extraction keeps, invalidates the note as merged into that one:
    never two notes saying the same."""
    stamp = now_iso()
    revisions: list[Revision] = []
    dropped = {r.key for r in requests if r.text is None}
    for request in requests:
        text, merged_into = request.text, None
        if text is not None:
            same = (k for k, t in shown.items() if k != request.key and k not in dropped and adds_nothing(text, t))
            if (merged_into := next(same, None)) is not None:
                logger.info("note %s's new text is note %s's; merged into it", request.key[:8], merged_into[:8])
                text = None
        value = values.get(request.key)
        if value is None:
            logger.warning("note %s is gone since the extractor saw it; not revised", request.key[:8])
            continue
        if request.text is not None and business_record_term(request.text) is not None:
            logger.warning("extraction's update of note %s names a business record; ignored", request.key[:8])
            continue
        try:
            revision = plan_revision(
                user, request.key, value, text=text, origin=origin, stamp=stamp, as_of=as_of, merged_into=merged_into
            )
        except InvalidInputError:
            logger.warning("extraction's update of note %s is not a valid note; ignored", request.key[:8])
            continue
        if revision is not None:
            revisions.append(revision)
    return revisions


class Said(NamedTuple):
    """A user message extracted, and the assistant's message it replied to."""

    text: str
    in_reply_to: str | None
    tool_took: bool = False
    """The ``remember_note`` tool took it (answered with no error): its request to
    remember is the tool's, never quoted by the writing (:mod:`mnemo.writing.remembered`)."""


def source_message(note: str, said: Sequence[Said]) -> int | None:
    """Index in ``said`` of the message ``note`` most likely came from: the
    only one, or the one sharing most content words with it (the latest on
    a tie); ``None`` when several share none.

    The extractor returns facts, not where it found them; asking it to cite
    message numbers would put one more field in every extraction for every
    model to get right, where word overlap places a note that restates its
    message's words (mnemo's notes are short restatements) and leaves the
    rest without a context, which only costs the search a hint."""
    if len(said) <= 1:
        return 0 if said else None
    words = content_tokens(note)
    overlaps = [len(words & content_tokens(message.text)) for message in said]
    best = max(range(len(said)), key=lambda i: (overlaps[i], i))
    return best if overlaps[best] else None
