"""Import: an export document (:func:`mnemo.access.privacy.aexport_user`) written back, the export's inverse.

Notes come back with their ids, history, context, dates and expiry, in the note index and with
their sparse vectors; the profile with each field's provenance and history; invalidated notes,
the user's own instructions, episodes and the application's items as they were. Idempotent:
what is already there as the document has it is not written again, and an import that changes
nothing writes nothing (no audit record either). Everything is checked before anything is
written, each part by the checks of the write path it stands for (:mod:`mnemo.access.import_checks`:
the first part that fails is named, nothing is written), and the writes are one batch with one
``import`` audit record. Not imported: the audit
trail (the import is recorded in the user's own chain), entitlements and usage (admin controls).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypedDict, cast

from langgraph.store.base import BaseStore, PutOp

from mnemo.access.import_checks import (
    CHECKS,
    UNSOURCED,
    at,
    declared,
    fields,
    history,
    key,
    note_of,
    profile_entry,
    source,
    stamp,
)
from mnemo.access.privacy import EXPORT_FORMAT, StoredItem, UserExport
from mnemo.audit import Origin, abatch_audited, audit_op
from mnemo.core import (
    APP,
    EPISODES,
    INSTRUCTIONS,
    INVALIDATED_NOTES,
    NOTES,
    PROFILE,
    InvalidInputError,
    NoteLimitError,
    User,
    alist_all,
    json_value,
)
from mnemo.episodes import EPISODE_INDEX
from mnemo.notes import MAX_NOTES_PER_USER, arestore, astamp, is_expired, same_note
from mnemo.profile import ProfileEntry, normalize_field

#: The export sections kept verbatim, and how each is put back (``index``: the fields embedded).
VERBATIM: dict[str, list[str] | Literal[False]] = {
    INVALIDATED_NOTES: False,
    INSTRUCTIONS: False,
    EPISODES: EPISODE_INDEX,
    APP: False,
}
#: Items of the verbatim sections one import takes.
MAX_IMPORT_ITEMS = 5000


class ImportReport(TypedDict):
    user_label: str
    written: dict[str, int]
    """Items written per kind (``notes``, ``profile``, ``episodes``, ...)."""
    unchanged: dict[str, int]
    """Items already there as the document has them, per kind."""
    skipped: list[str]
    """What the document held that is not imported, and why."""
    dry_run: bool


def _notes(document: Mapping[str, Any], skipped: list[str]) -> dict[str, dict[str, Any]]:
    """The document's notes as stored values (checked), by id."""
    notes = document.get("notes", [])
    if not isinstance(notes, list):
        raise InvalidInputError("notes is a list")
    if len(notes) > MAX_NOTES_PER_USER:
        raise NoteLimitError(f"the document has {len(notes)} notes; a user keeps at most {MAX_NOTES_PER_USER}")
    out: dict[str, dict[str, Any]] = {}
    for i, note in enumerate(notes):
        where = f"notes[{i}]"
        if not isinstance(note, Mapping):
            raise InvalidInputError(f"{where} is an object")
        value = note_of(note, where)
        if is_expired(value):
            skipped.append(f"{where}: expired")
        else:
            out[value["id"]] = value
    return out


def _profile(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    profile = document.get("profile", {})
    if not isinstance(profile, Mapping):
        raise InvalidInputError("profile is an object: field -> entry")
    out: dict[str, dict[str, Any]] = {}
    for field, entry in profile.items():
        where = f"profile.{field}"
        if not isinstance(entry, Mapping):
            raise InvalidInputError(f"{where} is an object with value, source, first_seen, updated_at")
        fields(entry, declared(ProfileEntry), where, "a profile field")
        with at(where):
            value = normalize_field(field, entry.get("value"))
        if value is None:
            raise InvalidInputError(f"{where}.value says nothing")
        out[field] = {
            "value": value,
            "source": source(entry.get("source", UNSOURCED), where),
            "first_seen": stamp(entry.get("first_seen"), f"{where}.first_seen"),
            "updated_at": stamp(entry.get("updated_at"), f"{where}.updated_at"),
        }
        if former := history(entry.get("history"), where, profile_entry(field)):
            out[field]["history"] = former
    return out


def _verbatim(document: Mapping[str, Any], skipped: list[str]) -> dict[str, dict[str, dict[str, Any]]]:
    other = document.get("other", {})
    if not isinstance(other, Mapping):
        raise InvalidInputError("other is an object: kind -> items")
    out: dict[str, dict[str, dict[str, Any]]] = {}
    count = 0
    for kind, items in other.items():
        if kind not in VERBATIM:
            skipped.append(f"other.{kind}: not memory an import restores")
            continue
        if not isinstance(items, list):
            raise InvalidInputError(f"other.{kind} is a list of items")
        count += len(items)  # every section's items together
        if count > MAX_IMPORT_ITEMS:
            raise InvalidInputError(f"the document has more than {MAX_IMPORT_ITEMS} items besides notes and profile")
        for i, item in enumerate(items):
            where = f"other.{kind}[{i}]"
            if not isinstance(item, Mapping) or not isinstance(item.get("value"), dict):
                raise InvalidInputError(f"{where} is an object with key and value")
            fields(item, declared(StoredItem), where, "an exported item")
            value = CHECKS[kind](json_value(item["value"], f"{where}.value"), f"{where}.value")
            out.setdefault(kind, {})[key(item.get("key"), f"{where}.key")] = value
    return out


async def aimport_user(
    store: BaseStore, user: User, document: Any, *, origin: Origin, dry_run: bool = False
) -> ImportReport:
    """Write the export ``document`` into ``user``'s memory (whoever it was
    exported from); with ``dry_run``, only say what would be written.

    Raises:
        InvalidInputError: not an export document, or any part of it invalid (nothing written).
        NoteLimitError: the user would hold more than :data:`MAX_NOTES_PER_USER` notes.
    """
    if not isinstance(document, Mapping) or document.get("format") != EXPORT_FORMAT:
        raise InvalidInputError(f"not an export document: its format is {EXPORT_FORMAT!r}")
    fields(document, declared(UserExport), "", "an export document")
    skipped = [f"{s}: not imported (the import is audited in the user's own trail)" for s in ("audit",)]
    skipped += [f"{s}: admin controls, not memory" for s in ("entitlements", "usage") if document.get(s)]
    notes, profile, verbatim = _notes(document, skipped), _profile(document), _verbatim(document, skipped)
    kinds = {NOTES: notes, PROFILE: profile, **verbatim}
    current = {kind: {it.key: it.value for it in await alist_all(store, user.namespace(kind))} for kind in kinds}
    written: dict[str, int] = {}
    unchanged: dict[str, int] = {}
    ops: list[PutOp] = []
    changed_notes: dict[str, dict[str, Any]] = {}
    for kind, values in kinds.items():
        for item_key, value in values.items():
            stored = current[kind].get(item_key)
            if same_note(stored, value) if kind in (NOTES, INVALIDATED_NOTES) else stored == value:
                unchanged[kind] = unchanged.get(kind, 0) + 1
                continue
            written[kind] = written.get(kind, 0) + 1
            if kind == NOTES:
                changed_notes[item_key] = value
            else:
                index = VERBATIM.get(kind, False)
                ops.append(PutOp(user.namespace(kind), item_key, value, index=index))
    if len({*current[NOTES], *notes}) > MAX_NOTES_PER_USER:
        raise NoteLimitError(f"the user would hold more than {MAX_NOTES_PER_USER} notes; nothing was imported")
    report = ImportReport(user_label=user.label, written=written, unchanged=unchanged, skipped=skipped, dry_run=dry_run)
    if dry_run or not written:
        return report
    # An invalidated note's sparse vector is derived, as a note's (mnemo.notes.arestore): made here, not taken.
    invalidated = user.namespace(INVALIDATED_NOTES)
    await astamp(cast(dict[str, Any], op.value) for op in ops if op.namespace == invalidated)
    record = audit_op(user, origin, "import", "*", after={"written": written, "from": document.get("user_label")})
    if changed_notes:
        await arestore(store, user, changed_notes, before=current[NOTES], extra=[*ops, record])
    else:
        await abatch_audited(store, [*ops, record])
    return report
