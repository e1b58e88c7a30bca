"""Who may do what through the server's REST API: pure rules, no server.

namespace                         user (own label)    admin
================================  ==================  =========================
``(own, ...)``                    read, write         read, write
``(own, "profile" | "notes" |     read (changes go    read, write
"episodes", ...)``                through the agent
                                  or ``/memory``)
``(own, "audit", ...)``           read                read, append a sealed
                                                      record, delete (erase);
                                                      never change one
``(own, "entitlements", ...)``    read                read, write
``(own, "usage", ...)``           read                read (nobody writes: the
                                                      graph counts)
``("org", ...)``                  read                read, write
``(another user, ...)``           refused             as for the owner
================================  ==================  =========================

A search or namespace listing with an empty prefix is narrowed to the user's
own label; with a foreign prefix it is refused. It is never widened.

The graph writes audit records and usage counters through the platform store
directly, which these rules do not see: they guard the REST routes only.
=======
Plain functions of the caller and the request, so they are tested without a server;
a refusal is a :class:`Forbidden` (HTTP 403) saying why. A search is narrowed to the
user's own label, never widened. The access table: ``docs/security.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mnemo.core import (
    AUDIT,
    ENTITLEMENTS,
    EPISODES,
    NOT_ISSUED,
    NOTES,
    PROFILE,
    SHARED_ROOT,
    USAGE,
    Caller,
    InvalidTokenError,
    MnemoError,
    check_new_messages,
    resolve_user,
)
from mnemo.kinds import is_sealed

StoreAction = Literal["get", "search", "list_namespaces", "put", "delete"]
_READS = frozenset({"get", "search", "list_namespaces"})
_WRITES = frozenset({"put", "delete"})

#: Kinds under a user's label that the API may read but only admins may write.
ADMIN_WRITTEN = frozenset({ENTITLEMENTS})
#: Kinds under a user's label that nobody may write through the API.
APPEND_ONLY = frozenset({AUDIT, USAGE})
#: Memory whose every change mnemo audits: a user changes it through the agent
#: or the console's ``/memory`` routes (which keep the trail), not by raw
#: store writes, which would leave no record. Admins' operator tools write it
#: (erase) and audit themselves.
AUDITED_MEMORY = frozenset({PROFILE, NOTES, EPISODES})

#: Thread / cron metadata key holding the identity of the owner.
OWNER = "owner"


class Forbidden(Exception):
    """The caller is authenticated but may not do this (HTTP 403)."""


def request_caller(user: Any) -> Caller:
    """The caller of a REST request, from the server's user object (what
    ``authenticate`` returned). Only identities from a verified mnemo token
    reach the handlers (studio auth is disabled); anything else is refused,
    not guessed.

    Raises:
        Forbidden: no identity, LangGraph Studio's built-in user, or an
            identity without a mnemo role.
    """
    try:
        caller = Caller.of(user)
    except InvalidTokenError:
        caller = None
    if caller is None:
        raise Forbidden(NOT_ISSUED)
    return caller


def authorize_store(
    caller: Caller,
    action: StoreAction,
    namespace: Sequence[str] | None,
    *,
    key: str | None = None,
    value: Any = None,
) -> tuple[str, ...]:
    """The namespace (prefix) the operation may use: ``namespace`` itself, or
    the caller's own label when a user searched or listed with no prefix.
    ``key`` and ``value`` are those of a put (an admin may append an audit
    record only under the key that seals its content, see :mod:`mnemo.kinds.audit`).

    Raises:
        Forbidden: the caller may not do ``action`` on ``namespace``.
    """
    if action not in _READS | _WRITES:
        raise Forbidden(f"Unknown store action {action!r}")
    ns = tuple(namespace or ())
    if not ns:
        if action in _WRITES:
            raise Forbidden("A store item needs a namespace")
        return () if caller.admin else (caller.label,)  # narrowed, never widened
    root, kind = ns[0], (ns[1] if len(ns) > 1 else None)
    # An admin's operator tools append sealed records (a put under a record's
    # key can only repeat it) and erase a user's trail with the rest of their
    # memory (audit records hold personal data); nobody can alter a record.
    admin_audit = (
        caller.admin
        and kind == AUDIT
        and len(ns) == 2
        and (action == "delete" or (action == "put" and key is not None and is_sealed(key, value)))
    )
    if action in _WRITES and kind in APPEND_ONLY and root != SHARED_ROOT and not admin_audit:
        raise Forbidden(
            f"Namespace ({root!r}, {kind!r}) is written by mnemo only; it cannot be changed through the API"
        )
    if caller.admin:
        if action == "put":
            check_admin_value(ns, key, value)
        return ns
    if root == SHARED_ROOT:
        if action in _WRITES:
            raise Forbidden("Shared knowledge ('org') is read-only for users; an admin token can change it")
        return ns
    if root != caller.label:
        raise Forbidden("This namespace belongs to another user; a user reaches only namespaces under their own label")
    if action in _WRITES and kind in ADMIN_WRITTEN:
        raise Forbidden(f"({root!r}, {kind!r}) is set by admins; a user may read it, not change it")
    if action in _WRITES and kind in AUDITED_MEMORY:
        raise Forbidden(
            f"({root!r}, {kind!r}) changes only through the agent or POST /memory/forget, which keep the audit "
            "trail; the store API reads it"
        )
    return ns


def check_admin_value(namespace: Sequence[str], key: str | None, value: Any) -> None:
    """An admin's put of an entitlement rule must be one mnemo can apply
    (:func:`mnemo.access.entitlements.validate_rule`): a typo is refused, not stored."""
    if len(namespace) == 2 and namespace[1] == ENTITLEMENTS and value is not None:
        from mnemo.access import validate_rule
        from mnemo.core import InvalidInputError

        try:
            validate_rule(str(key), value)
        except InvalidInputError as exc:
            raise Forbidden(f"Not stored: {exc}") from None


def owner_filter(caller: Caller) -> dict[str, str] | None:
    """The metadata filter that limits threads, runs and crons to their owner
    (``None``: admins see everything)."""
    return None if caller.admin else {OWNER: caller.user_id}


def stamp_owner(caller: Caller, value: Mapping[str, Any]) -> None:
    """Record the owner in the ``metadata`` of a thread / run / cron being
    created or updated. A user cannot claim another owner; an admin may create
    on behalf of a user (app backends), and owns what it creates otherwise."""
    metadata = value.get("metadata")
    if not isinstance(metadata, dict):
        return
    if caller.admin:
        if isinstance(metadata.get(OWNER), str) and metadata[OWNER]:
            return
    metadata[OWNER] = caller.user_id


def check_run_user(caller: Caller, context: Mapping[str, Any] | None) -> None:
    """A run may not name a user other than the one it acts for
    (:func:`mnemo.resolve_user`): a user's run naming another user is refused
    rather than silently re-targeted, so a client bug shows up instead of
    reading the wrong memory. An admin may name any user."""
    named = (context or {}).get("user_id")
    if named in (None, ""):
        return
    try:
        acting_for = resolve_user(caller, named).id
    except MnemoError:
        return  # an admin named no valid user: the run fails saying so
    if acting_for != named:
        raise Forbidden("context.user_id names another user; a user token runs only as its own user")


def check_run_input(run_input: Any) -> None:
    """A run's input messages within :func:`mnemo.core.limits.check_new_messages`:
    refused before the run is created, so an oversized input costs the server
    nothing (``load_memory`` checks the latest message again, for runs that do
    not come through the API).

    Raises:
        mnemo.core.MessageTooLongError: too many messages, or too long.
        mnemo.core.UnsupportedContentError: a content block that is not text.
    """
    check_new_messages(run_input.get("messages") if isinstance(run_input, Mapping) else None)


def authorize_assistants(caller: Caller, action: str) -> None:
    """Users read and search assistants; creating, changing and deleting them is for admins."""
    if action in ("read", "search") or caller.admin:
        return
    raise Forbidden(f"Only admins may {action} assistants")
