"""What an import document may hold: each part checked by the function of the write path it
stands for (:func:`mnemo.notes.note_value`, :func:`mnemo.profile.normalize_field`,
:func:`mnemo.instructions.check_own_item`, :func:`mnemo.episodes.check_episode`,
:func:`mnemo.core.check_app_item`), so an import holds no more than the memory's own writes
would; the first part that fails is named by its path in the document
(``other.instructions[0].value.text: too long: ...``). Every part, whatever its kind, passes
through :func:`fields`: a key the part's type does not declare is refused by its path (as the
checks of instructions and episodes refuse one), and a field named as an id (:func:`is_id`) is
checked as an id wherever it stands."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from mnemo.audit import SOURCES
from mnemo.core import (
    APP,
    EPISODES,
    INSTRUCTIONS,
    INVALIDATED_NOTES,
    InvalidInputError,
    check_app_item,
)
from mnemo.episodes import check_episode
from mnemo.instructions import check_own_item
from mnemo.notes import (
    Note,
    NoteHistoryEntry,
    note_value,
    parse_expiry,
    validate_context,
    validate_note,
    validate_refers_to,
)
from mnemo.profile import MAX_HISTORY, HistoryEntry, normalize_field

_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,128}")
#: The source of a note or profile value the document gives none: the importer's statement
#: (an application's, as the prompt says), never the user's words.
UNSOURCED = "app"


@contextmanager
def at(where: str) -> Iterator[None]:
    """Name ``where`` in the message of an :class:`InvalidInputError` raised inside (once)."""
    try:
        yield
    except InvalidInputError as exc:
        message = str(exc)
        raise type(exc)(message if message.startswith(where) else f"{where}: {message}") from None


def key(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _KEY.fullmatch(value):
        raise InvalidInputError(f"{where}: an id is 1-128 letters, digits or _.:-, got {str(value)[:60]!r}")
    return value


def is_id(name: str) -> bool:
    """Whether a part's field named ``name`` holds an id (``id``, ``key``, ``merged_into``, ``*_id``)."""
    return name in ("id", "key", "merged_into") or name.endswith("_id")


def ids(value: Mapping[str, Any], where: str) -> None:
    """Check every id-like field (:func:`is_id`) of the part ``value`` at ``where`` as an id
    (``None`` or ``""``: none, as an episode recorded outside a thread has no ``thread_id``)."""
    for name, field in value.items():
        if isinstance(name, str) and is_id(name) and field not in (None, ""):
            key(field, f"{where}.{name}")


def fields(value: Mapping[str, Any], known: Collection[str], where: str, what: str) -> None:
    """Refuse a key of the part ``value`` at ``where`` that ``what`` does not have (``known``),
    named by its path, then check its ids (:func:`ids`): nothing a document holds is dropped unread."""
    for name in value:
        if name not in known:
            raise InvalidInputError(f"{where}.{str(name)[:40]}: not a field of {what}".lstrip("."))
    ids(value, where)


def declared(kind: type, *, without: Collection[str] = ()) -> frozenset[str]:
    """The keys a ``TypedDict`` declares, but ``without``."""
    return frozenset(kind.__annotations__) - set(without)


def stamp(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value or len(value) > 40:
        raise InvalidInputError(f"{where}: a time is an ISO string, got {str(value)[:60]!r}")
    return value


def source(value: Any, where: str) -> str:
    if value not in SOURCES:
        raise InvalidInputError(f"{where}.source is one of {SOURCES}, got {str(value)[:40]!r}")
    return str(value)


def history(value: Any, where: str, entry: Callable[[Mapping[str, Any], str], dict[str, Any]]) -> list[dict[str, Any]]:
    """The former values at ``where.history``, each checked by ``entry``."""
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_HISTORY:
        raise InvalidInputError(f"{where}.history is a list of at most {MAX_HISTORY} former values")
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise InvalidInputError(f"{where}.history[{i}] is an object")
        out.append(entry(item, f"{where}.history[{i}]"))
    return out


def note_entry(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
    """A note's former text as :mod:`mnemo.notes.revise` keeps it."""
    with at(where):
        fields(entry, declared(NoteHistoryEntry), where, "a note's former text")
        out = {"text": validate_note(entry.get("text")), "source": source(entry.get("source"), where)}
        out["until"] = stamp(entry.get("until"), f"{where}.until")
        for name in ("first_seen", "thread_id"):
            if entry.get(name) is not None:
                out[name] = stamp(entry[name], f"{where}.{name}") if name == "first_seen" else entry[name]
        if day := validate_refers_to(entry.get("refers_to")):
            out["refers_to"] = day
        if entry.get("expires_at"):
            out["expires_at"] = parse_expiry(stamp(entry["expires_at"], f"{where}.expires_at")).isoformat()
    return out


def profile_entry(field: str) -> Callable[[Mapping[str, Any], str], dict[str, Any]]:
    """A profile field's former value as :func:`mnemo.profile.plan_profile_update` keeps it."""

    def check(entry: Mapping[str, Any], where: str) -> dict[str, Any]:
        with at(where):
            fields(entry, declared(HistoryEntry), where, "a profile field's former value")
            if (value := normalize_field(field, entry.get("value"))) is None:
                raise InvalidInputError("value says nothing")
            until = stamp(entry.get("until"), f"{where}.until")
            return {"value": value, "source": source(entry.get("source"), where), "until": until}

    return check


#: The fields of a note (as :func:`mnemo.access.aexport_user` writes one).
NOTE_FIELDS = declared(Note, without={"score"})
#: The fields of a stored note an export holds besides those :func:`note_of` reads.
_DERIVED = frozenset({"norm", "indexed_text", "sparse"})
#: The fields of an invalidated note (a stored note, when it ended, what replaced it).
INVALIDATED_FIELDS = NOTE_FIELDS | _DERIVED | {"invalidated_at", "merged_into"}


def _context(value: Any) -> None:
    validate_context(value, strict=True)


def note_of(note: Mapping[str, Any], where: str, known: Collection[str] = NOTE_FIELDS) -> dict[str, Any]:
    """A note of the document as stored by :func:`mnemo.notes.note_value` (its derived
    fields computed again, never taken from the document), of the fields ``known``."""
    fields(note, known, where, "a note" if known is NOTE_FIELDS else "an invalidated note")
    for name, check in (("text", validate_note), ("context", _context), ("refers_to", validate_refers_to)):
        with at(f"{where}.{name}"):
            check(note.get(name))  # each part named on its own; note_value checks them all again
    with at(where):
        note_id = key(note.get("id"), f"{where}.id")
        extra = {f: note[f] for f in ("expires_at", "refers_to", "context") if note.get(f)}
        return note_value(
            note_id,
            note.get("text"),  # type: ignore[arg-type]  # checked there: a string
            source=source(note.get("source", UNSOURCED), where),
            first_seen=stamp(note.get("first_seen"), f"{where}.first_seen"),
            updated_at=stamp(note.get("updated_at"), f"{where}.updated_at"),
            history=history(note.get("history"), where, note_entry),
            **extra,
        )


def _invalidated(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    """An invalidated note (:func:`mnemo.notes.plan_revision`): a note, when it ended, what replaced it."""
    out = note_of(value, where, INVALIDATED_FIELDS)
    out["invalidated_at"] = stamp(value.get("invalidated_at"), f"{where}.invalidated_at")
    if value.get("merged_into") is not None:
        out["merged_into"] = value["merged_into"]  # an id: checked by note_of's fields
    return out


def _app(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    check_app_item(value, where)
    return dict(value)


def _own(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    out = check_own_item(value, where)  # refuses a key an item of its kind does not have
    ids(value, where)
    return out


def _episode(value: Mapping[str, Any], where: str) -> dict[str, Any]:
    out = dict(check_episode(value, where))  # refuses a key an episode does not have
    ids(value, where)
    return out


#: How each section of ``other`` an import restores is checked (the item's value, its path):
#: each refuses a key its kind does not have and checks its ids (an app item's value is the
#: application's own JSON, bounded as the store API bounds it).
CHECKS: dict[str, Callable[[Mapping[str, Any], str], dict[str, Any]]] = {
    INVALIDATED_NOTES: _invalidated,
    INSTRUCTIONS: _own,
    EPISODES: _episode,
    APP: _app,
}
