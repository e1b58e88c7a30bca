"""The snapshot's ``similar`` part: the notes nearest to the turn's query by
meaning, unfiltered by relevance (what the turn's extractor is shown)."""

from __future__ import annotations

from collections.abc import Sequence

from langgraph.store.base import BaseStore, Op, Result

from mnemo.core import NOTES, Ask, Part, only_in_namespace, query_op, search_result
from mnemo.notes.expiry import live
from mnemo.notes.model import Note, to_note


def _part_ops(ask: Ask) -> list[Op]:
    limit = ask.limits["similar_limit"]
    if not ask.query.strip() or limit <= 0:
        return []
    return [query_op(ask.user.namespace(NOTES), ask.query, limit=limit)]


async def _part(store: BaseStore, ask: Ask, results: Sequence[Result]) -> list[Note]:
    if not results:
        return []
    return [to_note(it) for it in live(only_in_namespace(search_result(results[0]), ask.user.namespace(NOTES)))]


#: The snapshot's ``similar``: best first (none unless ``similar_limit`` is given).
SIMILAR_PART = Part("similar", _part_ops, _part, limits={"similar_limit": 0})
