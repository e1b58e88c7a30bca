"""Notes: a collection of loose facts about the user, one store item per note.

Namespace ``(user_label, "notes")``; key = a random UUID hex (never a counter:
two parallel tool calls would pick the same number and overwrite each other).
Value::

    {"id": "<key>", "text": "Allergic to peanuts", "norm": "allergic to peanuts",
     "source": "user_said", "first_seen": "<UTC ISO>", "updated_at": "<UTC ISO>",
     "expires_at": "<UTC ISO>"}            # only for a time-bound note

Only ``text`` is embedded (``index.fields = ["text"]``).

A time-bound note (``expires_at``) is invisible to every read here once it
expires, whatever the backend does with TTLs (:mod:`mnemo.expiry`).

* :func:`aremember` skips exact duplicates (same ``norm``, found with a store
  ``filter``, which every backend evaluates) and semantic duplicates
  (similarity >= :data:`DEDUPE_THRESHOLD` *and* no new content word, see
  :mod:`mnemo._lexical`). A duplicate refreshes the existing note's
  ``updated_at`` instead of adding a second copy.
* :func:`arecall` returns notes by meaning (above a score threshold; an item
  with ``score is None`` is never a hit) fused with a BM25 ranking by words.
* :func:`arecent` sorts by mnemo's own ``updated_at`` explicitly.
* :func:`alist_notes` pages through everything (no silent ``limit=10``).
* :func:`aforget` removes by id or by meaning and returns what it removed.

Thresholds are cosine similarities of multilingual-e5-small and were measured
on LoCoMo and on paraphrase pairs (``docs/thresholds.md``); with another
embedding model, measure again (``python -m bench thresholds``).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Literal, NotRequired, TypedDict

from langgraph.store.base import BaseStore, Item, PutOp, SearchItem, SearchOp

from mnemo._lexical import adds_nothing, bm25_rank, reciprocal_rank_fusion
from mnemo._store import alist_all, exact, list_op, most_recent, now_iso, query_op, semantic_hits
from mnemo.errors import InvalidInputError, check_storable_text
from mnemo.expiry import live, ttl_minutes
from mnemo.identity import NOTES, User
from mnemo.profile import SOURCES, Source

#: Longest note accepted, in characters. A note is a fact, not a document.
MAX_NOTE_CHARS = 1000

#: Similarity (new text as query, stored note as passage) at or above which a
#: stored note is a dedupe *candidate*; it is a duplicate only if the lexical
#: guard agrees (0 of 20 distinct-fact pairs merged, 12 of 20 paraphrases
#: deduped; docs/thresholds.md).
DEDUPE_THRESHOLD = 0.88
#: Minimum similarity for a note to be recalled by meaning: the 5th percentile
#: of question-to-evidence similarity on LoCoMo (0.780), so 95 % of true hits pass.
RECALL_MIN_SCORE = 0.78
#: "Forget what I said about X" deletes notes at or above this similarity and
#: within :data:`FORGET_MARGIN` of the best match, never a loose neighbour.
FORGET_MIN_SCORE = 0.80
FORGET_MARGIN = 0.03
#: Candidates each ranking (dense, BM25) contributes to the fusion.
FUSION_CANDIDATES = 50
#: Above this many notes of one user, recall is dense only: reading and ranking
#: every note on each query would cost more than it brings.
LEXICAL_MAX_NOTES = 2000


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
    ``refined``: replaced a less detailed wording of the same fact."""

    status: Literal["stored", "duplicate", "refined"]
    note: Note


def normalize_note(text: str) -> str:
    """Key for exact dedupe: case-folded, whitespace collapsed, end punctuation dropped."""
    return re.sub(r"\s+", " ", text).strip().casefold().rstrip(".!?。！？")


def validate_note(text: object) -> str:
    if not isinstance(text, str):
        raise InvalidInputError(f"a note is a string, got {type(text).__name__}")
    cleaned = re.sub(r"\s+", " ", text).strip()
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
    note = Note(
        id=item.key,
        text=item.value["text"],
        source=item.value.get("source", "user_said"),
        first_seen=item.value.get("first_seen", ""),
        updated_at=item.value.get("updated_at", ""),
    )
    if item.value.get("expires_at"):
        note["expires_at"] = item.value["expires_at"]
    if getattr(item, "score", None) is not None:
        note["score"] = round(float(item.score), 4)
    return note


def _duplicate_lookups(ns: tuple[str, ...], text: str) -> list[SearchOp]:
    """Two reads that find a stored note ``text`` repeats: exactly, then in meaning."""
    return [
        # exact: an equality filter on the normalised text, evaluated by the store
        SearchOp(ns, filter={"norm": normalize_note(text)}, limit=1),
        SearchOp(ns, query=text, limit=1),
    ]


def _match(
    text: str, same: list[Item], nearest: list[Item], ns: tuple[str, ...], threshold: float
) -> tuple[Literal["duplicate", "refined"], Item] | None:
    """Whether ``text`` repeats a stored note, or refines one with more detail.

    Exact (normalised) equality is a duplicate. A semantic neighbour counts
    only when it also passes the lexical guard (:mod:`mnemo._lexical`):
    ``text`` adds no content word -> duplicate; the stored note's content
    words are a strict subset of ``text``'s -> ``text`` refines it.
    """
    # An expired note is no longer known: the same words start a new note.
    same, nearest = live(same), live(nearest)
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
    expires_at: str | None = None,
) -> RememberResult:
    """Store ``text`` as a note unless it repeats one; returns which happened.

    ``expires_at`` (UTC ISO, see :func:`mnemo.expiry.expiry_from`) makes it a
    time-bound note. The latest statement decides: repeating a note with (or
    without) an expiry gives the stored note that expiry (or makes it durable).

    Raises:
        InvalidInputError: empty or oversized text, or an unknown source.
        IndexMissingError: the store has no vector index (semantic dedupe
            would silently do nothing).
    """
    (result,) = await aremember_many(
        store, user, [text], source=source, dedupe_threshold=dedupe_threshold, expires_at=[expires_at])
    return result


async def aremember_many(
    store: BaseStore,
    user: User,
    texts: list[str],
    *,
    source: Source = "user_said",
    dedupe_threshold: float = DEDUPE_THRESHOLD,
    expires_at: list[str | None] | None = None,
) -> list[RememberResult]:
    """:func:`aremember` for several notes in two store round trips (one batch
    of duplicate lookups, one batch of writes). A text repeated within
    ``texts`` is reported as a duplicate of its first occurrence. All texts are
    validated before anything is written. ``expires_at``: one entry per text
    (``None`` = durable), or ``None`` for all durable."""
    cleaned = [validate_note(t) for t in texts]
    expiries = list(expires_at) if expires_at is not None else [None] * len(cleaned)
    if len(expiries) != len(cleaned):
        raise InvalidInputError(f"{len(expiries)} expiries for {len(cleaned)} notes")
    if source not in SOURCES:
        raise InvalidInputError(f"source must be one of {SOURCES}, got {source!r}")
    if not cleaned:
        return []
    ns = user.namespace(NOTES)
    stamp = now_iso()
    lookups = await store.abatch([op for text in cleaned for op in _duplicate_lookups(ns, text)])
    results: list[RememberResult] = []
    writes: dict[str, PutOp] = {}
    new_by_norm: dict[str, Note] = {}
    for i, (text, expires) in enumerate(zip(cleaned, expiries, strict=True)):
        norm = normalize_note(text)
        if norm in new_by_norm:
            results.append(RememberResult(status="duplicate", note=new_by_norm[norm]))
            continue
        match = _match(text, lookups[2 * i], lookups[2 * i + 1], ns, dedupe_threshold)
        if match is not None:
            status, existing = match
            # Repeating a fact confirms it (refresh recency, keep the wording);
            # a more detailed wording replaces the old one under the same id.
            value = {**existing.value, "updated_at": stamp}
            if status == "refined":
                value.update(text=text, norm=norm, source=source)
            value.pop("expires_at", None)
            if expires:
                value["expires_at"] = expires
            writes[existing.key] = PutOp(ns, existing.key, value, ttl=ttl_minutes(expires))
            results.append(RememberResult(status=status, note=to_note(_with_value(existing, value))))
            continue
        key = uuid.uuid4().hex
        value = {"id": key, "text": text, "norm": norm, "source": source, "first_seen": stamp, "updated_at": stamp}
        note = Note(id=key, text=text, source=source, first_seen=stamp, updated_at=stamp)
        if expires:
            value["expires_at"] = note["expires_at"] = expires
        # The store TTL is a backstop for backends that honour it; mnemo's own
        # ``expires_at`` is what hides the note (mnemo.expiry).
        writes[key] = PutOp(ns, key, value, ttl=ttl_minutes(expires))
        new_by_norm[norm] = note
        results.append(RememberResult(status="stored", note=note))
    await store.abatch(list(writes.values()))
    return results


def rank_notes(
    query: str,
    dense: list[SearchItem],
    notes: list[Item],
    namespace: tuple[str, ...],
    *,
    limit: int,
    min_score: float,
) -> list[Note]:
    """Fuse the dense hits (above ``min_score``; ``score is None`` never counts)
    with a BM25 ranking of ``notes`` by reciprocal rank fusion.

    Dense similarity blurs names and rare words; BM25 alone misses
    paraphrases. The fusion beats both on LoCoMo (docs/bench.md). Past
    :data:`LEXICAL_MAX_NOTES` notes, recall is dense only.

    Raises:
        IndexMissingError: the dense results carry no scores (no index).
    """
    hits = semantic_hits(dense, namespace, min_score=min_score)
    by_key: dict[str, Item] = {it.key: it for it in hits}
    rankings = [[it.key for it in hits]]
    if 0 < len(notes) <= LEXICAL_MAX_NOTES:
        lexical = [notes[i] for i in bm25_rank(query, [it.value["text"] for it in notes], limit=FUSION_CANDIDATES)]
        rankings.append([it.key for it in lexical])
        for it in lexical:
            by_key.setdefault(it.key, it)
    return [to_note(by_key[key]) for key in reciprocal_rank_fusion(rankings)[:limit]]


async def arank_notes(
    query: str,
    dense: list[SearchItem],
    notes: list[Item],
    namespace: tuple[str, ...],
    *,
    limit: int,
    min_score: float,
) -> list[Note]:
    """:func:`rank_notes` in a worker thread. Building a BM25 index is CPU work
    that grows with the user's notes, and bm25s creates a multiprocessing lock
    on first use (a pipe write): on the event loop it would stall every other
    run of the server, and ``langgraph dev`` (auto-reload) aborts it as a
    blocking call."""
    return await asyncio.to_thread(rank_notes, query, dense, notes, namespace, limit=limit, min_score=min_score)


async def arecall(
    store: BaseStore, user: User, query: str, *, limit: int = 5, min_score: float = RECALL_MIN_SCORE
) -> list[Note]:
    """Notes that match ``query`` by meaning or by words, best first.

    One store round trip. A note found only by words has no ``score``.

    Raises:
        IndexMissingError: the store has no vector index.
    """
    if not query or not query.strip():
        return []
    ns = user.namespace(NOTES)
    # One round trip: the dense search, and the notes for BM25 in a single
    # read capped just past LEXICAL_MAX_NOTES (a larger user gets dense only,
    # instead of a listing that grows with every note).
    dense, listed = await store.abatch(
        [query_op(ns, query, limit=max(limit, FUSION_CANDIDATES)), list_op(ns, page_size=LEXICAL_MAX_NOTES + 1)]
    )
    notes = live(exact(listed, ns)) if len(listed) <= LEXICAL_MAX_NOTES else []
    return await arank_notes(query, live(dense), notes, ns, limit=limit, min_score=min_score)


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
) -> list[Note]:
    """Delete notes by id, or those that match ``about`` by meaning; return them.

    Only the user's own namespace is touched, so an id of another user's note
    removes nothing. Returns ``[]`` when nothing matched.
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
        items = [it for it in items if it.score >= items[0].score - FORGET_MARGIN] if items else []
    if items:
        await store.abatch([PutOp(ns, it.key, None) for it in items])
    return [to_note(it) for it in items]



def _with_value(item: Item, value: dict) -> Item:
    return Item(value=value, key=item.key, namespace=item.namespace, created_at=item.created_at, updated_at=item.updated_at)

