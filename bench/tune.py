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
BM25 weight) and ``sparse_grid`` (the learned sparse ranking's weight); the
statistics are :mod:`bench.tune_stats`'s. The attempts that measured short
(a second round of recall, dated notes, spread, entities, model-written
queries) left the tree: docs/bench.md keeps their figures and commits.
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
    QuestionHook,
    QuestionResult,
    Tuning,
    record_agent,
    record_notes,
)
from bench.locomo_write import Timing, Written, indexed_texts, write_memory_agent, write_mnemo
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


# --------------------------------------------------------------------------
# per question


async def prepare(
    written: Written, emb: CachingEmbeddings, timing: Timing, counter: TokenCounter, ks: list[int]
) -> QuestionHook:
    """Write what the ablations read (the notes without a context, the
    template's plain layout); returns what runs for each question."""

    conv, user = written.conv, written.user
    emb.warm("p", indexed_texts(written.texts, None), desc=f"{conv.sample_id}: notes alone (passages)")
    bare_store, bare_covers = await write_mnemo(conv, written.texts, None, user, emb, Counter(), timing)
    plain_store = await write_memory_agent(conv, written.texts, emb, written, timing, fields=("content",))

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


#: ``python -m bench tune``: the ablations and the grids, into ``tune.json``.
TUNING = Tuning(
    name="tune", methods=ABLATIONS, descriptions=DESCRIPTIONS, prepare=_cached_query_vectors(prepare), tables=tables
)
