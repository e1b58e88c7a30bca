"""Migration from the layouts LangGraph's memory templates write, into mnemo's kinds.

* memory-agent: ``("memories", <user_id>)``, one item per memory, ``{"content", "context"}``
  (its ``upsert_memory`` tool, a random UUID key);
* memory-template: ``(<user_id>, "events", "Note")``, the same shape (its insert-mode ``Note``
  schema), and ``(<user_id>, "user_states", "User")`` key ``"memory"``, one profile document
  (its patch-mode ``User`` schema: ``user_name``, ``age``, ``interests``, ``home``,
  ``occupation``, ``conversation_preferences``).

Each item of the namespace (the template with ``{user_id}`` filled in) is read for what its
value is: a memory becomes a note (its context kept as the note's context), a profile document
becomes the profile fields mnemo has (``user_name`` -> name, ``home`` -> city when it is one)
and notes for the rest. A model wrote all of it, so the source is ``inferred``: what the user
says, or an application sets, replaces it. Through mnemo's write path (dedupe, index, audit),
as one write (profile and notes in one batch), so running it twice adds nothing; the items read
are left in place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple, TypedDict

from langgraph.store.base import BaseStore, PutOp

from mnemo.audit import Origin
from mnemo.core import InvalidInputError, User, alist_all
from mnemo.notes import MAX_NOTE_CHARS, aremember_many
from mnemo.profile import aprofile_ops, normalize_field

#: The placeholder of the user's id in a namespace template.
USER_PLACEHOLDER = "{user_id}"
#: memory-template's profile fields that are mnemo's: mnemo's name, and the label of
#: the note a value becomes when the profile's own write path refuses it (a home
#: described at length is no city).
PROFILE_MAP = {"user_name": ("name", "Name"), "home": ("city", "Home")}
#: The rest of its ``User`` document, each kept as a note ("Occupation: ...").
NOTE_FIELDS = {
    "age": "Age",
    "occupation": "Occupation",
    "interests": "Interests",
    "conversation_preferences": "Conversation preferences",
}


class SourceItem(NamedTuple):
    """An item of the app migrated from: its key, value and when it was created (ISO)."""

    key: str
    value: Any
    created_at: str


def source_items(items: Any) -> list[SourceItem]:
    """Items read elsewhere (``python -m mnemo import --source-url``: ``{key, value, created_at}`` each).

    Raises:
        InvalidInputError: not a list of such objects.
    """
    if not isinstance(items, list):
        raise InvalidInputError("items is a list of {key, value, created_at}")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("key"), str):
            raise InvalidInputError(f"items[{i}] is an object with a key, a value and created_at")
        out.append(SourceItem(item["key"], item.get("value"), str(item.get("created_at") or "")))
    return out


class MigrationPlan(TypedDict):
    namespace: list[str]
    items: int
    notes: list[dict[str, str | None]]
    """``{"text", "context"}`` per note to write."""
    profile: dict[str, str]
    skipped: list[str]
    """Items (by key) that are neither a memory nor a profile document."""


class MigrationReport(MigrationPlan):
    dry_run: bool
    notes_written: dict[str, int]
    """Per outcome of mnemo's write path: ``stored``, ``duplicate``, ``refined``."""
    profile_changes: list[Any]


def namespace_of(template: str, user_id: str) -> tuple[str, ...]:
    """The namespace ``template`` (labels joined by ``/``, :data:`USER_PLACEHOLDER` for the user) names.

    Raises:
        InvalidInputError: no placeholder, or an empty label.
    """
    if not isinstance(template, str) or USER_PLACEHOLDER not in template:
        raise InvalidInputError(
            f"the namespace template names the user as {USER_PLACEHOLDER}, e.g. memories/{{user_id}}"
        )
    labels = tuple(part.strip().replace(USER_PLACEHOLDER, user_id) for part in template.split("/"))
    if not all(labels):
        raise InvalidInputError(f"the namespace template {template!r} has an empty label")
    return labels


def _text(value: Any) -> str | None:
    if isinstance(value, list):
        value = ", ".join(str(v) for v in value if v not in (None, ""))
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = str(value)
    return value.strip() or None if isinstance(value, str) else None


def plan_items(items: Sequence[SourceItem], namespace: tuple[str, ...]) -> MigrationPlan:
    """What the items of ``namespace`` become in mnemo (pure; oldest first)."""
    plan = MigrationPlan(namespace=list(namespace), items=len(items), notes=[], profile={}, skipped=[])
    for item in sorted(items, key=lambda it: (it.created_at, it.key)):
        value: Mapping[str, Any] = item.value if isinstance(item.value, Mapping) else {}
        content = _text(value.get("content"))
        if content:
            plan["notes"].append({"text": content[:MAX_NOTE_CHARS], "context": _text(value.get("context"))})
        elif any(k in value for k in (*PROFILE_MAP, *NOTE_FIELDS)):
            for theirs, (ours, label) in PROFILE_MAP.items():
                if not (text := _text(value.get(theirs))):
                    continue
                try:  # the profile's own check (length, storable text, "unknown" says nothing)
                    field = normalize_field(ours, text)
                except InvalidInputError:  # kept whole, as a note of its own field
                    plan["notes"].append({"text": f"{label}: {text}"[:MAX_NOTE_CHARS], "context": None})
                    continue
                if field is not None:
                    plan["profile"][ours] = field
            for theirs, label in NOTE_FIELDS.items():
                if text := _text(value.get(theirs)):
                    plan["notes"].append({"text": f"{label}: {text}"[:MAX_NOTE_CHARS], "context": None})
        else:
            plan["skipped"].append(item.key)
    return plan


async def amigrate_langgraph(
    store: BaseStore,
    user: User,
    template: str,
    *,
    origin: Origin,
    dry_run: bool = False,
    items: Sequence[SourceItem] | None = None,
) -> MigrationReport:
    """Write the LangGraph memory items of ``user`` (namespace ``template``) into mnemo's kinds;
    with ``dry_run``, only say what would be written. The items are read from ``store``
    unless given (read from the app's own server: ``python -m mnemo import --source-url``).

    Raises:
        InvalidInputError: a bad template, or an item's text mnemo cannot store (nothing written).
    """
    namespace = namespace_of(template, user.id)
    if items is None:
        items = [SourceItem(it.key, it.value, it.created_at.isoformat()) for it in await alist_all(store, namespace)]
    plan = plan_items(items, namespace)
    report = MigrationReport(**plan, dry_run=dry_run, notes_written={}, profile_changes=[])
    if dry_run:
        return report
    # One write: the profile's puts go in the notes' batch (all of it or nothing).
    profile_ops: list[PutOp] = []
    if plan["profile"]:
        profile_ops, changes, _ = await aprofile_ops(store, user, plan["profile"], source="inferred", origin=origin)
        report["profile_changes"] = list(changes)
    results = await aremember_many(
        store,
        user,
        [str(n["text"]) for n in plan["notes"]],
        contexts=[n["context"] for n in plan["notes"]],
        source="inferred",
        origin=origin,
        extra=profile_ops,
    )
    for result in results:
        report["notes_written"][result["status"]] = report["notes_written"].get(result["status"], 0) + 1
    return report
