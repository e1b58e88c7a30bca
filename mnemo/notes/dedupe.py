"""Which stored note a new text repeats: the lookups and the rule.

The same ``norm`` is a duplicate; a neighbour at or above the threshold is one only
if no content word is new (:mod:`mnemo.core.text`), else a refinement if the new text
only adds words. The neighbour is found passage to passage: the lookup embeds the new
text as the passage its put then reuses (:func:`mnemo.stores.passage_query`).
"""

from __future__ import annotations

from typing import Literal

from langgraph.store.base import Item, SearchItem, SearchOp

from mnemo.core import adds_nothing, only_in_namespace, semantic_hits
from mnemo.notes.model import normalize_note, note_key
from mnemo.stores import passage_query

#: Reads per text in :func:`duplicate_lookups`.
LOOKUPS_PER_TEXT = 3


def duplicate_lookups(ns: tuple[str, ...], text: str) -> list[SearchOp]:
    """Reads that find a stored note ``text`` repeats: exactly, at its derived
    key (``filter`` on the id, not ``get``: no ghost namespaces), by meaning (the
    text as a passage, against the stored passages: symmetric, and the one
    encoding of the text that its put reuses)."""
    norm = normalize_note(text)
    return [
        # exact: an equality filter on the normalised text, evaluated by the store
        SearchOp(ns, filter={"norm": norm}, limit=1),
        SearchOp(ns, filter={"id": note_key(norm)}, limit=1),
        SearchOp(ns, query=passage_query(text), limit=1),
    ]


def repeated_note(
    text: str, same: list[SearchItem], nearest: list[SearchItem], ns: tuple[str, ...], threshold: float
) -> tuple[Literal["duplicate", "refined"], Item] | None:
    """Whether ``text`` repeats a stored note, or refines one with more detail.

    Exact (normalised) equality is a duplicate. A semantic neighbour counts
    only when it also passes the lexical guard (:mod:`mnemo.core.text`):
    ``text`` adds no content word -> duplicate; the stored note's content
    words are a strict subset of ``text``'s -> ``text`` refines it.
    """
    if same := only_in_namespace(same, ns):  # a search matches deeper namespaces too
        return "duplicate", same[0]
    for hit in semantic_hits(nearest, ns, min_score=threshold):
        if adds_nothing(text, hit.value["text"]):
            return "duplicate", hit
        if adds_nothing(hit.value["text"], text):
            return "refined", hit
    return None
