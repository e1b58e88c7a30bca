"""Recall's third ranking: learned sparse (SPLADE) vectors of notes, stamped
on write (:func:`astamp`, from the text in context) and ranked against the
query's (:func:`sparse_ranking`). It only reorders candidates, Latin-script
queries only; a note it cannot read keeps its dense place. Why:
docs/design.md, docs/thresholds.md.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langgraph.store.base import BaseStore, PutOp

from mnemo.core import NOTES, User, alist_all, script_of
from mnemo.notes.model import INDEXED_TEXT_FIELD
from mnemo.stores import SparseVector, sparse_dot, sparse_encoder

#: The value field of a note that holds its sparse vector.
SPARSE_FIELD = "sparse"
#: The only script SPLADE-tiny's vocabulary reads.
READABLE_SCRIPT = "LATIN"


def readable(text: str) -> bool:
    """Whether the sparse model reads ``text`` (Latin script)."""
    return script_of(text) == READABLE_SCRIPT


async def astamp(values: Iterable[dict[str, Any]]) -> None:
    """Give each note value that lacks one its sparse vector, in a worker
    thread (loading and running the model is CPU work). Nothing when the
    weights are absent or the note is not in Latin script."""
    todo = [v for v in values if SPARSE_FIELD not in v and readable(v["text"])]
    if todo:
        await asyncio.to_thread(_stamp, todo)


#: Notes re-written per store call by :func:`arestamp`.
RESTAMP_BATCH = 500


async def arestamp(store: BaseStore, user: User, *, batch: int = RESTAMP_BATCH) -> int:
    """Give every note of ``user`` that lacks its sparse vector one (notes
    written before the weights were installed, or revised since): part of the
    one-time migration ``python -m mnemo reindex``, never of a turn (about
    20 ms of CPU per note). Each is put back with ``index=False``, which keeps
    its dense vector; returns the notes stamped (0 when the weights are absent).
    Like the index rebuild, a note rewritten by a turn while this runs may be
    put back in its listed wording: run it when the user is idle."""
    if sparse_encoder() is None:
        return 0
    items = {it.key: it for it in await alist_all(store, user.namespace(NOTES))}
    values = {key: dict(it.value) for key, it in items.items() if isinstance(it.value.get("text"), str)}
    await astamp(values.values())
    ops = [
        PutOp(user.namespace(NOTES), key, value, index=False)
        for key, value in sorted(values.items())
        if SPARSE_FIELD in value and SPARSE_FIELD not in items[key].value
    ]
    for start in range(0, len(ops), max(batch, 1)):
        await store.abatch(ops[start : start + batch])
    return len(ops)


def _stamp(values: list[dict[str, Any]]) -> None:
    encoder = sparse_encoder()
    if encoder is None:
        return
    for value in values:
        value[SPARSE_FIELD] = encoder.encode(value.get(INDEXED_TEXT_FIELD) or value["text"])


#: The memo of :func:`memoized_query_vectors` in force (``None``: none, as in a turn).
_memo: ContextVar[dict[str, SparseVector | None] | None] = ContextVar("sparse_query_memo", default=None)


@contextmanager
def memoized_query_vectors(memo: dict[str, SparseVector | None] | None = None) -> Iterator[None]:
    """Within the block, each query's sparse vector is computed once (kept in
    ``memo``, to share it between blocks): for replays that ask the same
    questions many times, such as the benchmarks' grids. A turn never uses it."""
    token = _memo.set({} if memo is None else memo)
    try:
        yield
    finally:
        _memo.reset(token)


async def aquery_vector(query: str) -> SparseVector | None:
    """The query's sparse vector, or ``None`` when there is no sparse
    ranking for it (no query, weights absent, or not in Latin script)."""
    if not readable(query):
        return None
    memo = _memo.get()
    if memo is None:
        return await asyncio.to_thread(_query_vector, query)
    if query not in memo:
        memo[query] = await asyncio.to_thread(_query_vector, query)
    return memo[query]


def _query_vector(query: str) -> SparseVector | None:
    encoder = sparse_encoder()
    return None if encoder is None else encoder.encode(query)


def sparse_ranking(
    query: SparseVector, values: Mapping[str, Mapping[str, Any]], dense: Sequence[str], lexical: Sequence[str]
) -> list[str]:
    """The candidates (``dense`` then ``lexical`` keys, those in ``values``)
    ranked by their sparse score against ``query``, best first; a candidate
    without a vector (unreadable) is put back at its place in ``dense``, or
    else in ``lexical``."""
    candidates = [key for key in dict.fromkeys([*dense, *lexical]) if key in values]
    scored = [key for key in candidates if isinstance(values[key].get(SPARSE_FIELD), dict)]
    ranking = sorted(scored, key=lambda key: -sparse_dot(query, values[key][SPARSE_FIELD]))
    dense_at = {key: i for i, key in enumerate(dense)}
    lexical_at = {key: i for i, key in enumerate(lexical)}

    def place(key: str) -> int:  # every candidate is in one of the two
        return dense_at[key] if key in dense_at else lexical_at[key]

    unread = [key for key in candidates if key not in set(scored)]
    for key in sorted(unread, key=place):
        ranking.insert(place(key), key)
    return ranking
