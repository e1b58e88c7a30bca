"""Notes: a collection of loose facts about the user, one store item per note.

Namespace ``(user_label, "notes")``; key = 32 hex digits of the SHA-256 of the
normalised text (:func:`note_key`), so two concurrent writers of the same fact
(two turns, two parallel tool calls) write the same item: an exact duplicate
is impossible by construction, not only found by a lookup. (Older notes have
random UUID keys; the lookup by ``norm`` still finds them.)
Value::

    {"id": "<key>", "text": "Allergic to peanuts", "norm": "allergic to peanuts",
     "source": "user_said", "first_seen": "<UTC ISO>", "updated_at": "<UTC ISO>"}

Only ``text`` is embedded (``index.fields = ["text"]``).

* :func:`aremember` skips exact duplicates (same ``norm``, found with a store
  ``filter``, which every backend evaluates) and semantic duplicates
  (similarity >= :data:`DEDUPE_THRESHOLD` *and* no new content word, see
  :mod:`mnemo._lexical`). A duplicate refreshes the existing note's
  ``updated_at`` instead of adding a second copy.
* :func:`mnemo.recall.arecall` returns notes by meaning (above a score
  threshold; an item with ``score is None`` is never a hit) fused with a BM25
  ranking by words.
* :func:`arecent` sorts by mnemo's own ``updated_at`` explicitly.
* :func:`alist_notes` pages through everything (no silent ``limit=10``).
* :func:`aforget` removes by id or by meaning and returns what it removed.

Thresholds are cosine similarities of multilingual-e5-small and were measured
on LoCoMo and on paraphrase pairs (``docs/thresholds.md``); with another
embedding model, measure again (``python -m bench thresholds``).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

from langgraph.store.base import BaseStore, Item, Op, PutOp, Result, SearchItem, SearchOp

from mnemo import note_index
from mnemo._lexical import adds_nothing, collapse_whitespace
from mnemo.audit import AuditAction, Origin, audit_op
from mnemo.errors import InvalidInputError, NoteLimitError
from mnemo.expiry import live, ttl_minutes
from mnemo.identity import NOTES, User
from mnemo.limits import bounded_query
from mnemo.profile import SOURCES, Source
from mnemo.storable import check_storable_text
from mnemo.store_reads import (
    alist_all,
    most_recent,
    now_iso,
    require_index,
    score_of,
    search_result,
    semantic_hits,
)

#: Longest note accepted, in characters. A note is a fact, not a document.
MAX_NOTE_CHARS = 1000
#: Notes one user may keep. At the cap, ``remember_note`` is refused with a
#: message (forget some first) and the extractor's new notes are dropped
#: (logged); repeating or refining a known note still works. Recall ranks
#: every note by words up to this many (mnemo.recall.LEXICAL_MAX_NOTES).
MAX_NOTES_PER_USER = 2000
#: New notes one extraction (one turn) may add; the rest are dropped (logged).
MAX_NOTES_PER_TURN = 20

#: Similarity (new text as query, stored note as passage) at or above which a
#: stored note is a dedupe *candidate*; it is a duplicate only if the lexical
#: guard agrees (0 of 20 distinct-fact pairs merged, 12 of 20 paraphrases
#: deduped; docs/thresholds.md).
DEDUPE_THRESHOLD = 0.88
#: "Forget what I said about X" deletes notes at or above this similarity and
#: within :data:`FORGET_MARGIN` of the best match, never a loose neighbour.
FORGET_MIN_SCORE = 0.80
FORGET_MARGIN = 0.03


class Note(TypedDict):
    """A note as mnemo returns it."""

    id: str
    text: str
    source: Source
    first_seen: str
    updated_at: str
    expires_at: NotRequired[str]
    """Only for a time-bound note: when it stops being true (UTC ISO)."""
    score: NotRequired[float]


class RememberResult(TypedDict):
    """``stored``: a new note; ``duplicate``: already known (recency refreshed);
    ``refined``: replaced a less detailed wording of the same fact;
    ``over_limit``: new, but not stored (the user is at the note cap)."""

    status: Literal["stored", "duplicate", "refined", "over_limit"]
    note: Note


def normalize_note(text: str) -> str:
    """Key for exact dedupe: case-folded, whitespace collapsed, end punctuation dropped."""
    return collapse_whitespace(text).casefold().rstrip(".!?。！？")


def validate_note(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"a note is a string, got {type(text).__name__}")
    cleaned = collapse_whitespace(text)
    if not cleaned:
        raise InvalidInputError("a note cannot be empty")
    check_storable_text(cleaned, "the note")
    if len(cleaned) > MAX_NOTE_CHARS:
        raise InvalidInputError(
            f"a note is limited to {MAX_NOTE_CHARS} characters, this one has {len(cleaned)}; store one fact per note"
        )
    return cleaned


def to_note(item: Item) -> Note:
    return note_from_value(item.key, item.value, getattr(item, "score", None))


def note_from_value(key: str, value: Mapping[str, Any], score: float | None = None) -> Note:
    """A :class:`Note` from a stored value (or a copy of one, as the index keeps)."""
    note = Note(
        id=key,
        text=value["text"],
        source=value.get("source", "user_said"),
        first_seen=value.get("first_seen", ""),
        updated_at=value.get("updated_at", ""),
    )
    if value.get("expires_at"):
        note["expires_at"] = value["expires_at"]
    if score is not None:
        note["score"] = round(float(score), 4)
    return note


#: Reads per text in :func:`_duplicate_lookups`.
_LOOKUPS = 3


def _duplicate_lookups(ns: tuple[str, ...], text: str) -> list[SearchOp]:
    """Reads that find a stored note ``text`` repeats: exactly, at its derived
    key (``filter`` on the id, not ``get``: no ghost namespaces), by meaning."""
    norm = normalize_note(text)
    return [
        # exact: an equality filter on the normalised text, evaluated by the store
        SearchOp(ns, filter={"norm": norm}, limit=1),
        SearchOp(ns, filter={"id": note_key(norm)}, limit=1),
        SearchOp(ns, query=text, limit=1),
    ]


def _match(
    text: str, same: list[SearchItem], nearest: list[SearchItem], ns: tuple[str, ...], threshold: float
) -> tuple[Literal["duplicate", "refined"], Item] | None:
    """Whether ``text`` repeats a stored note, or refines one with more detail.

    Exact (normalised) equality is a duplicate. A semantic neighbour counts
    only when it also passes the lexical guard (:mod:`mnemo._lexical`):
    ``text`` adds no content word -> duplicate; the stored note's content
    words are a strict subset of ``text``'s -> ``text`` refines it.
    """
    if same:
        return "duplicate", same[0]
    for hit in semantic_hits(nearest, ns, min_score=threshold):
        if adds_nothing(text, hit.value["text"]):
            return "duplicate", hit
        if adds_nothing(hit.value["text"], text):
            return "refined", hit
    return None


async def aremember(
    store: BaseStore,
    user: User,
    text: str,
    *,
    source: Source = "user_said",
    dedupe_threshold: float = DEDUPE_THRESHOLD,
    origin: Origin | None = None,
    expires_at: str | None = None,
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
    max_notes: int | None = MAX_NOTES_PER_USER,
    at_limit: Literal["refuse", "drop"] = "refuse",
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
    honour it: mnemo's own ``expires_at`` is what hides the note (mnemo.expiry).

    ``max_notes``: when the user already has that many notes, a new note is
    refused (``at_limit="refuse"``: :class:`NoteLimitError`, nothing written)
    or left out (``"drop"``: reported as ``over_limit``); duplicates and
    refinements still apply. ``None``: no cap."""
    plan = NotesPlan.of(user, texts, expires_at=expires_at, source=source)
    if not plan.texts:
        return []
    require_index(store)
    lookups = await store.abatch(plan.lookups(max_notes=max_notes))
    results, ops = plan.apply(
        lookups, threshold=dedupe_threshold, origin=origin, max_notes=max_notes, at_limit=at_limit
    )
    ops += await plan.aindex_ops(store, lookups, ops, max_notes=max_notes)
    await store.abatch(ops)
    return results


@dataclass(frozen=True)
class NotesPlan:
    """The pure part of :func:`aremember_many`, so a caller can put its reads
    and writes in batches of its own (:func:`mnemo.writes.aapply_extraction`
    writes a whole extraction in one batch)."""

    user: User
    texts: list[str]
    expiries: list[str | None]
    source: Source

    @classmethod
    def of(
        cls, user: User, texts: list[str], *, expires_at: list[str | None] | None = None, source: Source = "user_said"
    ) -> NotesPlan:
        """Validated ``texts`` (all of them, before anything is read or written).

        Raises:
            InvalidInputError: an invalid text, expiry list or source.
        """
        cleaned = [validate_note(t) for t in texts]
        expiries: list[str | None] = list(expires_at) if expires_at is not None else [None] * len(cleaned)
        if len(expiries) != len(cleaned):
            raise InvalidInputError(f"{len(expiries)} expiries for {len(cleaned)} notes")
        if source not in SOURCES:
            raise InvalidInputError(f"source must be one of {SOURCES}, got {source!r}")
        return cls(user=user, texts=cleaned, expiries=expiries, source=source)

    @property
    def namespace(self) -> tuple[str, ...]:
        return self.user.namespace(NOTES)

    def lookups(self, *, max_notes: int | None = MAX_NOTES_PER_USER) -> list[Op]:
        """The reads :meth:`apply` and :meth:`aindex_ops` need, for one
        ``abatch``: per text, the note it would repeat exactly, the note at its
        derived key and its nearest neighbour by meaning; then, with a cap, the
        ``max_notes``-th note; then the write-time index items the texts touch
        (:mod:`mnemo.note_index`)."""
        ops: list[Op] = [op for text in self.texts for op in _duplicate_lookups(self.namespace, text)]
        if max_notes is not None:
            ops.append(SearchOp(self.namespace, limit=1, offset=max(max_notes - 1, 0)))
        return [*ops, *note_index.read_ops(self.user, self._index_terms())]

    def _index_terms(self) -> list[str]:
        return note_index.terms_touched(
            [note_index.NoteChange(key="", before=None, after={"text": t}) for t in self.texts]
        )

    async def aindex_ops(
        self, store: BaseStore, lookups: Sequence[Result], ops: Sequence[PutOp], *, max_notes: int | None
    ) -> list[PutOp]:
        """The index writes that keep :mod:`mnemo.note_index` in step with the
        note writes among ``ops`` (a write to a note the lookups found replaces
        that value; any other adds a note). One more read only when a refined
        note's old wording touches terms not read yet."""
        n = _LOOKUPS * len(self.texts) + (max_notes is not None)
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
        return await note_index.acomplete(store, self.user, state, changes)

    def apply(
        self,
        lookups: Sequence[Result],
        *,
        threshold: float = DEDUPE_THRESHOLD,
        origin: Origin | None = None,
        max_notes: int | None = MAX_NOTES_PER_USER,
        at_limit: Literal["refuse", "drop"] = "refuse",
    ) -> tuple[list[RememberResult], list[PutOp]]:
        """What to report and the writes (audit records included), given the
        results of :meth:`lookups` (with the same ``max_notes``).

        Raises:
            NoteLimitError: at the cap with ``at_limit="refuse"`` and a new note to store.
        """
        per_text = lookups[: _LOOKUPS * len(self.texts)]
        full = max_notes is not None and bool(lookups[_LOOKUPS * len(self.texts)])
        results, writes, changes = _plan_notes(
            self.namespace,
            self.texts,
            self.expiries,
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
        origin = origin or Origin(source="extractor" if self.source == "inferred" else self.source)
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
    expiries: list[str | None],
    lookups: Sequence[Result],
    *,
    source: Source,
    threshold: float,
    stamp: str,
    full: bool = False,
) -> tuple[list[RememberResult], list[PutOp], list[_Change]]:
    """What :func:`aremember_many` reports, writes and audits for ``texts``,
    given the results of their :func:`_duplicate_lookups` (in order).

    No two writes share a key, nor an indexed text: the platform's store
    rejects a whole batch that embeds one text twice (see mnemo.store_guard)."""
    results: list[RememberResult] = []
    writes: dict[str, PutOp] = {}
    changes: list[_Change] = []
    new_by_norm: dict[str, Note] = {}
    written_texts: set[str] = set()
    for i, (text, expires) in enumerate(zip(texts, expiries, strict=True)):
        norm = normalize_note(text)
        if norm in new_by_norm:  # repeated within this batch
            results.append(RememberResult(status="duplicate", note=new_by_norm[norm]))
            continue
        same, at_key, nearest = (search_result(r) for r in lookups[_LOOKUPS * i : _LOOKUPS * (i + 1)])
        match = _match(text, same or [it for it in at_key if it.value.get("norm") == norm], nearest, ns, threshold)
        if match is not None:
            status, existing = match
            write, note = _update_existing(ns, existing, status, text, source=source, stamp=stamp, expires=expires)
            results.append(RememberResult(status=status, note=note))
            if existing.key in writes or note["text"] in written_texts:
                continue  # already written by an earlier text of this batch
            writes[existing.key] = write
            written_texts.add(note["text"])
            if status == "refined":
                changes.append(("note.refine", existing.key, existing.value["text"], text))
            continue
        # The key is derived from the normalised text, so two concurrent
        # writers of one fact write one note; a key already holding another
        # text (a note refined since) gets a random one instead.
        key = note_key(norm) if not at_key else uuid.uuid4().hex
        write, note = _new_note(ns, key, text, source=source, stamp=stamp, expires=expires)
        new_by_norm[norm] = note
        if full:
            results.append(RememberResult(status="over_limit", note=note))
            continue
        if text in written_texts:
            results.append(RememberResult(status="duplicate", note=note))
            continue
        writes[key] = write
        written_texts.add(text)
        results.append(RememberResult(status="stored", note=note))
        changes.append(("note.add", key, None, text))
    return results, list(writes.values()), changes


def note_key(norm: str) -> str:
    """Key of a new note: derived from its normalised text (32 hex digits)."""
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()[:32]


def _update_existing(
    ns: tuple[str, ...], existing: Item, status: str, text: str, *, source: Source, stamp: str, expires: str | None
) -> tuple[PutOp, Note]:
    """Repeating a fact confirms it (refresh recency, keep the wording); a more
    detailed wording replaces the old one under the same id. The latest
    statement decides whether it is time-bound."""
    value = {**existing.value, "updated_at": stamp}
    if status == "refined":
        value.update(text=text, norm=normalize_note(text), source=source)
    value.pop("expires_at", None)
    if expires:
        value["expires_at"] = expires
    return PutOp(ns, existing.key, value, ttl=ttl_minutes(expires)), to_note(_with_value(existing, value))


def _new_note(
    ns: tuple[str, ...], key: str, text: str, *, source: Source, stamp: str, expires: str | None
) -> tuple[PutOp, Note]:
    value = {
        "id": key,
        "text": text,
        "norm": normalize_note(text),
        "source": source,
        "first_seen": stamp,
        "updated_at": stamp,
    }
    note = Note(id=key, text=text, source=source, first_seen=stamp, updated_at=stamp)
    if expires:
        value["expires_at"] = note["expires_at"] = expires
    return PutOp(ns, key, value, ttl=ttl_minutes(expires)), note


async def alist_notes(store: BaseStore, user: User) -> list[Note]:
    """Every live note of the user, most recent first (pages past the store's
    limit; expired time-bound notes are left out)."""
    items = live(await alist_all(store, user.namespace(NOTES)))
    return [to_note(it) for it in most_recent(items, len(items))]


async def arecent(store: BaseStore, user: User, n: int) -> list[Note]:
    """The ``n`` most recently updated notes (explicit sort, any backend)."""
    return (await alist_notes(store, user))[:n]


async def aforget(
    store: BaseStore,
    user: User,
    *,
    note_id: str | None = None,
    about: str | None = None,
    min_score: float = FORGET_MIN_SCORE,
    max_notes: int = 5,
    origin: Origin | None = None,
) -> list[Note]:
    """Delete notes by id, or those that match ``about`` by meaning; return them.

    Only the user's own namespace is touched, so an id of another user's note
    removes nothing. Returns ``[]`` when nothing matched. Each deletion appends
    an audit record in the same batch (``origin`` defaults to ``user_said``).
    """
    if (note_id is None) == (about is None):
        raise InvalidInputError("forget takes exactly one of note_id or about")
    ns = user.namespace(NOTES)
    if note_id is not None:
        # A filter on the id kept in the value, not ``get``: get creates ghost
        # namespaces on InMemoryStore.
        items = [it for it in await store.asearch(ns, filter={"id": note_id}, limit=1) if it.key == note_id]
    else:
        require_index(store)
        items = semantic_hits(
            await store.asearch(ns, query=bounded_query(about or ""), limit=max_notes), ns, min_score=min_score
        )
        items = [it for it in items if score_of(it) >= score_of(items[0]) - FORGET_MARGIN] if items else []
    if items:
        origin = origin or Origin(source="user_said")
        await note_index.aapply(
            store,
            user,
            [note_index.NoteChange(key=it.key, before=it.value, after=None) for it in items],
            extra=[
                *(PutOp(ns, it.key, None) for it in items),
                *(audit_op(user, origin, "note.forget", it.key, before=it.value["text"]) for it in items),
            ],
        )
    return [to_note(it) for it in items]


def _with_value(item: Item, value: dict) -> Item:
    return Item(
        value=value, key=item.key, namespace=item.namespace, created_at=item.created_at, updated_at=item.updated_at
    )
