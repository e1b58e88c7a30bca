"""The audit trail: one append-only record per memory write, in the user's own namespace.

Records live in ``(user_label, "audit")`` under a time-sortable key that seals their
content (:func:`sealed_key`); they are only ever added, never rewritten, and written
alongside the change they describe. Tamper-evident: each carries its place ``seq`` and
the digest of the record before it (``prev``); ``(user_label, "audit_head")`` names the
last (:func:`abatch_audited`, its read folded into the write's reads with
:func:`head_op`), and :func:`averify` walks the chain
(``python -m mnemo audit verify``). Why and the limits: ``docs/write-path.md``.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Literal, NotRequired, TypedDict

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, Result

from mnemo.audit.origin import AuditSource, Origin
from mnemo.core import AUDIT, AUDIT_HEAD, User, alist_all

#: Key of the chain head in ``(label, AUDIT_HEAD)``.
HEAD_KEY = "head"

AuditAction = Literal[
    "profile.set",
    "profile.delete",
    "note.add",
    "note.refine",
    "note.update",
    "note.invalidate",
    "note.forget",
    "erase",
    "entitlement.set",
    "entitlement.clear",
    "instructions.learn",
    "instructions.refuse",
    "proposal.add",
    "proposal.approve",
    "proposal.reject",
    "import",
]


class AuditRecord(TypedDict):
    """One memory write, as stored under ``(user_label, "audit")`` and exported."""

    id: str
    """The item key: ``<UTC time>-<digest>`` (:func:`sealed_key`); sorting by it sorts by time."""
    at: str
    """UTC ISO time of the write."""
    action: AuditAction
    target: str
    """What was written: a profile field, a note id, an entitlement key, the key of a
    version of the user's own instructions or of a proposal, ``*`` for an erase."""
    before: Any
    """The value before the write (``None`` when it did not exist)."""
    after: Any
    """The value after the write (``None`` when it was deleted)."""
    source: AuditSource
    thread_id: str | None
    run_id: str | None
    actor: str | None
    """Who acted when it was not the user's own run (an admin's id), else ``None``."""
    nonce: str
    """Random: two identical writes in the same microsecond are still two records."""
    seq: int
    """Position in the user's chain, from 1 (0 until :func:`abatch_audited` chains it)."""
    prev: str
    """:func:`digest` of the record before it (``""`` for the first)."""
    route: NotRequired[str]
    """The REST route the write came through (``PATCH /memory/profile``), when it came through one."""


def digest(record: Mapping[str, Any]) -> str:
    """SHA-256 of everything in ``record`` but ``id`` (canonical JSON)."""
    body = {k: v for k, v in record.items() if k != "id"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def sealed_key(record: Mapping[str, Any]) -> str:
    """The key of ``record``: its time (sortable) and its :func:`digest`
    (a random ``nonce`` makes two identical writes two keys). Never a
    counter: two writers would collide."""
    at = datetime.fromisoformat(str(record["at"]))
    return f"{at.astimezone(UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{digest(record)[:24]}"


def is_sealed(key: str, value: Any) -> bool:
    """Whether ``value`` is an audit record stored under the key its content
    seals (so a put under an existing key can only repeat it, never change it)."""
    if not isinstance(value, Mapping) or value.get("id") != key:
        return False
    try:
        return sealed_key(value) == key
    except (KeyError, TypeError, ValueError):
        return False


def audit_op(
    user: User, origin: Origin, action: AuditAction, target: str, *, before: Any = None, after: Any = None
) -> PutOp:
    """The write that appends one record; put it in the same ``abatch`` as the
    change it describes. Not indexed: the audit trail is never searched by meaning."""
    record = AuditRecord(
        id="",
        at=datetime.now(UTC).isoformat(),
        action=action,
        target=target,
        before=before,
        after=after,
        source=origin.source,
        thread_id=origin.thread_id,
        run_id=origin.run_id,
        actor=origin.actor,
        nonce=uuid.uuid4().hex[:16],
        seq=0,
        prev="",
    )
    if origin.route:
        record["route"] = origin.route
    record["id"] = key = sealed_key(record)
    return PutOp(user.namespace(AUDIT), key, dict(record), index=False)


def _is_record(op: Op) -> bool:
    return isinstance(op, PutOp) and op.value is not None and len(op.namespace) == 2 and op.namespace[1] == AUDIT


def head_op(user: User | str) -> GetOp:
    """The read of the chain head of ``user`` (or of a user label): put it in
    the batch of reads a write makes anyway and pass its result to
    :func:`abatch_audited` as ``heads``, which then adds no round trip of its own."""
    return GetOp(*_head_place(user.label if isinstance(user, User) else user))


def _head_place(label: str) -> tuple[tuple[str, str], str]:
    """The namespace and key of the chain head of the user labelled ``label``."""
    return (label, AUDIT_HEAD), HEAD_KEY


async def abatch_audited(
    store: BaseStore, ops: Sequence[Op], *, heads: Mapping[str, Result] | None = None
) -> list[Result]:
    """``store.abatch(ops)`` with the audit records among ``ops`` (from
    :func:`audit_op`) chained to their user's trail, numbered and linked,
    with the new heads in the same batch as the rest. ``heads``: user label
    to the result of its :func:`head_op`, read with the write's other reads;
    the heads of the other labels are read first (one round trip). The
    results are those of ``ops``."""
    ops = list(ops)
    labels = list(dict.fromkeys(op.namespace[0] for op in ops if _is_record(op)))  # type: ignore[union-attr]
    if not labels:
        return await store.abatch(ops)
    read = dict(heads or {})
    if missing := [label for label in labels if label not in read]:
        found = await store.abatch([head_op(label) for label in missing])
        read.update(zip(missing, found, strict=True))
    chain: dict[str, dict[str, Any]] = {
        label: dict(item.value) if isinstance(item := read[label], Item) else {"seq": 0, "digest": ""}
        for label in labels
    }
    for i, op in enumerate(ops):
        if _is_record(op):
            assert isinstance(op, PutOp) and op.value is not None
            head = chain[op.namespace[0]]
            record = {**op.value, "seq": int(head["seq"]) + 1, "prev": head["digest"]}
            record["id"] = key = sealed_key(record)
            ops[i] = PutOp(op.namespace, key, record, index=False)
            chain[op.namespace[0]] = {"seq": record["seq"], "digest": digest(record), "id": key}
    chained = [PutOp(*_head_place(label), chain[label], index=False) for label in labels]
    return (await store.abatch([*ops, *chained]))[: len(ops)]


async def alist_audit(store: BaseStore, user: User) -> list[AuditRecord]:
    """The user's whole audit trail, oldest first (pages past the store's limit)."""
    items = await alist_all(store, user.namespace(AUDIT))
    return [it.value for it in sorted(items, key=lambda it: it.key)]  # type: ignore[misc]


class AuditCheck(TypedDict):
    """What :func:`averify` found."""

    user_label: str
    records: int
    head: str
    """The digest of the last record (keep it: a later verify that does not reach it saw the chain rewritten)."""
    ok: bool
    problems: list[str]
    siblings: int
    """Records that share their place in the chain with another (written at the same instant)."""


async def averify(store: BaseStore, user: User) -> AuditCheck:
    """Walk the user's audit chain: every record sealed by its key, linked to
    a record of the place before it, the head naming the last one."""
    records = await alist_audit(store, user)
    head_item = await store.aget(*_head_place(user.label))
    head: dict[str, Any] = dict(head_item.value) if head_item is not None else {"seq": 0, "digest": ""}
    problems: list[str] = []
    by_seq: dict[int, set[str]] = {}
    for record in sorted(records, key=lambda r: (r.get("seq", 0), r.get("id", ""))):
        name = f"record {record.get('id')!r}"
        if not is_sealed(str(record.get("id")), record):
            problems.append(f"{name}: its content does not match its key (altered)")
        seq = record.get("seq")
        if not isinstance(seq, int) or seq < 1:
            problems.append(f"{name}: not in the chain (written around mnemo)")
            continue
        if record.get("prev") not in ({""} if seq == 1 else by_seq.get(seq - 1, set())):
            problems.append(f"{name}: the record before it (#{seq - 1}) is missing or altered")
        by_seq.setdefault(seq, set()).add(digest(record))
    # The head names a record that is there (the last one, or, after two
    # writes raced, one a little before it: the store has no compare-and-set).
    if head.get("digest", "") not in (set().union(*by_seq.values()) or {""}):
        problems.append(f"the chain head names record #{head.get('seq')}, which is not there: records removed")
    return AuditCheck(
        user_label=user.label,
        records=len(records),
        head=str(head.get("digest", "")),
        ok=not problems,
        problems=problems,
        siblings=sum(len(d) - 1 for d in by_seq.values()),
    )
