"""Recall: the notes that match a question, by meaning and by words.

Dense similarity blurs names and rare words ("Xiaomi", "Mia", "滤芯"); BM25
alone misses paraphrases. :func:`arecall` fuses the dense hits above
:data:`RECALL_MIN_SCORE` (an item with ``score is None`` is never a hit) with a
BM25 ranking of the user's notes by reciprocal rank fusion, which beats both
on LoCoMo (docs/bench.md). The threshold was measured for multilingual-e5-small
(docs/thresholds.md); with another embedder, measure again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from langgraph.store.base import BaseStore, Item, SearchItem

from mnemo._lexical import bm25_rank, reciprocal_rank_fusion
from mnemo.expiry import live
from mnemo.identity import NOTES, User
from mnemo.limits import bounded_query
from mnemo.notes import Note, to_note
from mnemo.store_reads import list_op, only_in_namespace, query_op, require_index, search_result, semantic_hits

#: Minimum similarity for a note to be recalled by meaning: the 5th percentile
#: of question-to-evidence similarity on LoCoMo (0.780), so 95 % of true hits pass.
RECALL_MIN_SCORE = 0.78
#: Candidates each ranking (dense, BM25) contributes to the fusion.
FUSION_CANDIDATES = 50
#: Above this many notes of one user, recall is dense only: reading and ranking
#: every note on each query would cost more than it brings.
LEXICAL_MAX_NOTES = 2000


def rank_notes(
    query: str,
    dense: list[SearchItem],
    notes: Sequence[Item],
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

    An item without a score (no vector) is skipped by the dense half only.
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
    notes: Sequence[Item],
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
    require_index(store)
    query = bounded_query(query)
    ns = user.namespace(NOTES)
    # One round trip: the dense search, and the notes for BM25 in a single
    # read capped just past LEXICAL_MAX_NOTES (a larger user gets dense only,
    # instead of a listing that grows with every note).
    dense, listed = await store.abatch(
        [query_op(ns, query, limit=max(limit, FUSION_CANDIDATES)), list_op(ns, page_size=LEXICAL_MAX_NOTES + 1)]
    )
    listed_items = search_result(listed)
    notes = live(only_in_namespace(listed_items, ns)) if len(listed_items) <= LEXICAL_MAX_NOTES else []
    return await arank_notes(query, live(search_result(dense)), notes, ns, limit=limit, min_score=min_score)
