"""What a write reads before extracting (:func:`aread_known`), in one store
round trip: the profile, and the user's live notes most similar to what was
said, at most :data:`MAX_EXISTING_NOTES`, which the extractor is shown under
short ids (``n1``, ``n2``, ...) so that it may update or invalidate them.

Invariant: only the user's own namespace is searched, and an id the
extractor returns is resolved through this table only, so another user's
note can never be shown, updated or invalidated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from langgraph.store.base import BaseStore, Item, SearchItem, SearchOp

from mnemo.core import NOTES, PROFILE, User, alist_rest, bounded_query, list_op, search_result
from mnemo.notes import live

#: Existing notes the extractor is shown at most (the most similar to what was said).
MAX_EXISTING_NOTES = 8


@dataclass(frozen=True)
class Known:
    """The profile's items and the notes shown to the extractor, by short id."""

    profile: list[Item]
    notes: dict[str, Item] = field(default_factory=dict)

    def shown(self) -> list[tuple[str, str]]:
        """(short id, text) of each note shown to the extractor."""
        return [(short, item.value["text"]) for short, item in self.notes.items()]


async def aread_known(store: BaseStore, user: User, texts: Sequence[str]) -> Known:
    """The profile and, per text, its nearest live notes by meaning (one
    ``abatch``; more only for a profile past one page), best first, bounded."""
    profile_ns, notes_ns = user.namespace(PROFILE), user.namespace(NOTES)
    ops = [
        list_op(profile_ns),
        *(SearchOp(notes_ns, query=bounded_query(t), limit=MAX_EXISTING_NOTES) for t in texts),
    ]
    results = await store.abatch(ops)
    best: dict[str, SearchItem] = {}
    for result in results[1:]:
        for item in live(search_result(result)):
            if tuple(item.namespace) == notes_ns and (item.key not in best or _score(item) > _score(best[item.key])):
                best[item.key] = item
    ranked = sorted(best.values(), key=_score, reverse=True)[:MAX_EXISTING_NOTES]
    profile = await alist_rest(store, profile_ns, search_result(results[0]))
    return Known(profile=profile, notes={f"n{i}": item for i, item in enumerate(ranked, 1)})


def _score(item: SearchItem) -> float:
    """A hit's score; an item without one (a store without an index) ranks last."""
    return -1.0 if item.score is None else float(item.score)
