"""The write path of notes: :func:`aremember` / :func:`aremember_many` and their plan.

:class:`NotesPlan` lets a caller put the reads and writes in batches of its own; every
stored or refined note appends an audit record and updates the write-time index in
the same batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from langgraph.store.base import BaseStore, Op

from mnemo.audit import Origin, Source, abatch_audited, head_op
from mnemo.core import NOTES, User, require_index
from mnemo.notes.model import DEDUPE_THRESHOLD, MAX_NOTES_PER_USER, RememberResult
from mnemo.notes.plan import NotesPlan, cap_lookup


async def aremember(
    store: BaseStore,
    user: User,
    text: str,
    *,
    source: Source = "user_said",
    dedupe_threshold: float = DEDUPE_THRESHOLD,
    origin: Origin | None = None,
    expires_at: str | None = None,
    context: str | None = None,
    refers_to: str | None = None,
    max_notes: int | None = MAX_NOTES_PER_USER,
) -> RememberResult:
    """Store ``text`` as a note unless it repeats one; returns which happened.

    Raises:
        InvalidInputError: empty or oversized text, or an unknown source.
        NoteLimitError: the user already has ``max_notes`` notes (nothing written).
        IndexMissingError: the store has no vector index (semantic dedupe
            would silently do nothing).
    """
    (result,) = await aremember_many(
        store,
        user,
        [text],
        source=source,
        dedupe_threshold=dedupe_threshold,
        origin=origin,
        expires_at=[expires_at],
        contexts=[context],
        refers_to=[refers_to],
        max_notes=max_notes,
    )
    return result


async def aremember_many(
    store: BaseStore,
    user: User,
    texts: list[str],
    *,
    source: Source = "user_said",
    dedupe_threshold: float = DEDUPE_THRESHOLD,
    origin: Origin | None = None,
    expires_at: list[str | None] | None = None,
    contexts: list[str | None] | None = None,
    refers_to: list[str | None] | None = None,
    max_notes: int | None = MAX_NOTES_PER_USER,
    at_limit: Literal["refuse", "drop"] = "refuse",
    extra: Sequence[Op] = (),
) -> list[RememberResult]:
    """:func:`aremember` for several notes in two store round trips (one batch
    of duplicate lookups, one batch of writes). A text repeated within
    ``texts`` is reported as a duplicate of its first occurrence. All texts are
    validated before anything is written.

    A stored or refined note appends an audit record in the same batch
    (:mod:`mnemo.audit`); a duplicate only refreshes recency and is not audited.
    ``origin`` defaults to ``source`` (``inferred`` recorded as ``extractor``).
    ``expires_at``: one entry per text (``None`` = durable), or ``None`` for
    all durable; the store TTL is set too, as a backstop for backends that
    honour it: mnemo's own ``expires_at`` is what hides the note (mnemo.notes.expiry).
    ``contexts``: per text, what it was said in reply to (embedded with it,
    :func:`mnemo.notes.model.indexed_text`); ``refers_to``: per text, the date the
    fact is about. A repeat keeps the stored note's context and date; a
    refinement takes the new ones (and keeps the old context if it has none).

    ``max_notes``: when the user already has that many notes, a new note is
    refused (``at_limit="refuse"``: :class:`NoteLimitError`, nothing written)
    or left out (``"drop"``: reported as ``over_limit``); duplicates and
    refinements still apply. ``None``: no cap.

    ``extra``: writes of the caller's own (with their audit records) put in the
    same batch, so the whole is one write (a migration's profile)."""
    plan = NotesPlan.of(user, texts, expires_at=expires_at, contexts=contexts, refers_to=refers_to, source=source)
    if not plan.texts:
        if extra:  # no notes, but the caller's own writes are still made
            await abatch_audited(store, extra)
        return []
    require_index(store)
    # The audit chain's head is read with the lookups: no round trip of its own.
    head, *lookups = await store.abatch([head_op(user), *plan.lookups(max_notes=max_notes)])
    results, ops = plan.apply(
        lookups, threshold=dedupe_threshold, origin=origin, max_notes=max_notes, at_limit=at_limit
    )
    ops += await plan.aindex_ops(store, lookups, ops, max_notes=max_notes)
    await abatch_audited(store, [*ops, *extra], heads={user.label: head})
    return results


async def aat_note_cap(store: BaseStore, user: User, *, max_notes: int | None = MAX_NOTES_PER_USER) -> bool:
    """Whether ``user`` already has ``max_notes`` notes (one read, nothing
    embedded): a new note would be refused or dropped. ``None``: no cap."""
    if max_notes is None:
        return False
    (hit,) = await store.abatch([cap_lookup(user.namespace(NOTES), max_notes)])
    return bool(hit)
