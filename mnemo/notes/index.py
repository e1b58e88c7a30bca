"""Write-time indexes of a user's notes, so that a turn reads a bounded amount.

Every write of notes keeps, in ``(label, "note_index")``, a head item (counts and the
most recent notes) and one postings item per term, so recall reads them by key and
never lists the user's notes. How and its one known race: ``docs/design.md``.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result

from mnemo.audit import abatch_audited
from mnemo.core import NOTE_INDEX, NOTES, User, alist_all, bm25_tokens

logger = logging.getLogger(__name__)

#: Key of the head item.
HEAD_KEY = "head"
#: Most recent notes kept whole in the head item (more than any prompt shows,
#: so that forgetting a few still leaves enough).
RECENT_KEEP = 20
#: Notes listed per term; past this, the oldest postings of the term are dropped.
POSTINGS_KEEP = 500
#: Distinct terms of a note that are indexed (a note is a fact, rarely longer).
MAX_NOTE_TERMS = 64
#: Distinct terms of a query that are looked up.
MAX_QUERY_TERMS = 16
#: BM25 parameters (those of ``bm25s``, which mnemo used before).
K1 = 1.5
B = 0.75

#: The fields of a note value kept in the head's recent list (``expires_at``
#: too, so a time-bound note is hidden without reading it: mnemo.notes.expiry; not
#: the context, which only steers the search).
_RECENT_FIELDS = ("id", "text", "source", "first_seen", "updated_at")
_OPTIONAL_RECENT_FIELDS = ("expires_at", "refers_to")


def term_key(term: str) -> str:
    return "t:" + term


def note_terms(text: str) -> tuple[Counter[str], int]:
    """Term frequencies of ``text`` (at most :data:`MAX_NOTE_TERMS` distinct
    terms, first seen first) and its length in BM25 tokens."""
    tokens = bm25_tokens(text)
    counts = Counter(tokens)
    kept = list(dict.fromkeys(tokens))[:MAX_NOTE_TERMS]
    return Counter({t: counts[t] for t in kept}), len(tokens)


def query_terms(query: str) -> list[str]:
    """The terms of ``query`` looked up, with repeats (a repeated word weighs
    more, as in ``bm25s``), at most :data:`MAX_QUERY_TERMS` distinct ones."""
    tokens = bm25_tokens(query)
    allowed = set(list(dict.fromkeys(tokens))[:MAX_QUERY_TERMS])
    return [t for t in tokens if t in allowed]


def index_namespace(user: User) -> tuple[str, str]:
    return user.namespace(NOTE_INDEX)


def read_ops(user: User, terms: Iterable[str]) -> list[GetOp]:
    """The head, then the postings of each distinct term in ``terms``, by key."""
    ns = index_namespace(user)
    return [GetOp(ns, HEAD_KEY), *(GetOp(ns, term_key(t)) for t in dict.fromkeys(terms))]


@dataclass(kw_only=True)
class IndexState:
    """The head and postings as read by :func:`read_ops` (absent items are empty)."""

    head: dict[str, Any] | None
    """The head value, ``None`` when the user has no index yet."""
    postings: dict[str, dict[str, Any]]
    """Term -> postings value (``{"df": int, "p": [[id, tf, dl], ...]}``), for the terms read."""
    read: frozenset[str] = frozenset()
    """Every term whose postings were read (present or not)."""

    @classmethod
    def from_results(cls, terms: Iterable[str], results: Sequence[Result]) -> IndexState:
        """From the results of ``read_ops(user, terms)``, in order."""
        distinct = list(dict.fromkeys(terms))
        head = results[0]
        postings = {t: dict(r.value) for t, r in zip(distinct, results[1:], strict=True) if isinstance(r, Item)}
        return cls(
            head=dict(head.value) if isinstance(head, Item) else None, postings=postings, read=frozenset(distinct)
        )

    @property
    def recent(self) -> list[dict[str, Any]]:
        """The most recently updated notes, most recent first."""
        return list((self.head or {}).get("recent", []))


# ------------------------------------------------------------------ ranking


def bm25_ranking(terms: Sequence[str], state: IndexState, *, limit: int) -> list[str]:
    """Note ids sharing a term with the query, best BM25 score first (ties by id)."""
    count = int((state.head or {}).get("count", 0))
    if count <= 0 or not terms:
        return []
    avgdl = max(float(state.head.get("total_len", 0)) / count, 1e-9) if state.head else 1.0
    scores: dict[str, float] = {}
    for term in terms:
        posting = state.postings.get(term)
        if not posting or not posting.get("p"):
            continue
        df = max(int(posting.get("df", 0)), len(posting["p"]))
        idf = math.log(1 + (max(count, df) - df + 0.5) / (df + 0.5))
        for note_id, tf, dl in posting["p"]:
            scores[note_id] = scores.get(note_id, 0.0) + idf * tf / (tf + K1 * (1 - B + B * dl / avgdl))
    return sorted((k for k, s in scores.items() if s > 0), key=lambda k: (-scores[k], k))[:limit]


# ------------------------------------------------------------------ maintenance


@dataclass(frozen=True, kw_only=True)
class NoteChange:
    """A note written or deleted: ``before``/``after`` are its values (``None``
    when it did not exist / was deleted)."""

    key: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None


def terms_touched(changes: Iterable[NoteChange]) -> list[str]:
    """Every term whose postings ``changes`` may modify (old and new texts)."""
    out: dict[str, None] = {}
    for change in changes:
        for value in (change.before, change.after):
            if value is not None:
                out.update(dict.fromkeys(note_terms(value["text"])[0]))
    return list(out)


def write_ops(user: User, state: IndexState, changes: Sequence[NoteChange]) -> list[PutOp]:
    """Puts that bring the head and postings of ``state`` up to date with
    ``changes`` (applied in order). ``state`` must hold the postings of
    :func:`terms_touched`: writing a term not read would overwrite the
    postings of other notes.

    Raises:
        ValueError: a touched term was not read.
    """
    if not changes:
        return []
    if unread := set(terms_touched(changes)) - state.read:
        raise ValueError(f"the postings of {sorted(unread)[:5]} were not read before being written")
    ns = index_namespace(user)
    head = dict(state.head or {"count": 0, "total_len": 0, "recent": []})
    recent = {r["id"]: r for r in head.get("recent", [])}
    postings: dict[str, dict[str, Any]] = {}  # the touched terms, copied on first touch
    dirty: set[str] = set()
    for change in changes:
        old = note_terms(change.before["text"]) if change.before is not None else None
        new = note_terms(change.after["text"]) if change.after is not None else None
        head["count"] = int(head["count"]) + (new is not None) - (old is not None)
        head["total_len"] = int(head["total_len"]) + (new[1] if new else 0) - (old[1] if old else 0)
        recent.pop(change.key, None)
        if change.after is not None:
            recent[change.key] = (
                {f: change.after.get(f, "") for f in _RECENT_FIELDS}
                | {f: change.after[f] for f in _OPTIONAL_RECENT_FIELDS if change.after.get(f)}
                | {"id": change.key}
            )
        if old == new:
            continue  # same text: only recency changed
        for term in set(old[0] if old else ()) | set(new[0] if new else ()):
            if term not in postings:
                stored = state.postings.get(term) or {}
                postings[term] = {"df": int(stored.get("df", 0)), "p": [list(e) for e in stored.get("p", [])]}
            entry = postings[term]
            had = old is not None and term in old[0]
            if old is not None:  # a new note is in no postings yet
                entry["p"] = [e for e in entry["p"] if e[0] != change.key]
            if new is not None and term in new[0]:
                entry["p"].append([change.key, new[0][term], new[1]])
                del entry["p"][:-POSTINGS_KEEP]
                entry["df"] += 0 if had else 1
            elif had:
                entry["df"] = max(entry["df"] - 1, 0)
            dirty.add(term)
    head["count"] = max(head["count"], 0)
    head["total_len"] = max(head["total_len"], 0)
    head["recent"] = sorted(recent.values(), key=lambda r: (r.get("updated_at", ""), r["id"]), reverse=True)[
        :RECENT_KEEP
    ]
    # No notes left: no head either, so a user who forgot everything leaves
    # nothing behind (alist_users, export).
    ops = [PutOp(ns, HEAD_KEY, head if head["count"] or head["recent"] else None, index=False)]
    for term in sorted(dirty):
        value = postings[term]
        # An emptied term is deleted, not kept as an empty item.
        ops.append(PutOp(ns, term_key(term), value if value["p"] else None, index=False))
    return ops


def index_of(texts: Mapping[str, str]) -> IndexState:
    """The index of the notes ``texts`` (id -> text) as their writes leave it,
    in memory: recall's word ranking (:func:`bm25_ranking`) replayed without a
    store (``bench/thresholds_replay.py``)."""
    changes = [NoteChange(key=key, before=None, after={"text": text}) for key, text in texts.items()]
    every = frozenset(terms_touched(changes))
    written = {
        op.key: op.value for op in write_ops(User.of("replay"), IndexState(head=None, postings={}, read=every), changes)
    }
    postings = {t: dict(value) for t in every if (value := written.get(term_key(t)))}
    return IndexState(head=dict(written.get(HEAD_KEY) or {}), postings=postings, read=every)


async def aapply(store: BaseStore, user: User, changes: Sequence[NoteChange], *, extra: Sequence[Op] = ()) -> None:
    """Read the index items ``changes`` touch, then write them with ``extra``
    (two round trips; for writes that did not read the index already)."""
    terms = terms_touched(changes)
    results = await store.abatch(read_ops(user, terms))
    state = IndexState.from_results(terms, results)
    await abatch_audited(store, [*extra, *write_ops(user, state, changes)])


async def acomplete(store: BaseStore, user: User, state: IndexState, changes: Sequence[NoteChange]) -> list[PutOp]:
    """:func:`write_ops` for ``changes`` given a ``state`` read before the
    changes were known: the postings still missing (the old wording of a
    refined note) are read first, in one more round trip only if needed."""
    missing = [t for t in terms_touched(changes) if t not in state.read]
    if missing:
        results = await store.abatch([GetOp(index_namespace(user), term_key(t)) for t in missing])
        extra = IndexState.from_results(missing, [None, *results])
        state = IndexState(head=state.head, postings={**state.postings, **extra.postings}, read=state.read | extra.read)
    return write_ops(user, state, changes)


#: Puts per store call while rebuilding: a user's whole index in one call
#: exceeded PostgreSQL's 65,535 bind parameters at 20,000 notes (and failed).
REBUILD_BATCH = 500
#: Key of the marker the hot path leaves when it starts a rebuild (see :func:`arebuild_once`).
REBUILD_KEY = "rebuild"


async def arebuild(store: BaseStore, user: User, *, batch: int = REBUILD_BATCH) -> int:
    """Build the index from every note of the user (once, for notes written
    before the index existed, or to repair it); returns the notes indexed.
    Pages through all notes, so its cost grows with them: it is the one-time
    migration (``python -m mnemo reindex``), run from a turn at most once
    (:func:`arebuild_once`). Writes at most ``batch`` items per store call,
    the head last with the marker's removal: a rebuild cut short leaves no
    head (the index counts as missing) but a turn's marker, so only the
    migration does it again."""
    items = await alist_all(store, user.namespace(NOTES))
    ns = index_namespace(user)
    old = [it.key for it in await alist_all(store, ns)]
    # Oldest first, as they were written, so a common term keeps the most
    # recent postings; by mnemo's own stamp, as backends list in different orders.
    # Deduplicated by key: a listing pages by offset, and PostgreSQL orders only
    # by ``updated_at``, so items sharing one can repeat across pages.
    unique = {it.key: it for it in items}
    items = sorted(unique.values(), key=lambda it: (it.value.get("updated_at", ""), it.key))
    changes = [NoteChange(key=it.key, before=None, after=it.value) for it in items if "text" in it.value]
    if HEAD_KEY in old:  # an index being repaired counts as missing until its new head is written
        await store.abatch([PutOp(ns, HEAD_KEY, None)])
    # Start from an empty index: postings left from an older index are dropped
    # (the head and the hot path's marker last, below: a rebuild cut short keeps its marker).
    ops: dict[str, PutOp] = {key: PutOp(ns, key, None) for key in old if key not in (HEAD_KEY, REBUILD_KEY)}
    every = frozenset(terms_touched(changes))
    head: list[PutOp] = []
    for op in write_ops(user, IndexState(head=None, postings={}, read=every), changes):
        if op.key == HEAD_KEY:
            head.append(op)
        else:
            ops[op.key] = op
    body = list(ops.values())
    for start in range(0, len(body), max(batch, 1)):
        await store.abatch(body[start : start + batch])
    # The head, and the hot path's marker gone: the index is complete.
    await store.abatch([*head, PutOp(ns, REBUILD_KEY, None)])
    return len(changes)


async def arebuild_once(store: BaseStore, user: User) -> bool:
    """A turn's rebuild of a missing index, at most once per user: the first
    turn leaves a marker item (:data:`REBUILD_KEY`) and rebuilds; a turn that
    finds the marker (the rebuild failed or is running) does not start
    another, and reads without the index (dense recall still works) until
    ``python -m mnemo reindex`` completes it. Returns whether the index is
    now built; a failure is logged, never raised (memory stays available).
    Two turns of one user starting at the same instant may both rebuild
    (the same items, twice)."""
    ns = index_namespace(user)
    if await store.aget(ns, REBUILD_KEY) is not None:
        return False
    await store.aput(ns, REBUILD_KEY, {"started_at": datetime.now(UTC).isoformat()}, index=False)
    try:
        count = await arebuild(store, user)
    except Exception:
        logger.exception("rebuilding the note index of %s failed; run: python -m mnemo reindex", user.label)
        return False
    logger.info("note index of %s rebuilt from %d notes", user.label, count)
    return True
