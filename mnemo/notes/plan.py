"""The plan of a notes write (:class:`NotesPlan`): what to read, then what
to write and audit, as pure steps, so that a caller can put the reads and
writes in batches of its own (:func:`mnemo.writing.apply.aapply_extraction`
writes a whole extraction in one batch)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langgraph.store.base import BaseStore, Item, Op, PutOp, Result, SearchOp

from mnemo.audit import SOURCES, AuditAction, Origin, Source, audit_op, default_origin
from mnemo.core import NOTES, InvalidInputError, NoteLimitError, User, now_iso, search_result
from mnemo.notes import index as note_index
from mnemo.notes import sparse_vectors
from mnemo.notes.dedupe import LOOKUPS_PER_TEXT, duplicate_lookups, repeated_note
from mnemo.notes.expiry import ttl_minutes
from mnemo.notes.model import (
    DEDUPE_THRESHOLD,
    INDEXED_TEXT_FIELD,
    MAX_NOTES_PER_USER,
    Note,
    RememberResult,
    indexed_text,
    normalize_note,
    note_from_value,
    note_key,
    validate_context,
    validate_note,
    validate_refers_to,
)


@dataclass(frozen=True)
class NotesPlan:
    """The pure part of :func:`mnemo.notes.writes.aremember_many`, so a caller can put its reads
    and writes in batches of its own (:func:`mnemo.writing.apply.aapply_extraction`
    writes a whole extraction in one batch)."""

    user: User
    texts: list[str]
    details: list[NoteDetails]
    source: Source
    more_terms: tuple[str, ...] = ()
    """Index terms of other notes written in the same batch (revised ones,
    :mod:`mnemo.notes.revise`), read with the texts' own."""

    @classmethod
    def of(
        cls,
        user: User,
        texts: list[str],
        *,
        expires_at: list[str | None] | None = None,
        contexts: list[str | None] | None = None,
        refers_to: list[str | None] | None = None,
        source: Source = "user_said",
        more_terms: Sequence[str] = (),
    ) -> NotesPlan:
        """Validated ``texts`` and their details (all of them, before anything
        is read or written).

        Raises:
            InvalidInputError: an invalid text, context, date, list length or source.
        """
        cleaned = [validate_note(t) for t in texts]

        def per_text(values: list[str | None] | None, what: str) -> list[str | None]:
            out: list[str | None] = list(values) if values is not None else [None] * len(cleaned)
            if len(out) != len(cleaned):
                raise InvalidInputError(f"{len(out)} {what} for {len(cleaned)} notes")
            return out

        details = [
            NoteDetails(expires=expires, context=validate_context(context), refers_to=validate_refers_to(day))
            for expires, context, day in zip(
                per_text(expires_at, "expiries"),
                per_text(contexts, "contexts"),
                per_text(refers_to, "refers_to dates"),
                strict=True,
            )
        ]
        if source not in SOURCES:
            raise InvalidInputError(f"source must be one of {SOURCES}, got {source!r}")
        return cls(user=user, texts=cleaned, details=details, source=source, more_terms=tuple(more_terms))

    @property
    def namespace(self) -> tuple[str, ...]:
        return self.user.namespace(NOTES)

    def lookups(self, *, max_notes: int | None = MAX_NOTES_PER_USER) -> list[Op]:
        """The reads :meth:`apply` and :meth:`aindex_ops` need, for one
        ``abatch``: per text, the note it would repeat exactly, the note at its
        derived key and its nearest neighbour by meaning; then, with a cap, the
        ``max_notes``-th note; then the write-time index items the texts touch
        (:mod:`mnemo.notes.index`)."""
        ops: list[Op] = [op for text in self.texts for op in duplicate_lookups(self.namespace, text)]
        if max_notes is not None:
            ops.append(cap_lookup(self.namespace, max_notes))
        return [*ops, *note_index.read_ops(self.user, self._index_terms())]

    def _index_terms(self) -> list[str]:
        texts = note_index.terms_touched(
            [note_index.NoteChange(key="", before=None, after={"text": t}) for t in self.texts]
        )
        return list(dict.fromkeys([*texts, *self.more_terms]))

    async def aindex_ops(
        self,
        store: BaseStore,
        lookups: Sequence[Result],
        ops: Sequence[PutOp],
        *,
        max_notes: int | None,
        also: Sequence[note_index.NoteChange] = (),
    ) -> list[PutOp]:
        """The index writes that keep :mod:`mnemo.notes.index` in step with the
        note writes among ``ops`` (a write to a note the lookups found replaces
        that value; any other adds a note) and with the changes ``also`` (revised
        notes). One more read only when an old wording touches terms not read yet.
        Each written note that lacks its sparse vector gets it here
        (:func:`mnemo.notes.sparse_vectors.astamp`)."""
        n = LOOKUPS_PER_TEXT * len(self.texts) + (max_notes is not None)
        terms = self._index_terms()
        state = note_index.IndexState.from_results(terms, lookups[n:])
        before = {
            it.key: it.value for result in lookups[:n] if isinstance(result, list) for it in search_result(result)
        }
        changes = [
            note_index.NoteChange(key=op.key, before=before.get(op.key), after=op.value)
            for op in ops
            if tuple(op.namespace) == self.namespace and op.value is not None
        ]
        await sparse_vectors.astamp(
            op.value for op in ops if tuple(op.namespace) == self.namespace and isinstance(op.value, dict)
        )
        return await note_index.acomplete(store, self.user, state, [*changes, *also])

    def apply(
        self,
        lookups: Sequence[Result],
        *,
        threshold: float = DEDUPE_THRESHOLD,
        origin: Origin | None = None,
        max_notes: int | None = MAX_NOTES_PER_USER,
        at_limit: Literal["refuse", "drop"],
    ) -> tuple[list[RememberResult], list[PutOp]]:
        """What to report and the writes (audit records included), given the
        results of :meth:`lookups` (with the same ``max_notes``).

        Raises:
            NoteLimitError: at the cap with ``at_limit="refuse"`` and a new note to store.
        """
        per_text = lookups[: LOOKUPS_PER_TEXT * len(self.texts)]
        full = max_notes is not None and bool(lookups[LOOKUPS_PER_TEXT * len(self.texts)])
        results, writes, changes = _plan_notes(
            self.namespace,
            self.texts,
            self.details,
            per_text,
            source=self.source,
            threshold=threshold,
            stamp=now_iso(),
            full=full,
        )
        if full and at_limit == "refuse" and any(r["status"] == "over_limit" for r in results):
            raise NoteLimitError(
                f"The user already has {max_notes} notes, the most mnemo keeps per user; nothing was stored. "
                "Forget notes that no longer matter (forget_note) first."
            )
        origin = origin or default_origin(self.source)
        audits = [
            audit_op(self.user, origin, action, key, before=before, after=after)
            for action, key, before, after in changes
        ]
        return results, [*writes, *audits]


#: One change to audit: (action, note id, text before, text after).
_Change = tuple[AuditAction, str, str | None, str | None]


def _plan_notes(
    ns: tuple[str, ...],
    texts: list[str],
    details: list[NoteDetails],
    lookups: Sequence[Result],
    *,
    source: Source,
    threshold: float,
    stamp: str,
    full: bool,
) -> tuple[list[RememberResult], list[PutOp], list[_Change]]:
    """What :func:`mnemo.notes.writes.aremember_many` reports, writes and audits
    for ``texts``, given the results of their :meth:`NotesPlan.lookups` (in order).

    No two writes share a key, nor an indexed text: the platform's store
    rejects a whole batch that embeds one text twice (see mnemo.stores.guard)."""
    results: list[RememberResult] = []
    writes: dict[str, PutOp] = {}
    changes: list[_Change] = []
    said: dict[str, Note] = {}  # by normalised text: the notes this write wrote or found
    written_texts: set[str] = set()
    for i, (text, detail) in enumerate(zip(texts, details, strict=True)):
        norm = normalize_note(text)
        if norm in said:  # said earlier in this write
            results.append(RememberResult(status="duplicate", note=said[norm]))
            continue
        same, at_key, nearest = (search_result(r) for r in lookups[LOOKUPS_PER_TEXT * i : LOOKUPS_PER_TEXT * (i + 1)])
        match = repeated_note(text, same, nearest, ns, threshold)
        if match is not None:
            status, existing = match
            write, note = _update_existing(ns, existing, status, text, source=source, stamp=stamp, detail=detail)
            results.append(RememberResult(status=status, note=note))
            said[norm] = note
            if existing.key in writes or note["text"] in written_texts:
                continue  # already written by an earlier text of this write
            writes[existing.key] = write
            written_texts.add(note["text"])
            if status == "refined":
                changes.append(("note.refine", existing.key, existing.value["text"], text))
            continue
        # The key is derived from the normalised text, so two concurrent
        # writers of one fact write one note; a key already holding another
        # text (a note refined since) gets a random one instead.
        key = note_key(norm) if not at_key else uuid.uuid4().hex
        write, note = new_note(ns, key, text, source=source, stamp=stamp, detail=detail)
        said[norm] = note
        if full:
            results.append(RememberResult(status="over_limit", note=note))
            continue
        writes[key] = write
        written_texts.add(text)
        results.append(RememberResult(status="stored", note=note))
        changes.append(("note.add", key, None, text))
    return results, list(writes.values()), changes


def _update_existing(
    ns: tuple[str, ...], existing: Item, status: str, text: str, *, source: Source, stamp: str, detail: NoteDetails
) -> tuple[PutOp, Note]:
    """Repeating a fact confirms it (refresh recency, keep the wording); a more
    detailed wording replaces the old one under the same id, with the new
    context and date (the old context stays when none is given: a note never
    goes back from ``indexed_text`` to ``text``, see mnemo.notes.model). The latest
    statement decides whether it is time-bound."""
    value = {**existing.value, "updated_at": stamp}
    if status == "refined":
        value.update(text=text, norm=normalize_note(text), source=source)
        value.pop(sparse_vectors.SPARSE_FIELD, None)  # of the old wording
        if detail.refers_to:
            value["refers_to"] = detail.refers_to
        set_context(value, detail.context or value.get("context"))
    value.pop("expires_at", None)
    if detail.expires:
        value["expires_at"] = detail.expires
    return note_put(ns, existing.key, value, detail.expires), note_from_value(existing.key, value)


def new_note(
    ns: tuple[str, ...], key: str, text: str, *, source: Source, stamp: str, detail: NoteDetails
) -> tuple[PutOp, Note]:
    value: dict[str, Any] = {
        "id": key,
        "text": text,
        "norm": normalize_note(text),
        "source": source,
        "first_seen": stamp,
        "updated_at": stamp,
    }
    if detail.expires:
        value["expires_at"] = detail.expires
    if detail.refers_to:
        value["refers_to"] = detail.refers_to
    set_context(value, detail.context)
    return note_put(ns, key, value, detail.expires), note_from_value(key, value)


def cap_lookup(ns: tuple[str, ...], max_notes: int) -> SearchOp:
    """The read that finds the ``max_notes``-th note of ``ns``: a result means the cap is reached."""
    return SearchOp(ns, limit=1, offset=max(max_notes - 1, 0))


def set_context(value: dict[str, Any], context: str | None) -> None:
    if context:
        value["context"] = context
        value[INDEXED_TEXT_FIELD] = indexed_text(value["text"], context)


def note_put(ns: tuple[str, ...], key: str, value: dict[str, Any], expires: str | None) -> PutOp:
    """The put of a note: a note with a context is embedded twice, as
    ``text`` and as ``indexed_text`` (the store scores an item by its best
    vector); any other by the store's configured fields (``text``).

    Both, not the text in context alone: on LoCoMo's tune conversations the
    best of the two found more evidence than either (docs/bench.md), and the
    dedupe lookup (the new text against ``text``) keeps its calibration."""
    index = ["text", INDEXED_TEXT_FIELD] if INDEXED_TEXT_FIELD in value else None
    return PutOp(ns, key, value, index=index, ttl=ttl_minutes(expires))


@dataclass(frozen=True)
class NoteDetails:
    """What may come with a note's text (validated by :meth:`NotesPlan.of`)."""

    expires: str | None = None
    """``expires_at`` (UTC ISO) of a time-bound note."""
    context: str | None = None
    """What it was said in reply to."""
    refers_to: str | None = None
    """The date the fact is about."""
