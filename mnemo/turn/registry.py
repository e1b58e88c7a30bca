"""The parts of a snapshot besides the notes' recall: each names its key in
:class:`mnemo.turn.snapshot.MemorySnapshot`, the reads it adds to the snapshot's
batch, and how it reads its own results back. A new kind is one :class:`Part`
in :data:`PARTS`; :func:`mnemo.turn.snapshot.aload_snapshot` iterates them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore, Op, Result

from mnemo.core import (
    EPISODES,
    NOTES,
    PROFILE,
    SHARED_EPISODES_NAMESPACE,
    User,
    alist_rest,
    list_op,
    only_in_namespace,
    query_op,
    search_result,
)
from mnemo.kinds import pick_similar, profile_from_items, similar_ops
from mnemo.notes import live, to_note


@dataclass(frozen=True)
class Ask:
    """What a snapshot is read for: the user, the (bounded) query and the parts' limits."""

    user: User
    query: str
    episode_limit: int
    episode_min_score: float
    similar_limit: int


@dataclass(frozen=True)
class Part:
    """One part of a snapshot: its key, its reads, and its reading of their results."""

    name: str
    ops: Callable[[Ask], list[Op]]
    parse: Callable[[BaseStore, Ask, Sequence[Result]], Awaitable[Any]]


def _profile_ops(ask: Ask) -> list[Op]:
    return [list_op(ask.user.namespace(PROFILE))]


async def _profile(store: BaseStore, ask: Ask, results: Sequence[Result]) -> Any:
    return profile_from_items(await alist_rest(store, ask.user.namespace(PROFILE), search_result(results[0])))


def _episode_ops(ask: Ask) -> list[Op]:
    if not ask.query.strip() or ask.episode_limit <= 0:
        return []
    return list(similar_ops(ask.user, ask.query, limit=ask.episode_limit))  # same batch: the query is embedded once


async def _episodes(store: BaseStore, ask: Ask, results: Sequence[Result]) -> Any:
    if not results:
        return []
    found = [
        only_in_namespace(search_result(results[0]), ask.user.namespace(EPISODES)),
        only_in_namespace(search_result(results[1]), SHARED_EPISODES_NAMESPACE),
    ]
    return pick_similar(found, ask.user, limit=ask.episode_limit, min_score=ask.episode_min_score)


def _similar_ops(ask: Ask) -> list[Op]:
    if not ask.query.strip() or ask.similar_limit <= 0:
        return []
    return [query_op(ask.user.namespace(NOTES), ask.query, limit=ask.similar_limit)]


async def _similar(store: BaseStore, ask: Ask, results: Sequence[Result]) -> Any:
    if not results:
        return []
    return [to_note(it) for it in live(only_in_namespace(search_result(results[0]), ask.user.namespace(NOTES)))]


#: The snapshot's parts besides recall, in the order their reads join the batch.
PARTS: tuple[Part, ...] = (
    Part("profile", _profile_ops, _profile),
    Part("episodes", _episode_ops, _episodes),
    Part("similar", _similar_ops, _similar),
)


def part_ops(ask: Ask) -> list[tuple[Part, list[Op]]]:
    """Each part with its reads for ``ask``, in :data:`PARTS`' order (joined into one batch)."""
    return [(part, part.ops(ask)) for part in PARTS]


async def aparse_parts(
    store: BaseStore, ask: Ask, planned: Sequence[tuple[Part, list[Op]]], results: Sequence[Result]
) -> dict[str, Any]:
    """Every part's value by name, each part given back only its own ``results``
    (those of its reads in ``planned``, which ``results`` answer in order)."""
    values: dict[str, Any] = {}
    start = 0
    for part, ops in planned:
        values[part.name] = await part.parse(store, ask, results[start : start + len(ops)])
        start += len(ops)
    return values
