"""The audit trail: one append-only record per memory write, in the user's own namespace.

Records live in ``(user_label, "audit")`` under a time-sortable key that seals their
content (:func:`sealed_key`); they are only ever added, never rewritten, and written
alongside the change they describe.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, TypedDict

from langgraph.store.base import BaseStore, PutOp

from mnemo.core import AUDIT, InvalidInputError, User, alist_all

AuditSource = Literal["user_said", "tool", "extractor", "admin"]
AUDIT_SOURCES: tuple[str, ...] = ("user_said", "tool", "extractor", "admin")

AuditAction = Literal[
    "profile.set",
    "profile.delete",
    "note.add",
    "note.refine",
    "note.forget",
    "erase",
    "entitlement.set",
    "entitlement.clear",
]


class AuditRecord(TypedDict):
    """One memory write, as stored under ``(user_label, "audit")`` and exported."""

    id: str
    """The item key: ``<UTC time>-<digest>`` (:func:`sealed_key`); sorting by it sorts by time."""
    at: str
    """UTC ISO time of the write."""
    action: AuditAction
    target: str
    """What was written: a profile field, a note id, an entitlement key, ``*`` for an erase."""
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


@dataclass(frozen=True, kw_only=True)
class Origin:
    """Where a memory write comes from, recorded with it in the audit trail."""

    source: AuditSource
    """``user_said`` (the user asked directly), ``tool`` (a tool call of the
    model), ``extractor`` (extraction after a turn) or ``admin``."""

    thread_id: str | None = None
    """Thread of the agent run that made the write, if any."""

    run_id: str | None = None
    """Run of the agent that made the write, if any."""

    actor: str | None = None
    """Identity of whoever acted for the user (an admin), if not the user."""

    def __post_init__(self) -> None:
        if self.source not in AUDIT_SOURCES:
            raise InvalidInputError(f"audit source must be one of {AUDIT_SOURCES}, got {self.source!r}")

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None, source: AuditSource) -> Origin:
        """The origin of a write made inside a graph run whose ``RunnableConfig``
        is ``config``: thread id from ``configurable``, run id from
        ``configurable`` or ``metadata`` (where the LangGraph server puts it)."""
        config = config or {}
        configurable = config.get("configurable") or {}
        metadata = config.get("metadata") or {}

        def pick(name: str) -> str | None:
            value = configurable.get(name) or metadata.get(name) or config.get(name)
            return str(value) if value else None

        return cls(source=source, thread_id=pick("thread_id"), run_id=pick("run_id"))


def sealed_key(record: Mapping[str, Any]) -> str:
    """The key of ``record``: its time (sortable) and a digest of everything
    in it but ``id`` (a random ``nonce`` makes two identical writes two keys).
    Never a counter: two writers would collide."""
    at = datetime.fromisoformat(str(record["at"]))
    body = {k: v for k, v in record.items() if k != "id"}
    digest = hashlib.sha256(json.dumps(body, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()
    return f"{at.astimezone(UTC).strftime('%Y%m%dT%H%M%S%fZ')}-{digest[:24]}"


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
    )
    record["id"] = key = sealed_key(record)
    return PutOp(user.namespace(AUDIT), key, dict(record), index=False)


async def alist_audit(store: BaseStore, user: User) -> list[AuditRecord]:
    """The user's whole audit trail, oldest first (pages past the store's limit)."""
    items = await alist_all(store, user.namespace(AUDIT))
    return [it.value for it in sorted(items, key=lambda it: it.key)]  # type: ignore[misc]
