"""Many notes for one user at once (:func:`aremember_bulk`): an application's
backfill, the scale benchmarks. The same notes, audit records, index entries and
sparse vectors as :func:`mnemo.notes.writes.aremember_many` writes, in batches of
:data:`BULK_BATCH`, with the dedupe a load can afford. What it does and does not do:
``docs/memory.md`` ("Loading many notes")."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchOp

from mnemo.audit import Origin, Source, abatch_audited, audit_op, default_origin, head_op
from mnemo.core import NoteLimitError, PartialWriteError, User, now_iso, require_index, search_result
from mnemo.notes import index as note_index
from mnemo.notes import sparse_vectors
from mnemo.notes.model import MAX_NOTES_PER_USER, Note, RememberResult, normalize_note, note_from_value, note_key
from mnemo.notes.plan import NotesPlan, cap_lookup, new_note

#: Notes per store call (reads and writes): a batch's writes with their audit
#: records and index entries stay far under PostgreSQL's 65,535 bind parameters.
BULK_BATCH = 500


async def aremember_bulk(
    store: BaseStore,
    user: User,
    texts: list[str],
    *,
    source: Source = "user_said",
    origin: Origin | None = None,
    expires_at: list[str | None] | None = None,
    contexts: list[str | None] | None = None,
    refers_to: list[str | None] | None = None,
    max_notes: int | None = MAX_NOTES_PER_USER,
    batch: int = BULK_BATCH,
    sparse: bool = True,
) -> list[RememberResult]:
    """Store ``texts`` as notes of ``user``, ``batch`` notes per store call;
    returns one result per text, in order (``stored`` or ``duplicate``).

    Every text is validated, every repeat found and the cap checked before
    anything is written. A repeat is exact: the same normalised text, stored
    before or earlier in ``texts``; it is reported as a ``duplicate`` of that
    note and nothing is written for it (a load run again writes nothing). No
    search by meaning: no near-duplicate is merged, no note refined. Each
    stored note appends a ``note.add`` audit record, and gets its index entries
    and sparse vector, in the batch that writes it. ``expires_at``,
    ``contexts``, ``refers_to``: as for :func:`mnemo.notes.writes.aremember_many`.
    ``sparse=False`` leaves the sparse vectors (5 to 20 ms of CPU a note) to
    ``python -m mnemo reindex`` (:func:`mnemo.notes.sparse_vectors.arestamp`);
    until then recall ranks those notes by meaning and words alone.

    Raises:
        InvalidInputError: an invalid text or detail (nothing written).
        NoteLimitError: the user would hold more than ``max_notes`` notes
            (nothing written); ``None``: no cap.
        IndexMissingError: the store has no vector index.
        PartialWriteError: a store call failed midway; its ``written`` first
            texts are written (its ``results``), none after them.
    """
    plan = NotesPlan.of(user, texts, expires_at=expires_at, contexts=contexts, refers_to=refers_to, source=source)
    if not plan.texts:
        return []
    require_index(store)
    batch = max(batch, 1)
    stored, taken = await _astored(store, plan.namespace, [normalize_note(t) for t in plan.texts], batch)
    load = _plan_load(plan, stored, taken)
    if max_notes is not None and load.puts:
        over = len(load.puts) > max_notes
        if not over:
            (hit,) = await store.abatch([cap_lookup(plan.namespace, max_notes - len(load.puts) + 1)])
            over = bool(hit)
        if over:
            raise NoteLimitError(
                f"{len(load.puts)} new notes would take the user past {max_notes} notes, the most mnemo keeps "
                "per user; nothing was stored."
            )
    origin = origin or default_origin(plan.source)
    for start in range(0, len(load.puts), batch):
        try:
            await _awrite(store, user, load.puts[start : start + batch], origin, sparse=sparse)
        except Exception as exc:
            written = load.positions[start]
            raise PartialWriteError(
                f"{written} of {len(texts)} notes written (the first {written} texts), none after them: "
                f"the store failed ({type(exc).__name__}). Calling again with the same texts writes the rest.",
                written=written,
                results=load.results[:written],
            ) from exc
    return load.results


@dataclass(frozen=True)
class _Load:
    results: list[RememberResult]
    """One per text, in order."""
    puts: list[PutOp]
    """The new notes, in the order of their texts."""
    positions: list[int]
    """Per put, the position of its text."""


def _plan_load(plan: NotesPlan, stored: dict[str, Item], taken: set[str]) -> _Load:
    """What to report and write, given the stored note each repeated text
    repeats and the texts whose derived key holds another (by ``norm``)."""
    stamp = now_iso()
    said: dict[str, Note] = {}
    load = _Load(results=[], puts=[], positions=[])
    for i, (text, detail) in enumerate(zip(plan.texts, plan.details, strict=True)):
        norm = normalize_note(text)
        if norm not in said and (item := stored.get(norm)) is not None:
            said[norm] = note_from_value(item.key, item.value)
        if norm in said:
            load.results.append(RememberResult(status="duplicate", note=said[norm]))
            continue
        # The derived key, as aremember's; one holding another text (a note
        # refined since) leaves this note a random key.
        key = uuid.uuid4().hex if norm in taken else note_key(norm)
        put, said[norm] = new_note(plan.namespace, key, text, source=plan.source, stamp=stamp, detail=detail)
        load.results.append(RememberResult(status="stored", note=said[norm]))
        load.puts.append(put)
        load.positions.append(i)
    return load


async def _astored(
    store: BaseStore, ns: tuple[str, ...], norms: list[str], batch: int
) -> tuple[dict[str, Item], set[str]]:
    """The stored note each of ``norms`` repeats (by ``norm``), and the norms
    repeating none whose derived key holds another text. By key (a ``get``
    each, no listing); only a norm whose key is taken is looked up by its text."""
    distinct = list(dict.fromkeys(norms))
    found: dict[str, Item] = {}
    taken: list[str] = []
    for start in range(0, len(distinct), batch):
        part = distinct[start : start + batch]
        for norm, item in zip(part, await store.abatch([GetOp(ns, note_key(n)) for n in part]), strict=True):
            if isinstance(item, Item):
                if item.value.get("norm") == norm:
                    found[norm] = item
                else:
                    taken.append(norm)
    for start in range(0, len(taken), batch):
        part = taken[start : start + batch]
        ops = [SearchOp(ns, filter={"norm": n}, limit=1) for n in part]
        for norm, result in zip(part, await store.abatch(ops), strict=True):
            if hits := [it for it in search_result(result) if tuple(it.namespace) == ns]:
                found[norm] = hits[0]
    return found, set(taken) - set(found)


async def _awrite(store: BaseStore, user: User, puts: Sequence[PutOp], origin: Origin, *, sparse: bool) -> None:
    """One batch: the notes ``puts``, their audit records, index entries and
    sparse vectors, after one read of the index and the audit chain's head."""
    changes = [note_index.NoteChange(key=p.key, before=None, after=p.value) for p in puts if p.value is not None]
    terms = note_index.terms_touched(changes)
    audit_head, *index_items = await store.abatch([head_op(user), *note_index.read_ops(user, terms)])
    state = note_index.IndexState.from_results(terms, index_items)
    if sparse:
        await sparse_vectors.astamp(p.value for p in puts if isinstance(p.value, dict))
    audits = [audit_op(user, origin, "note.add", p.key, before=None, after=p.value["text"]) for p in puts if p.value]
    ops = [*puts, *note_index.write_ops(user, state, changes), *audits]
    await abatch_audited(store, ops, heads={user.label: audit_head})
