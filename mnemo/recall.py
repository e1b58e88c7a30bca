"""Recall: the notes that match a question, by meaning and by words.

Dense similarity blurs names and rare words ("Xiaomi", "Mia", "滤芯"); BM25
alone misses paraphrases. :func:`arecall` fuses the dense hits above
:data:`RECALL_MIN_SCORE` (an item with ``score is None`` is never a hit) with a
BM25 ranking of the user's notes by reciprocal rank fusion, which beats both
on LoCoMo (docs/bench.md). The threshold was measured for multilingual-e5-small
(docs/thresholds.md); with another embedder, measure again.

Cost, whatever the number of notes (:func:`aread_notes`): one query
embedding and at most two store round trips. The first batch holds the dense
search and the reads of the write-time index (:mod:`mnemo.note_index`: the
head with the most recent notes and BM25 statistics, and the postings of the
query's terms, by key); the second fetches by key the few notes that only
the words found. Nothing lists the user's notes.

Time-bound notes past their ``expires_at`` are never returned (mnemo's own
expiry, :mod:`mnemo.expiry`: not every backend honours a TTL); those met here
are reported in :attr:`NotesRead.stale` for the caller to sweep.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, Result

from mnemo import note_index
from mnemo._lexical import reciprocal_rank_fusion
from mnemo.expiry import expired, is_expired, live
from mnemo.identity import NOTES, User
from mnemo.limits import bounded_query
from mnemo.notes import Note, note_from_value, to_note
from mnemo.store_reads import query_op, require_index, search_result, semantic_hits

#: Minimum similarity for a note to be recalled by meaning: the 5th percentile
#: of question-to-evidence similarity on LoCoMo (0.780), so 95 % of true hits pass.
RECALL_MIN_SCORE = 0.78
#: Candidates each ranking (dense, BM25) contributes to the fusion.
FUSION_CANDIDATES = 50
#: Reciprocal rank fusion constant and the weight of the BM25 ranking (the
#: dense one weighs 1). Chosen on LoCoMo's tune conversations only (conv-26,
#: conv-30; grid in docs/bench.md): a small ``k`` lets the top of the dense
#: ranking lead, and words break its ties and lift what meaning ranked low,
#: where the textbook k=60 with equal weights let BM25's many weak matches
#: push true hits out of the top 10.
FUSION_K = 10
LEXICAL_WEIGHT = 0.3


@dataclass(kw_only=True)
class NotesRead:
    """What :func:`aread_notes` found."""

    relevant: list[Note]
    """Best first: dense hits above the threshold fused with BM25."""
    recent: list[Note]
    """The most recently updated notes (up to :data:`mnemo.note_index.RECENT_KEEP`), most recent first."""
    extra: list[Result]
    """The results of the caller's ``extra`` ops, in order."""
    stale: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """Expired notes met on the way (id -> value; left out of the lists
    above), for the caller to sweep (:func:`mnemo.expiry.adelete_notes`)."""


def rank_keys(dense: Sequence[Item], lexical: list[str]) -> list[str]:
    """Reciprocal rank fusion of the dense hits (already thresholded, best
    first) and the BM25 ranking (note ids)."""
    return reciprocal_rank_fusion([[it.key for it in dense], lexical], k=FUSION_K, weights=[1.0, LEXICAL_WEIGHT])


async def aread_notes(
    store: BaseStore,
    user: User,
    query: str,
    *,
    limit: int,
    min_score: float,
    extra: Sequence[Op] = (),
) -> NotesRead:
    """The notes relevant to ``query`` and the most recent ones, in at most
    two round trips (``extra`` ops ride along in the first).

    An empty ``query`` or ``limit=0`` reads no relevant notes (and embeds nothing).
    A user whose notes predate the index gets it built first, once
    (:func:`mnemo.note_index.arebuild`).

    An item without a score (no vector, e.g. imported with ``index=False``)
    is skipped by the dense half only; the words still find it.

    Raises:
        IndexMissingError: the store has no vector index.
    """
    ns = user.namespace(NOTES)
    query = bounded_query(query or "")
    searching = bool(query.strip()) and limit > 0
    if searching:
        require_index(store)
    terms = note_index.query_terms(query) if searching else []
    ops: list[Op] = [*extra, *note_index.read_ops(user, terms)]
    if searching:
        ops.append(query_op(ns, query, limit=max(limit, FUSION_CANDIDATES)))
    results = await store.abatch(ops)
    n = len(extra)
    state = note_index.IndexState.from_results(terms, results[n : n + 1 + len(dict.fromkeys(terms))])
    # No head: a user without notes (nothing to fetch, so this probe is the
    # second and last round trip), or notes written before the index existed.
    if state.head is None and await store.asearch(ns, limit=1):
        await note_index.arebuild(store, user)
        again = await aread_notes(store, user, query, limit=limit, min_score=min_score)
        return NotesRead(relevant=again.relevant, recent=again.recent, extra=results[:n], stale=again.stale)
    stale: dict[str, Mapping[str, Any]] = {r["id"]: r for r in state.recent if is_expired(r)}
    recent = [note_from_value(r["id"], r) for r in state.recent if not is_expired(r)]
    if not searching:
        return NotesRead(relevant=[], recent=recent, extra=results[:n], stale=stale)
    dense = search_result(results[-1])
    stale |= {it.key: it.value for it in expired(dense) if tuple(it.namespace) == ns}
    hits = semantic_hits(live(dense), ns, min_score=min_score)
    # BM25 over postings is CPU work: kept off the event loop, which serves every other run.
    lexical = await asyncio.to_thread(note_index.bm25_ranking, terms, state, limit=FUSION_CANDIDATES)
    relevant = await _afetch_ranked(store, ns, rank_keys(hits, lexical), {it.key: it for it in hits}, limit)
    return NotesRead(relevant=relevant, recent=recent, extra=results[:n], stale=stale)


async def _afetch_ranked(
    store: BaseStore, ns: tuple[str, ...], ranked: list[str], known: dict[str, Item], limit: int
) -> list[Note]:
    """The first ``limit`` live notes of ``ranked``, fetching by key those
    only the words found (twice as many candidates as needed, in case a
    posting outlived its note or the note expired)."""
    wanted = ranked[: 2 * limit]
    missing = [key for key in wanted if key not in known]
    if missing:
        fetched = await store.abatch([GetOp(ns, key) for key in missing])
        known = {**known, **{it.key: it for it in live(it for it in fetched if isinstance(it, Item))}}
    return [to_note(known[key]) for key in wanted if key in known][:limit]


async def arecall(
    store: BaseStore, user: User, query: str, *, limit: int = 5, min_score: float = RECALL_MIN_SCORE
) -> list[Note]:
    """Notes that match ``query`` by meaning or by words, best first.

    At most two store round trips and one query embedding, whatever the
    number of notes. A note found only by words has no ``score``.

    Raises:
        IndexMissingError: the store has no vector index.
    """
    if not query or not query.strip():
        return []
    return (await aread_notes(store, user, query, limit=limit, min_score=min_score)).relevant
