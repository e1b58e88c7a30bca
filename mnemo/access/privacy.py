"""Privacy operations: export everything a user has, erase it, erase their threads.

Both start from one listing of the user's root ``(user_label,)`` and page through it;
an erase keeps entitlements and usage unless asked, and leaves one ``erase`` audit record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypedDict

from langgraph.store.base import BaseStore, Item, PutOp

from mnemo.access.entitlements import Entitlements, Usage
from mnemo.audit import AuditRecord, Origin, abatch_audited, audit_op
from mnemo.core import (
    AUDIT,
    AUDIT_HEAD,
    ENTITLEMENTS,
    NOTE_INDEX,
    NOTES,
    PAGE_SIZE,
    PROFILE,
    USAGE,
    ListingChangedError,
    User,
    alist_all,
    most_recent,
    now_iso,
)
from mnemo.notes import Note, to_note
from mnemo.profile import Profile, profile_from_items

#: Identifies the document's shape; bumped when it changes incompatibly.
EXPORT_FORMAT: Literal["mnemo.export/1"] = "mnemo.export/1"

#: Namespaces an erase keeps unless told otherwise (admin controls, not memory).
CONTROL_KINDS: tuple[str, ...] = (ENTITLEMENTS, USAGE)

#: Deletes sent per ``abatch`` (bounded requests on any backend).
DELETE_CHUNK = 500

#: Erase passes (list, delete) before :func:`aerase_user` gives up on a user
#: whose memory keeps being written; the last pass must find nothing.
ERASE_PASSES = 5


class StoredItem(TypedDict):
    """A store item as exported verbatim (namespaces mnemo has no section for)."""

    namespace: list[str]
    key: str
    value: dict[str, Any]
    created_at: str
    updated_at: str


class UserExport(TypedDict):
    """All of one user's memory, as one JSON document."""

    format: Literal["mnemo.export/1"]
    user_id: str
    user_label: str
    exported_at: str
    profile: Profile
    notes: list[Note]
    """Most recently updated first."""
    audit: list[AuditRecord]
    """Oldest first."""
    entitlements: Entitlements
    usage: list[Usage]
    """Oldest first."""
    other: dict[str, list[StoredItem]]
    """Every other namespace under the user's root, keyed by its labels after
    the user's, joined with ``/`` (e.g. ``"episodes"``)."""


class EraseReport(TypedDict):
    user_label: str
    deleted: dict[str, int]
    """Items deleted per namespace (labels after the user's, joined with ``/``)."""
    kept: list[str]
    """Namespaces left in place (entitlements and usage, unless included)."""


async def alist_user_namespaces(store: BaseStore, user: User) -> list[tuple[str, ...]]:
    """Every namespace under the user's root, paged (InMemoryStore may list
    emptied "ghost" namespaces too; they simply hold no items)."""
    found: list[tuple[str, ...]] = []
    offset = 0
    while True:
        page = await store.alist_namespaces(prefix=user.root, limit=PAGE_SIZE, offset=offset)
        found.extend(tuple(ns) for ns in page)
        if len(page) < PAGE_SIZE:
            return sorted(set(found))
        offset += PAGE_SIZE


def _kind(namespace: Sequence[str]) -> str:
    return "/".join(namespace[1:])


def _stored(item: Item) -> StoredItem:
    return StoredItem(
        namespace=list(item.namespace),
        key=item.key,
        value=dict(item.value),
        created_at=item.created_at.isoformat(),
        updated_at=item.updated_at.isoformat(),
    )


async def aexport_user(store: BaseStore, user: User) -> UserExport:
    """Everything stored under the user's root, as one JSON-serialisable document."""
    sections: dict[str, list[Item]] = {}
    for ns in await alist_user_namespaces(store, user):
        items = await alist_all(store, ns)
        if items:
            sections[_kind(ns)] = items
    # The note index is derived from the notes (mnemo.notes.index rebuilds it
    # from them): what it holds is exported once, as the notes.
    sections.pop(NOTE_INDEX, None)
    sections.pop(AUDIT_HEAD, None)  # derived from the audit records, exported below
    notes = sections.pop(NOTES, [])
    return UserExport(
        format=EXPORT_FORMAT,
        user_id=user.id,
        user_label=user.label,
        exported_at=now_iso(),
        profile=profile_from_items(sections.pop(PROFILE, [])),
        notes=[to_note(it) for it in most_recent(notes, len(notes))],
        audit=[it.value for it in sorted(sections.pop(AUDIT, []), key=lambda it: it.key)],  # type: ignore[misc]
        entitlements={it.key: it.value for it in sections.pop(ENTITLEMENTS, [])},  # type: ignore[misc]
        usage=[it.value for it in sorted(sections.pop(USAGE, []), key=lambda it: it.value.get("at", ""))],  # type: ignore[misc]
        other={kind: [_stored(it) for it in items] for kind, items in sorted(sections.items())},
    )


async def aerase_user(
    store: BaseStore, user: User, *, origin: Origin, include_entitlements: bool = False
) -> EraseReport:
    """Delete every item (and so every vector) under the user's root; return
    what was deleted. Then append one ``erase`` audit record (counts only).

    It lists and deletes until a listing finds nothing (at most
    :data:`ERASE_PASSES` times): an item written while the erase ran is
    erased too, and the erase returns only once nothing is left.

    Args:
        origin: who asked (``admin`` with an ``actor``, or the user).
        include_entitlements: also delete entitlements and usage (closing the
            account); by default they are kept (see the module docstring).

    Raises:
        ListingChangedError: the user's memory was still being written after
            :data:`ERASE_PASSES` passes (what was found is deleted, but no
            ``erase`` record is written): erase again.
    """
    deleted: dict[str, int] = {}
    kept: set[str] = set()
    # One pass is not proof: a write racing the erase (a background memory
    # write, with its audit record) lands after the listing. So passes repeat
    # until one finds nothing left to delete; that pass is the proof.
    for _ in range(ERASE_PASSES):
        ops: list[PutOp] = []
        for ns in await alist_user_namespaces(store, user):
            kind = _kind(ns)
            if kind in CONTROL_KINDS and not include_entitlements:
                kept.add(kind)
                continue
            items = await alist_all(store, ns)
            if items:
                deleted[kind] = deleted.get(kind, 0) + len(items)
                ops.extend(PutOp(ns, it.key, None) for it in items)
        if not ops:
            break
        for start in range(0, len(ops), DELETE_CHUNK):
            await store.abatch(ops[start : start + DELETE_CHUNK])
    else:
        raise ListingChangedError(
            f"{user.label}'s memory was still being written after {ERASE_PASSES} erase passes; "
            "erase again once the writes have stopped"
        )
    report = EraseReport(user_label=user.label, deleted=deleted, kept=sorted(kept))
    await abatch_audited(
        store, [audit_op(user, origin, "erase", "*", after={"deleted": deleted, "kept": report["kept"]})]
    )
    return report


async def aerase_threads(
    client: Any, user_id: str, *, metadata_key: str = "owner", page_size: int = PAGE_SIZE
) -> list[str]:
    """Delete every thread whose ``metadata[metadata_key]`` is ``user_id``;
    return their ids.

    Args:
        client: a ``langgraph_sdk`` async client (``get_client(...)``) whose
            credentials may see those threads (the user's own token, or an
            admin's).
        user_id: the user's id as the server's auth knows it (``sub`` of the
            token; the raw id, not the namespace label).

    All ids are collected before anything is deleted, so paging is not
    disturbed by the deletions.
    """
    ids: list[str] = []
    offset = 0
    while True:
        page = await client.threads.search(
            metadata={metadata_key: user_id}, limit=page_size, offset=offset, select=["thread_id"]
        )
        ids.extend(t["thread_id"] for t in page)
        if len(page) < page_size:
            break
        offset += page_size
    for thread_id in dict.fromkeys(ids):
        await client.threads.delete(thread_id)
    return list(dict.fromkeys(ids))
