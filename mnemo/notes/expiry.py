"""Time-bound memories: notes that are only true for a while.

A note may carry ``expires_at``; every read filters on it with :func:`live` and the
sweeps delete expired notes, since no backend's TTL can be relied on to hide them.
:data:`clock` is the one source of "now" for expiry.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, TypeVar

from langgraph.store.base import BaseStore, Item, PutOp

from mnemo.core import NOTES, InvalidInputError, User, alist_all, alist_users
from mnemo.notes import index as note_index

#: Longest validity a time-bound note may have; past that it is a durable fact.
MAX_VALIDITY = timedelta(days=366)

#: Returns the current UTC time. Replace in tests (``monkeypatch``) to move time.
clock: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731

T = TypeVar("T", bound=Item)


def now() -> datetime:
    return clock()


def parse_expiry(value: str | datetime | date) -> datetime:
    """An absolute expiry as an aware UTC datetime. A bare date means the end
    of that day (UTC): "until Friday" is still true on Friday.

    Raises:
        InvalidInputError: not an ISO date/datetime.
    """
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, date):
        dt = datetime.combine(value, time.max)
    else:
        text = str(value).strip()
        try:
            dt = datetime.fromisoformat(text)
        except ValueError:
            raise InvalidInputError(f"expiry {text!r} is not an ISO date or datetime (e.g. 2026-12-04)") from None
        if len(text) <= 10:  # a date only
            dt = datetime.combine(dt.date(), time.max)
    return dt.replace(tzinfo=UTC) if dt.tzinfo is None else dt.astimezone(UTC)


def expiry_from(*, valid_for_days: float | None = None, until: str | datetime | date | None = None) -> str | None:
    """``expires_at`` (UTC ISO) for a note valid ``valid_for_days`` from now or
    ``until`` a moment; ``None`` when neither is given (a durable note).

    Raises:
        InvalidInputError: both given, a non-positive or absurd duration, an
            expiry in the past or more than :data:`MAX_VALIDITY` ahead.
    """
    if valid_for_days is None and until is None:
        return None
    if valid_for_days is not None and until is not None:
        raise InvalidInputError("give either a duration or an end date, not both")
    current = now()
    if valid_for_days is not None:
        if not isinstance(valid_for_days, int | float) or not math.isfinite(valid_for_days) or valid_for_days <= 0:
            raise InvalidInputError(f"valid_for_days must be a positive number, got {valid_for_days!r}")
        if valid_for_days > MAX_VALIDITY.days:
            raise InvalidInputError(
                f"a time-bound note lasts at most {MAX_VALIDITY.days} days; store a durable note instead"
            )
        at = current + timedelta(days=float(valid_for_days))
    else:
        at = parse_expiry(until)  # type: ignore[arg-type]
        if at <= current:
            raise InvalidInputError(f"the end date {until!r} is already past; nothing time-bound to remember")
        if at - current > MAX_VALIDITY:
            raise InvalidInputError(
                f"a time-bound note lasts at most {MAX_VALIDITY.days} days; store a durable note instead"
            )
    return at.isoformat()


def ttl_minutes(expires_at: str | None) -> float | None:
    """Store TTL matching ``expires_at`` (minutes from now, at least 1), or ``None``."""
    if not expires_at:
        return None
    return max(1.0, (parse_expiry(expires_at) - now()).total_seconds() / 60)


def is_expired(value: Any, at: datetime | None = None) -> bool:
    """Whether a stored value carries an ``expires_at`` that is past. A value
    with an unreadable ``expires_at`` counts as expired (never served stale)."""
    expires = value.get("expires_at") if isinstance(value, dict) else None
    if not expires:
        return False
    try:
        return parse_expiry(expires) <= (at or now())
    except InvalidInputError:
        return True


def live(items: Iterable[T], at: datetime | None = None) -> list[T]:
    """``items`` without the expired ones."""
    at = at or now()
    return [it for it in items if not is_expired(it.value, at)]


def expired(items: Iterable[T], at: datetime | None = None) -> list[T]:
    at = at or now()
    return [it for it in items if is_expired(it.value, at)]


async def adelete_notes(store: BaseStore, user: User, notes: Mapping[str, Mapping[str, Any]]) -> int:
    """Delete these notes of ``user`` (id -> stored value) with their entries
    in the write-time index (:mod:`mnemo.notes.index`), in two round trips;
    returns how many. A raw delete would leave the index listing them."""
    if not notes:
        return 0
    ns = user.namespace(NOTES)
    changes = [note_index.NoteChange(key=key, before=value, after=None) for key, value in notes.items()]
    await note_index.aapply(store, user, changes, extra=[PutOp(ns, key, None) for key in notes])
    return len(notes)


async def asweep_user(store: BaseStore, user: User) -> int:
    """Delete the user's expired notes; returns how many."""
    stale = expired(await alist_all(store, user.namespace(NOTES)))
    return await adelete_notes(store, user, {it.key: it.value for it in stale})


async def asweep_all(store: BaseStore) -> int:
    """Delete every user's expired notes (for a periodic job: a user who never
    comes back is never swept by ``load_memory``); returns how many."""
    total = 0
    for label in await alist_users(store):
        total += await asweep_user(store, User(id=label, label=label))  # the label is all a sweep needs
    return total
