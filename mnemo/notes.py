"""Notes: a collection of loose facts about the user, one store item per note.

Namespace ``(user_label, "notes")``; key = a random UUID hex (never a counter:
two parallel tool calls would pick the same number and overwrite each other).
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

import uuid
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from langgraph.store.base import BaseStore, Item, Op, PutOp, Result, SearchItem, SearchOp

from mnemo import note_index
from mnemo._lexical import adds_nothing, collapse_whitespace
from mnemo.audit import Origin, audit_op
from mnemo.errors import InvalidInputError
from mnemo.store_reads import alist_all, most_recent, now_iso, score_of, search_result, semantic_hits
from mnemo.storable import check_storable_text
from mnemo.identity import NOTES, User
from mnemo.profile import SOURCES, Source

#: Longest note accepted, in characters. A note is a fact, not a document.
MAX_NOTE_CHARS = 1000

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
    score: NotRequired[float]


class RememberResult(TypedDict):
    """``stored``: a new note; ``duplicate``: already known (recency refreshed);
    ``refined``: replaced a less detailed wording of the same fact."""

    status: Literal["stored", "duplicate", "refined"]
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
            f"a note is limited to {MAX_NOTE_CHARS} characters, this one has {len(cleaned)}; "
            "store one fact per note"
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
    if score is not None:
        note["score"] = round(float(score), 4)
    return note


def _duplicate_lookups(ns: tuple[str, ...], text: str) -> list[SearchOp]:
    """Two reads that find a stored note ``text`` repeats: exactly, then in meaning."""
    return [
        # exact: an equality filter on the normalised text, evaluated by the store
        SearchOp(ns, filter={"norm": normalize_note(text)}, limit=1),
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
) -> RememberResult:
    """Store ``text`` as a note unless it repeats one; returns which happened.

    Raises:
        InvalidInputError: empty or oversized text, or an unknown source.
        IndexMissingError: the store has no vector index (semantic dedupe
            would silently do nothing).
    """
    (result,) = await aremember_many(
        store, user, [text], source=source, dedupe_threshold=dedupe_threshold, origin=origin
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
) -> list[RememberResult]:
    """:func:`aremember` for several notes in two store round trips (one batch
    of duplicate lookups, one batch of writes). A text repeated within
    ``texts`` is reported as a duplicate of its first occurrence. All texts are
    validated before anything is written.

    A stored or refined note appends an audit record in the same batch
    (:mod:`mnemo.audit`); a duplicate only refreshes recency and is not audited.
    ``origin`` defaults to ``source`` (``inferred`` recorded as ``extractor``)."""
    cleaned = [validate_note(t) for t in texts]
    if source not in SOURCES:
        raise InvalidInputError(f"source must be one of {SOURCES}, got {source!r}")
    if not cleaned:
        return []
    ns = user.namespace(NOTES)
    lookup_ops: list[Op] = [op for text in cleaned for op in _duplicate_lookups(ns, text)]
    terms = note_index.terms_touched(
        [note_index.NoteChange(key="", before=None, after={"text": t}) for t in cleaned]
    )
    found = await store.abatch([*lookup_ops, *note_index.read_ops(user, terms)])
    lookups, index_state = found[: len(lookup_ops)], note_index.IndexState.from_results(terms, found[len(lookup_ops) :])
    results, writes, changes = _plan_notes(
        ns, cleaned, lookups, source=source, threshold=dedupe_threshold, stamp=now_iso()
    )
    origin = origin or Origin(source="extractor" if source == "inferred" else source)
    audits = [audit_op(user, origin, action, key, before=before, after=after) for action, key, before, after in changes]
    index_writes = await note_index.acomplete(store, user, index_state, _index_changes(lookups, writes))
    await store.abatch([*writes, *audits, *index_writes])
    return results


def _index_changes(lookups: list[Result], writes: list[PutOp]) -> list[note_index.NoteChange]:
    """The note changes ``writes`` make, for :mod:`mnemo.note_index` (a write
    to a note the lookups found replaces that value; any other adds a note)."""
    before = {it.key: it.value for result in lookups for it in search_result(result)}
    return [note_index.NoteChange(key=w.key, before=before.get(w.key), after=w.value) for w in writes]


#: One change to audit: (action, note id, text before, text after).
_Change = tuple[str, str, str | None, str | None]


def _plan_notes(
    ns: tuple[str, ...], texts: list[str], lookups: list[Result], *, source: Source, threshold: float, stamp: str
) -> tuple[list[RememberResult], list[PutOp], list[_Change]]:
    """What :func:`aremember_many` reports, writes and audits for ``texts``,
    given the results of their :func:`_duplicate_lookups` (two per text, in order)."""
    results: list[RememberResult] = []
    writes: dict[str, PutOp] = {}
    changes: list[_Change] = []
    new_by_norm: dict[str, Note] = {}
    for i, text in enumerate(texts):
        norm = normalize_note(text)
        if norm in new_by_norm:  # repeated within this batch
            results.append(RememberResult(status="duplicate", note=new_by_norm[norm]))
            continue
        match = _match(text, search_result(lookups[2 * i]), search_result(lookups[2 * i + 1]), ns, threshold)
        if match is not None:
            status, existing = match
            write, note = _update_existing(ns, existing, status, text, source=source, stamp=stamp)
            writes[existing.key] = write
            results.append(RememberResult(status=status, note=note))
            if status == "refined":
                changes.append(("note.refine", existing.key, existing.value["text"], text))
            continue
        write, note = _new_note(ns, text, source=source, stamp=stamp)
        writes[note["id"]] = write
        new_by_norm[norm] = note
        results.append(RememberResult(status="stored", note=note))
        changes.append(("note.add", note["id"], None, text))
    return results, list(writes.values()), changes


def _update_existing(
    ns: tuple[str, ...], existing: Item, status: str, text: str, *, source: Source, stamp: str
) -> tuple[PutOp, Note]:
    """Repeating a fact confirms it (refresh recency, keep the wording); a more
    detailed wording replaces the old one under the same id."""
    value = {**existing.value, "updated_at": stamp}
    if status == "refined":
        value.update(text=text, norm=normalize_note(text), source=source)
    return PutOp(ns, existing.key, value), to_note(_with_value(existing, value))


def _new_note(ns: tuple[str, ...], text: str, *, source: Source, stamp: str) -> tuple[PutOp, Note]:
    key = uuid.uuid4().hex
    value = {"id": key, "text": text, "norm": normalize_note(text), "source": source,
             "first_seen": stamp, "updated_at": stamp}
    return PutOp(ns, key, value), Note(id=key, text=text, source=source, first_seen=stamp, updated_at=stamp)


async def alist_notes(store: BaseStore, user: User) -> list[Note]:
    """Every note of the user, most recent first (pages past the store's limit)."""
    items = await alist_all(store, user.namespace(NOTES))
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
        items = semantic_hits(await store.asearch(ns, query=about, limit=max_notes), ns, min_score=min_score)
        items = [it for it in items if score_of(it) >= score_of(items[0]) - FORGET_MARGIN] if items else []
    if items:
        origin = origin or Origin(source="user_said")
        await note_index.aapply(
            store, user, [note_index.NoteChange(key=it.key, before=it.value, after=None) for it in items],
            extra=[
                *(PutOp(ns, it.key, None) for it in items),
                *(audit_op(user, origin, "note.forget", it.key, before=it.value["text"]) for it in items),
            ],
        )
    return [to_note(it) for it in items]


def _with_value(item: Item, value: dict) -> Item:
    return Item(value=value, key=item.key, namespace=item.namespace, created_at=item.created_at, updated_at=item.updated_at)

