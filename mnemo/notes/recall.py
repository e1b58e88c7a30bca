"""Recall: the notes that match a question, by meaning and by words.

:func:`arecall` fuses the dense hits that stand out from the user's other notes
(:func:`relevant_hits`) with a BM25 ranking by reciprocal rank fusion, in at most two
store round trips and one query embedding; expired notes are never returned.
With the SPLADE weights installed, a Latin-script query adds a third ranking of the
same candidates by learned sparse vectors (:mod:`mnemo.notes.sparse_vectors`), which admits no note.
"""

from __future__ import annotations

import asyncio
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, Result, SearchItem, SearchOp

from mnemo.core import (
    NOTES,
    User,
    abatch_named,
    bounded_query,
    query_op,
    reciprocal_rank_fusion,
    require_index,
    score_of,
    script_of,
    search_result,
    semantic_hits,
)
from mnemo.notes import index as note_index
from mnemo.notes import sparse_vectors
from mnemo.notes.expiry import expired, is_expired, live
from mnemo.notes.model import Note, note_from_value, to_note

#: How far (in cosine similarity) a note must score above the median of the
#: dense candidates in its script to count as relevant by meaning
#: (:func:`relevant_hits`). Chosen on LoCoMo conv-26 and conv-30 only: the
#: largest margin whose turn recall@5/10/25 there is at least that of a
#: fixed 0.78 similarity cut (docs/thresholds.md, with the held-out figures).
#: Relative, so it holds when every score moves together (another embedder,
#: notes embedded with more context); re-measure if the spread of scores changes.
RECALL_MARGIN = 0.0075
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
#: Weight of the learned sparse ranking (:mod:`mnemo.notes.sparse_vectors`), the
#: third one, for a Latin-script query when the SPLADE weights are installed;
#: 0 turns it off. Chosen on the tune conversations only (docs/bench.md).
SPARSE_WEIGHT = 0.8


@dataclass(kw_only=True)
class NotesRead:
    """What :func:`aread_notes` found."""

    relevant: list[Note]
    """Best first: the relevant dense hits (:func:`relevant_hits`) fused with BM25."""
    recent: list[Note]
    """The most recently updated notes (up to :data:`mnemo.notes.index.RECENT_KEEP`), most recent first."""
    extra: list[Result]
    """The results of the caller's ``extra`` ops, in order."""
    found_by: dict[str, dict[str, int]] = field(default_factory=dict)
    """Note id -> the rankings that found it and its place in each (from 1):
    ``meaning`` (the relevant dense hits), ``words`` (BM25), ``sparse`` (learned
    sparse vectors), for the notes in ``relevant`` (:func:`found_by`)."""
    stale: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    """Expired notes met on the way (id -> value; left out of the lists
    above), for the caller to sweep (:func:`mnemo.notes.expiry.adelete_notes`)."""


def score_leads(hits: Sequence[SearchItem]) -> list[float]:
    """How far each hit scores above the median of the hits in its script
    (:func:`script_of`): the shared-language bonus cancels out. A script with
    a single hit is compared with the median of all hits."""
    scores = [score_of(it) for it in hits]
    scripts = [script_of(str(it.value.get("text", ""))) for it in hits]
    by_script: dict[str, list[float]] = {}
    for script, score in zip(scripts, scores, strict=True):
        by_script.setdefault(script, []).append(score)
    overall = statistics.median(scores) if scores else 0.0
    median = {s: statistics.median(v) if len(v) > 1 else overall for s, v in by_script.items()}
    return [score - median[script] for script, score in zip(scripts, scores, strict=True)]


def relevant_hits(hits: Sequence[SearchItem], *, margin: float | None = RECALL_MARGIN) -> list[SearchItem]:
    """The dense hits relevant to the query, best lead first.

    ``hits`` are a semantic search's real hits (:func:`mnemo.core.reads.semantic_hits`),
    the candidates of one user. A hit is relevant when its lead
    (:func:`score_leads`) is at least ``margin``: it stands out from what
    this query scores against the user's other notes (a greeting's scores
    are flat: few stand out). A single candidate (a user's only note) has
    nothing to stand out from and is kept, unless ``margin`` is ``math.inf``
    (no dense hit at all: words alone). ``margin=None``: every hit, by score.
    """
    if margin is None or (len(hits) < 2 and margin < math.inf):
        return sorted(hits, key=score_of, reverse=True)
    ranked = sorted(zip(score_leads(hits), hits, strict=True), key=lambda pair: -pair[0])
    return [hit for lead, hit in ranked if lead >= margin]


def rank_keys(dense: Sequence[Item], lexical: list[str], learned: list[str] | None = None) -> list[str]:
    """Reciprocal rank fusion of the relevant dense hits (best first), the
    BM25 ranking and, when there is one, the learned sparse ranking (note
    ids), with mnemo's constant and weights."""
    rankings, weights = [[it.key for it in dense], lexical], [1.0, LEXICAL_WEIGHT]
    if learned is not None:
        rankings.append(learned)
        weights.append(SPARSE_WEIGHT)
    return reciprocal_rank_fusion(rankings, k=FUSION_K, weights=weights)


def found_by(notes: Sequence[Note], rankings: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
    """For each of ``notes``, its place (from 1) in each ranking (name -> ids, best first) that holds it."""
    places = {name: {key: i for i, key in enumerate(ranked, 1)} for name, ranked in rankings.items()}
    return {n["id"]: {name: at[n["id"]] for name, at in places.items() if n["id"] in at} for n in notes}


async def aread_notes(
    store: BaseStore,
    user: User,
    query: str,
    *,
    limit: int,
    margin: float | None = RECALL_MARGIN,
    extra: Sequence[Op] = (),
) -> NotesRead:
    """The notes relevant to ``query`` and the most recent ones, in at most
    two round trips (``extra`` ops ride along in the first; a search of the
    notes by the same query is answered from the recall's own: :func:`answered_by`).

    An empty ``query`` or ``limit=0`` reads no relevant notes (and embeds nothing).
    A user whose notes predate the index gets it built first, at most once
    (:func:`mnemo.notes.index.arebuild_once`).

    A dense hit counts when it is relevant (:func:`relevant_hits` with
    ``margin``; ``None``: every candidate). An item without a score (no
    vector, e.g. imported with ``index=False``) is skipped by the dense half
    only; the words still find it.

    Raises:
        IndexMissingError: the store has no vector index.
    """
    ns = user.namespace(NOTES)
    query = bounded_query(query or "")
    searching = bool(query.strip()) and limit > 0
    if searching:
        require_index(store)
    terms = note_index.query_terms(query) if searching else []
    dense_op = query_op(ns, query, limit=max(limit, FUSION_CANDIDATES)) if searching else None
    shared = answered_by(dense_op, extra) if dense_op is not None else {}
    asked = [op for i, op in enumerate(extra) if i not in shared]
    reads: dict[str, list[Op]] = {
        "asked": asked,
        "index": [*note_index.read_ops(user, terms)],
        "dense": [dense_op] if dense_op is not None else [],
    }
    # The query's sparse vector is computed while the store answers.
    got, query_vector = await asyncio.gather(
        abatch_named(store, reads), sparse_vectors.aquery_vector(query if searching and SPARSE_WEIGHT > 0 else "")
    )
    dense_result = got["dense"][0] if got["dense"] else None
    extra_results = _merged(got["asked"], shared, dense_result, len(extra))
    state = note_index.IndexState.from_results(terms, got["index"])
    # No head: a user without notes (nothing to fetch, so this probe is the
    # second and last round trip), or notes written before the index existed:
    # built once from here; if that fails, read by meaning alone until
    # ``python -m mnemo reindex`` builds it.
    if state.head is None and await store.asearch(ns, limit=1) and await note_index.arebuild_once(store, user):
        again = await aread_notes(store, user, query, limit=limit, margin=margin)
        again.extra = extra_results
        return again
    stale: dict[str, Mapping[str, Any]] = {r["id"]: r for r in state.recent if is_expired(r)}
    recent = [note_from_value(r["id"], r) for r in state.recent if not is_expired(r)]
    if not searching:
        return NotesRead(relevant=[], recent=recent, extra=extra_results, stale=stale)
    dense = search_result(dense_result)
    stale |= {it.key: it.value for it in expired(dense) if tuple(it.namespace) == ns}
    hits = relevant_hits(semantic_hits(live(dense), ns, min_score=-math.inf), margin=margin)
    # BM25 over postings is CPU work: kept off the event loop, which serves every other run.
    lexical = await asyncio.to_thread(note_index.bm25_ranking, terms, state, limit=FUSION_CANDIDATES)
    known: dict[str, Item] = {it.key: it for it in hits}
    rankings = {"meaning": [it.key for it in hits], "words": lexical}
    if query_vector is None:
        relevant = await _afetch_ranked(store, ns, rank_keys(hits, lexical), known, limit)
    else:  # the sparse ranking reads every candidate's vector: all are fetched
        known = await _afetch(store, ns, lexical, known)
        values = {key: it.value for key, it in known.items()}
        rankings["sparse"] = learned = sparse_vectors.sparse_ranking(
            query_vector, values, [it.key for it in hits], lexical
        )
        relevant = [to_note(known[key]) for key in rank_keys(hits, lexical, learned) if key in known][:limit]
    return NotesRead(
        relevant=relevant, recent=recent, extra=extra_results, stale=stale, found_by=found_by(relevant, rankings)
    )


def answered_by(search: SearchOp, ops: Sequence[Op]) -> dict[int, int]:
    """The searches of ``ops`` that ``search``'s result answers too, by position:
    their limit. The same namespace, query and filter, from the first item, and
    no more items than ``search`` asks (the turn's ``similar`` notes are the
    recall's nearest: one search by meaning, not two)."""
    same = (search.namespace_prefix, search.query, search.filter, 0, search.refresh_ttl)
    return {
        i: op.limit
        for i, op in enumerate(ops)
        if isinstance(op, SearchOp)
        and (op.namespace_prefix, op.query, op.filter, op.offset, op.refresh_ttl) == same
        and op.limit <= search.limit
    }


def _merged(asked: Sequence[Result], shared: Mapping[int, int], dense: Result, total: int) -> list[Result]:
    """The results of all ``total`` extra ops in order: those asked, and the first
    ``shared[i]`` items of the dense search for the others."""
    answers = iter(asked)
    return [search_result(dense)[: shared[i]] if i in shared else next(answers) for i in range(total)]


async def _afetch_ranked(
    store: BaseStore, ns: tuple[str, ...], ranked: list[str], known: dict[str, Item], limit: int
) -> list[Note]:
    """The first ``limit`` live notes of ``ranked``, fetching by key those
    only the words found (twice as many candidates as needed, in case a
    posting outlived its note or the note expired)."""
    wanted = ranked[: 2 * limit]
    known = await _afetch(store, ns, wanted, known)
    return [to_note(known[key]) for key in wanted if key in known][:limit]


async def _afetch(
    store: BaseStore, ns: tuple[str, ...], keys: Sequence[str], known: dict[str, Item]
) -> dict[str, Item]:
    """``known`` and the live notes of ``keys`` it lacks, fetched by key in one batch."""
    missing = [key for key in keys if key not in known]
    if not missing:
        return known
    fetched = await store.abatch([GetOp(ns, key) for key in missing])
    return {**known, **{it.key: it for it in live(it for it in fetched if isinstance(it, Item))}}


async def arecall(
    store: BaseStore, user: User, query: str, *, limit: int = 5, margin: float | None = RECALL_MARGIN
) -> list[Note]:
    """Notes that match ``query`` by meaning or by words, best first.

    By meaning: the notes that stand ``margin`` above the user's other notes
    for this query (:func:`relevant_hits`; ``None``: every dense candidate,
    ``math.inf``: none, words alone). At most two store round trips and one
    query embedding, whatever the number of notes. A note found only by
    words has no ``score``.

    Raises:
        IndexMissingError: the store has no vector index.
    """
    if not query or not query.strip():
        return []
    return (await aread_notes(store, user, query, limit=limit, margin=margin)).relevant
