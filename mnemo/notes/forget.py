"""Forgetting notes: by id, or by what they say (``about``).

Every way to forget by description (``forget_note(about=...)``,
:func:`aforget`) goes through one matcher, :func:`amatch`:

* **A note matches by its text, never by its saved context.** The store scores
  a note with a context by the better of its text and its text in context
  (``mnemo.notes.model.indexed_text``), which recall wants; a forget request
  names what a note says, so a note with a context is scored again on its text
  alone. Before (issue 56), ``about="cats"`` deleted "I live near the old
  mill", saved in reply to a message about the cats.
* **The threshold is per script of the request** (:func:`mnemo.core.script_of`):
  the embedder scores two Chinese texts ~0.05 higher than two English ones of
  the same likeness (:data:`FORGET_RULES`, chosen on a labelled set:
  docs/thresholds.md). A script with no measured rule gets the strictest.
* **Only a clear match is deleted** (:func:`decide`): nothing over the
  threshold, more notes over it than a forget takes, or a note under it within
  the rule's gap of the weakest one over it, and nothing is deleted: the
  caller gets the nearest notes back to ask which one (by id).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, cast

import numpy as np
from langgraph.store.base import BaseStore, PutOp, SearchItem, SearchOp

from mnemo.audit import Origin, audit_op
from mnemo.core import (
    INVALIDATED_NOTES,
    NOTES,
    IndexMissingError,
    InvalidInputError,
    User,
    bounded_query,
    require_index,
    score_of,
    script_of,
    semantic_hits,
    store_embeddings,
)
from mnemo.notes import index as note_index
from mnemo.notes.model import INDEXED_TEXT_FIELD, Note, note_from_value, to_note


@dataclass(frozen=True)
class ForgetRule:
    """When notes match a request by description: ``min_score`` (their text's
    similarity to the request, at or above) and ``gap`` (the best note under
    ``min_score`` stays at least this far below the weakest one over it)."""

    min_score: float
    gap: float


#: Per script of the request (:func:`mnemo.core.script_of`), chosen on the tune
#: half of ``bench/data/forget_requests.json`` (no tune request deletes a note
#: it does not name; then the most requests answered exactly; docs/thresholds.md
#: has the held-out figures).
FORGET_RULES: dict[str, ForgetRule] = {
    "LATIN": ForgetRule(min_score=0.825, gap=0.05),
    "CJK": ForgetRule(min_score=0.885, gap=0.04),
}
#: Notes the store is asked for (best by its own score, text or text in
#: context), before each is scored on its text alone.
FORGET_CANDIDATES = 20
#: Notes a forget by description deletes at most (more: nothing, ask which).
MAX_FORGET_NOTES = 5
#: Nearest notes returned when nothing is deleted.
SHOWN_CANDIDATES = 3

Decision = Literal["clear", "no_match", "too_close", "too_many", "no_notes"]


def rule_for(about: str) -> ForgetRule:
    """The rule for a request in ``about``'s script; the strictest measured one for another script."""
    rule = FORGET_RULES.get(script_of(about))
    if rule is None:
        rule = ForgetRule(max(r.min_score for r in FORGET_RULES.values()), max(r.gap for r in FORGET_RULES.values()))
    return rule


def decide(scores: Sequence[float], rule: ForgetRule, max_notes: int = MAX_FORGET_NOTES) -> tuple[int, Decision]:
    """How many of ``scores`` (text similarities, best first) a forget deletes, and why.

    ``(n, "clear")`` deletes the first ``n``; any other decision deletes nothing.
    """
    if not scores:
        return 0, "no_notes"
    over = sum(s >= rule.min_score for s in scores)
    if over == 0:
        return 0, "no_match"
    if over > max_notes:
        return 0, "too_many"
    if over < len(scores) and scores[over - 1] - scores[over] < rule.gap:
        return 0, "too_close"
    return over, "clear"


@dataclass(frozen=True)
class Match:
    """What :func:`amatch` found: ``notes`` (deleted when ``decision`` is
    ``"clear"``; else the nearest, to ask which), each with its text's score."""

    decision: Decision
    notes: list[Note] = field(default_factory=list)
    items: list[SearchItem] = field(default_factory=list, repr=False)


async def amatch(store: BaseStore, user: User, about: str, *, max_notes: int = MAX_FORGET_NOTES) -> Match:
    """The notes of ``user`` that ``about`` names, by their text (module docstring).

    Raises:
        IndexMissingError: the store has no vector index, or does not say which
            embedder it uses while a candidate has a context (its text alone
            cannot be scored).
    """
    query = bounded_query(about).strip()
    if not query:
        return Match("no_notes")
    require_index(store)
    ns = user.namespace(NOTES)
    hits = semantic_hits(await store.asearch(ns, query=query, limit=FORGET_CANDIDATES), ns, min_score=-1.0)
    scored = sorted(zip(await _text_scores(store, query, hits), hits, strict=True), key=lambda p: -p[0])
    n, decision = decide([s for s, _ in scored], rule_for(query), max_notes)
    chosen = scored[:n] if decision == "clear" else scored[:SHOWN_CANDIDATES]
    return Match(
        decision,
        [note_from_value(it.key, it.value, s) for s, it in chosen],
        [it for _, it in chosen] if decision == "clear" else [],
    )


async def _text_scores(store: BaseStore, query: str, hits: list[SearchItem]) -> list[float]:
    """Each hit's similarity to ``query`` by its text alone: the store's score for
    a note embedded by its text only, the same cosine recomputed for a note with
    a context (the store kept the better of its two vectors)."""
    in_context = [i for i, it in enumerate(hits) if INDEXED_TEXT_FIELD in it.value]
    scores = [score_of(it) for it in hits]
    if not in_context:
        return scores
    embeddings = store_embeddings(store)
    if embeddings is None:
        raise IndexMissingError("forget by description needs the store's embedder; forget the note by its id")
    q = np.asarray(await embeddings.aembed_query(query), dtype=np.float64)
    texts = await embeddings.aembed_documents([str(hits[i].value["text"]) for i in in_context])
    for i, vector in zip(in_context, texts, strict=True):
        p = np.asarray(vector, dtype=np.float64)
        scores[i] = float(q @ p / (np.linalg.norm(q) * np.linalg.norm(p) or 1.0))
    return scores


async def aforget(
    store: BaseStore,
    user: User,
    *,
    note_id: str | None = None,
    about: str | None = None,
    max_notes: int = MAX_FORGET_NOTES,
    origin: Origin | None = None,
) -> list[Note]:
    """Delete a note by id, or the notes ``about`` clearly names (:func:`amatch`); return them.

    Only the user's own namespaces are touched, so an id of another user's note
    removes nothing. By id, an invalidated note is found too (it stays, out
    of recall, until forgotten). Returns ``[]`` when nothing was deleted (by
    description: use :func:`aforget_about` for the candidates). Each deletion
    appends an audit record in the same batch (``origin`` defaults to ``user_said``).
    """
    if (note_id is None) == (about is None):
        raise InvalidInputError("forget takes exactly one of note_id or about")
    if about is not None:
        match = await aforget_about(store, user, about, max_notes=max_notes, origin=origin)
        return match.notes if match.decision == "clear" else []
    ns = user.namespace(NOTES)
    # A filter on the id kept in the value, not ``get``: get creates ghost
    # namespaces on InMemoryStore.
    found = await store.abatch(
        [SearchOp(n, filter={"id": note_id}, limit=1) for n in (ns, user.namespace(INVALIDATED_NOTES))]
    )
    items, gone = ([it for it in cast(list[SearchItem], r) if it.key == note_id] for r in found)
    await _adelete(store, user, items, gone, origin)  # invalidated notes (mnemo.notes.revise): by id only
    return [to_note(it) for it in [*items, *gone]]


async def aforget_about(
    store: BaseStore, user: User, about: str, *, max_notes: int = MAX_FORGET_NOTES, origin: Origin | None = None
) -> Match:
    """Delete the notes ``about`` clearly names; the :class:`Match` says which,
    or, when nothing was deleted, why and the nearest notes."""
    match = await amatch(store, user, about, max_notes=max_notes)
    if match.decision == "clear":
        await _adelete(store, user, match.items, [], origin)
    return match


async def _adelete(
    store: BaseStore, user: User, items: list[SearchItem], gone: list[SearchItem], origin: Origin | None
) -> None:
    """Delete live notes ``items`` (and their index entries) and invalidated ones ``gone``, audited, in one batch."""
    if not items and not gone:
        return
    origin = origin or Origin(source="user_said")
    await note_index.aapply(
        store,
        user,
        [note_index.NoteChange(key=it.key, before=it.value, after=None) for it in items],
        extra=[
            *(PutOp(tuple(it.namespace), it.key, None) for it in [*items, *gone]),
            *(audit_op(user, origin, "note.forget", it.key, before=it.value["text"]) for it in [*items, *gone]),
        ],
    )
