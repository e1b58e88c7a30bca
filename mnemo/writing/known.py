"""The user's existing notes the extractor is shown (at most :data:`MAX_EXISTING_NOTES`,
under short ids). Only the user's own namespace is searched and an id the extractor
returns is resolved through this table only, so another user's note can never be
shown, updated or invalidated (docs/notes.md)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from langgraph.store.base import BaseStore, Item, SearchItem, SearchOp

from mnemo.core import NOTES, PROFILE, User, alist_rest, bounded_query, list_op, search_result
from mnemo.notes import live
from mnemo.writing.extraction import MemoryExtraction

logger = logging.getLogger(__name__)

#: Existing notes the extractor is shown at most (the most similar to what was said).
MAX_EXISTING_NOTES = 8


class RevisionRequest(NamedTuple):
    """A revision the extractor asked for: note ``key`` (shown as ``shown``)
    gets ``text``, or is invalidated (``None``)."""

    key: str
    shown: str
    text: str | None


@dataclass(frozen=True)
class Known:
    """The notes shown to the extractor, by short id; with their stored values
    and the profile when :func:`aread_known` read them (else ``None``: the
    write reads them with its own lookups)."""

    notes: dict[str, tuple[str, str]]
    """Short id -> (note id, text shown)."""
    profile: list[Item] | None = None
    values: dict[str, dict[str, Any]] | None = None
    """Note id -> its stored value."""

    @classmethod
    def of_notes(cls, notes: Sequence[Mapping[str, str]]) -> Known:
        """The notes (``id``, ``text``) found before, e.g. by the turn's ``load_memory``."""
        return cls(notes={f"n{i}": (n["id"], n["text"]) for i, n in enumerate(notes[:MAX_EXISTING_NOTES], 1)})

    def shown_notes(self) -> dict[str, str]:
        """Note id -> text shown, of each note shown to the extractor."""
        return dict(self.notes.values())

    def shown(self) -> list[tuple[str, str]]:
        """(short id, text) of each note shown to the extractor."""
        return [(short, text) for short, (_, text) in self.notes.items()]

    def requests(self, extraction: MemoryExtraction) -> list[RevisionRequest]:
        """The extraction's updates and invalidations of notes it was shown;
        any other id (made up, another user's, a full id) is ignored and
        logged. The first word on a note wins."""
        wanted: dict[str, str | None] = {}
        for update in extraction.updates:
            wanted.setdefault(update.id, update.text)
        for note_id in extraction.invalidates:
            wanted.setdefault(note_id, None)
        out: list[RevisionRequest] = []
        for short, text in wanted.items():
            if short not in self.notes:
                logger.warning("extraction named note %r, which it was not shown; ignored", short[:40])
                continue
            key, shown = self.notes[short]
            out.append(RevisionRequest(key, shown, text))
        return out


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
    return Known(
        notes={f"n{i}": (item.key, item.value["text"]) for i, item in enumerate(ranked, 1)},
        profile=profile,
        values={item.key: item.value for item in ranked},
    )


def _score(item: SearchItem) -> float:
    """A hit's score; an item without one (a store without an index) ranks last."""
    return -1.0 if item.score is None else float(item.score)
