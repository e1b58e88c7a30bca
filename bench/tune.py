"""``python -m bench tune``: mnemo's ablations and setting grids on LoCoMo.

The headline run (:mod:`bench.locomo`) plus, for every question:

``mnemo_thresholded``
    :func:`mnemo.arecall` with mnemo's default relevance rule (dense hits at
    least ``RECALL_MARGIN`` above the median of the user's candidates in their
    script): what ``recall_notes`` and ``load_memory`` keep.
``mnemo_dense``
    the dense half alone: ``store.asearch`` on the same notes.
``mnemo_no_context``
    the same turns written without a context (text alone).
``memory_agent_plain``
    the memory-agent template with only the plain content embedded.

and the grids, each reported on the tune conversations
(:data:`bench.locomo.TUNE_CONVERSATIONS`) beside the held-out ones, the
setting chosen on the tune part only: ``fusion_grid`` (fusion constant and
BM25 weight), ``sparse_grid`` (the learned sparse ranking's weight) and
``second_round`` (recall that follows the words of its best hits, an attempt:
docs/bench.md); ``dated_notes`` (notes embedded with the day they were
said, an attempt: :mod:`bench.tune_dated`) and ``spread`` (recall that covers
several evidence turns: a hit's neighbours, diversity; attempts:
:mod:`bench.tune_spread`) and ``entities`` (notes linked by the entities they
name, an attempt: :mod:`bench.tune_entities`); on demand only, ``rewrite`` (the
chat model writes the search queries: :mod:`bench.tune_rewrite`); the
statistics are :mod:`bench.tune_stats`'s.
``--only PART`` runs one part of :data:`PARTS` (the headline methods always
run), into ``tune_<part>.json``.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any
from unittest import mock

from bench.common import CachingEmbeddings, TokenCounter
from bench.locomo_ask import (
    MEMORY_AGENT_LIMIT,
    Bm25Index,
    QuestionHook,
    QuestionResult,
    Tuning,
    record_agent,
    record_notes,
)
from bench.locomo_write import Timing, Written, indexed_texts, write_memory_agent, write_mnemo
from bench.tune_dated import dated_tables, prepare_dated
from bench.tune_entities import entity_tables, prepare_entities
from bench.tune_rewrite import prepare_rewrite, rewrite_tables
from bench.tune_spread import prepare_spread, spread_tables
from bench.tune_stats import grid_table

ABLATIONS = ("mnemo_thresholded", "mnemo_dense", "mnemo_no_context", "memory_agent_plain")
DESCRIPTIONS = {
    "mnemo_thresholded": (
        "mnemo.arecall(limit=max k) with the default relevance rule: dense hits at least RECALL_MARGIN "
        "above the median score of the user's candidates in their script, fused with BM25"
    ),
    "mnemo_no_context": "mnemo.arecall(limit=max k, margin=None) over the same turns written without a context",
    "mnemo_dense": "the dense half of mnemo alone: store.asearch(notes, query=question, limit=max k) on the same notes",
    "memory_agent_plain": (
        "the memory-agent template's search with only the plain content embedded (fields "
        "['content']): retrieval like the template, without its JSON-value layout"
    ),
}

#: Fusion settings tried, (k, BM25 weight): the shipped ones
#: (mnemo.notes.recall.FUSION_K, LEXICAL_WEIGHT) must be the best of these on the
#: tune conversations (``fusion_grid`` in the JSON says which won).
FUSION_GRID = [(k, w) for k in (10, 30, 60) for w in (0.1, 0.2, 0.3, 0.5, 1.0)]
#: Weights of the learned sparse ranking tried (mnemo.notes.recall.SPARSE_WEIGHT;
#: 0 is recall with two rankings): the shipped one is chosen on the tune
#: conversations (``sparse_grid`` in the JSON), held out reported beside it.
SPARSE_GRID = (0.0, 0.3, 0.5, 0.8, 1.0, 1.5)
#: The second round (an attempt, not shipped unless it clears the bar of
#: docs/bench.md): (best hits whose words are followed, weight of the second
#: ranking in the fusion); (0, 0) is recall as it ships.
SECOND_ROUND_GRID = [(0, 0.0)] + [(m, w) for m in (1, 3) for w in (0.1, 0.3, 0.5)]


# --------------------------------------------------------------------------
# per question


async def prepare(
    written: Written, emb: CachingEmbeddings, timing: Timing, counter: TokenCounter, ks: list[int]
) -> QuestionHook:
    """Write what the ablations read (the notes without a context, the
    template's plain layout); returns what runs for each question."""
    from mnemo import alist_notes

    conv, user = written.conv, written.user
    emb.warm("p", indexed_texts(written.texts, None), desc=f"{conv.sample_id}: notes alone (passages)")
    bare_store, bare_covers = await write_mnemo(conv, written.texts, None, user, emb, Counter(), timing)
    plain_store = await write_memory_agent(conv, written.texts, emb, written, timing, fields=("content",))
    notes = [(n["id"], n["text"]) for n in await alist_notes(written.store, user)]
    words = Bm25Index([text for _, text in notes])  # the second round's ranking: bm25s over the notes' texts

    limit = max(ks)

    async def per_question(q: Any, r: QuestionResult) -> None:
        from mnemo import arecall

        kept = await arecall(written.store, user, q.question, limit=limit)
        record_notes(r, "mnemo_thresholded", [(n["id"], n["text"]) for n in kept], written.covers, ks, counter)
        bare = await arecall(bare_store, user, q.question, limit=limit, margin=None)
        record_notes(r, "mnemo_no_context", [(n["id"], n["text"]) for n in bare], bare_covers, ks, counter)
        dense = await written.store.asearch(user.namespace("notes"), query=q.question, limit=limit)
        dense_notes = [(it.key, it.value["text"]) for it in dense if it.score is not None]
        record_notes(r, "mnemo_dense", dense_notes, written.covers, ks, counter)
        plain = await plain_store.asearch(written.agent_ns, query=str([q.question]), limit=MEMORY_AGENT_LIMIT)
        record_agent(r, "memory_agent_plain", plain, written, ks, counter)
        await _grids(q, r, written, limit)
        _second_round(q.question, r, written, notes, words)

    return per_question


async def _grids(q: Any, r: QuestionResult, written: Written, limit: int) -> None:
    """mnemo's ranking for ``q`` under every setting of the fusion and sparse grids."""
    from mnemo import arecall

    async def ranked() -> list[frozenset[str]]:
        notes = await arecall(written.store, written.user, q.question, limit=limit, margin=None)
        return [written.covers[n["id"]] for n in notes]

    for k, weight in FUSION_GRID:
        with mock.patch("mnemo.notes.recall.FUSION_K", k), mock.patch("mnemo.notes.recall.LEXICAL_WEIGHT", weight):
            r.grids["fusion"][(k, weight)] = await ranked()
    for weight in SPARSE_GRID:
        with mock.patch("mnemo.notes.recall.SPARSE_WEIGHT", weight):
            r.grids["sparse"][weight] = await ranked()


def _second_round(
    question: str, r: QuestionResult, written: Written, notes: list[tuple[str, str]], words: Bm25Index
) -> None:
    """The attempt: a second, bounded round of recall by words. The words of
    mnemo's ``m`` best hits that the question lacks (mnemo's BM25 tokens)
    rank the user's notes by BM25 (``bm25s`` over their texts, a stand-in
    for mnemo's word index), and that ranking joins mnemo's by
    reciprocal rank fusion with weight ``w``: a multi-hop question's second
    note shares words with its first, not with the question. No model call,
    no embedding: one more index read in the product."""
    from mnemo.core import bm25_tokens, reciprocal_rank_fusion
    from mnemo.notes.recall import FUSION_CANDIDATES, FUSION_K

    first = [nid for nid, _ in r.mnemo_notes]
    asked = set(bm25_tokens(question))
    for m, weight in SECOND_ROUND_GRID:
        if m == 0:
            fused = first
        else:
            followed = [t for nid, text in r.mnemo_notes[:m] for t in bm25_tokens(text) if t not in asked]
            second = [notes[i][0] for i in words.search(list(dict.fromkeys(followed)), FUSION_CANDIDATES)]
            fused = reciprocal_rank_fusion([first, second], k=FUSION_K, weights=[1.0, weight])
        r.grids["second_round"][(m, weight)] = [written.covers[nid] for nid in fused[: len(first)]]


def sparse_table(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
    """``sparse_grid``: the learned sparse ranking's weights, against two rankings (weight 0)."""
    from mnemo.notes.recall import SPARSE_WEIGHT
    from mnemo.stores.splade import weights_dir

    sparse = grid_table(
        results, ks, "sparse", list(SPARSE_GRID), lambda w: {"sparse_weight": w}, shipped=SPARSE_WEIGHT, baseline=0.0
    )
    sparse["rule"] += "; weight 0 = two rankings"
    sparse["weights_installed"] = weights_dir() is not None
    return sparse


def tables(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
    """The grids' tables of ``python -m bench tune``."""
    from mnemo.notes.recall import FUSION_K, LEXICAL_WEIGHT

    return {
        "fusion_grid": grid_table(
            results,
            ks,
            "fusion",
            FUSION_GRID,
            lambda s: {"fusion_k": s[0], "lexical_weight": s[1]},
            shipped=(FUSION_K, LEXICAL_WEIGHT),
        ),
        "sparse_grid": sparse_table(results, ks),
        "second_round": grid_table(
            results,
            ks,
            "second_round",
            SECOND_ROUND_GRID,
            lambda s: {"best_hits_followed": s[0], "weight": s[1]},
            shipped=(0, 0.0),
            baseline=(0, 0.0),
        ),
    }


def _cached_query_vectors(prepare_fn: Callable) -> Callable:
    """A question's sparse vector is the same in every recall of the grids: computed once."""

    @functools.wraps(prepare_fn)
    async def wrapped(*args: Any) -> QuestionHook:
        from mnemo.notes.sparse_vectors import memoized_query_vectors

        hook = await prepare_fn(*args)
        cached: dict = {}

        async def per_question(q: Any, r: QuestionResult) -> None:
            with memoized_query_vectors(cached):
                await hook(q, r)

        return per_question

    return wrapped


def combine(name: str, parts: list[Tuning]) -> Tuning:
    """One :class:`Tuning` running ``parts`` in order: their methods, hooks and tables."""

    async def prepare_all(*args: Any) -> QuestionHook:
        hooks = [await part.prepare(*args) for part in parts]

        async def per_question(q: Any, r: QuestionResult) -> None:
            for hook in hooks:
                await hook(q, r)

        return per_question

    def tables_all(results: list[QuestionResult], ks: list[int]) -> dict[str, Any]:
        return {key: value for part in parts for key, value in part.tables(results, ks).items()}

    return Tuning(
        name=name,
        methods=tuple(m for part in parts for m in part.methods),
        descriptions={k: v for part in parts for k, v in part.descriptions.items()},
        prepare=prepare_all,
        tables=tables_all,
    )


#: The parts of ``python -m bench tune`` (``--only PART`` runs one, into ``tune_<part>.json``).
PARTS = {
    "grids": Tuning(
        name="tune_grids",
        methods=ABLATIONS,
        descriptions=DESCRIPTIONS,
        prepare=_cached_query_vectors(prepare),
        tables=tables,
    ),
    "dated_notes": Tuning(
        name="tune_dated_notes", methods=(), descriptions={}, prepare=prepare_dated, tables=dated_tables
    ),
    "spread": Tuning(
        name="tune_spread",
        methods=(),
        descriptions={},
        prepare=_cached_query_vectors(prepare_spread),
        tables=spread_tables,
    ),
    "entities": Tuning(
        name="tune_entities",
        methods=(),
        descriptions={},
        prepare=_cached_query_vectors(prepare_entities),
        tables=entity_tables,
    ),
    "rewrite": Tuning(
        name="tune_rewrite",
        methods=(),
        descriptions={},
        prepare=_cached_query_vectors(prepare_rewrite),
        tables=rewrite_tables,
    ),
}
#: Parts that need a chat model: run with ``--only`` alone, never by ``python -m bench tune``.
ON_DEMAND = ("rewrite",)
#: ``python -m bench tune``: every part but those on demand, into ``tune.json``.
TUNING = combine("tune", [part for name, part in PARTS.items() if name not in ON_DEMAND])
