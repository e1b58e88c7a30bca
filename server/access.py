"""Who may do what through the server's REST API: pure rules, no server.

Plain functions of the caller and the request, so they are tested without a server;
a refusal is a :class:`Forbidden` (HTTP 403) saying why. A search is narrowed to the
user's own label, never widened. Raw store writes are an allow-list (:data:`FREE_KINDS`
under a user's label), default-deny: memory is written through mnemo alone
(``docs/write-path.md``). The access table: ``docs/security.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from mnemo.core import (
    APP,
    NOT_ISSUED,
    RESERVED_ROOTS,
    SHARED_ROOT,
    Caller,
    InvalidTokenError,
    MnemoError,
    check_new_messages,
    resolve_user,
)

StoreAction = Literal["get", "search", "list_namespaces", "put", "delete"]
_READS = frozenset({"get", "search", "list_namespaces"})
_WRITES = frozenset({"put", "delete"})

#: Kinds under a user's label that raw store writes may change: the
#: application's own items, which mnemo never reads. Nothing else (allow-list).
FREE_KINDS = frozenset({APP})

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
) -> tuple[str, ...]:
    """The namespace (prefix) the operation may use: ``namespace`` itself, or
    the caller's own label when a user searched or listed with no prefix.

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
    if not caller.admin and root != SHARED_ROOT and root != caller.label:
        raise Forbidden("This namespace belongs to another user; a user reaches only namespaces under their own label")
    if action in _READS:
        return ns
    if root.lower() not in RESERVED_ROOTS and kind in FREE_KINDS:  # under a user's label
        return ns
    raise Forbidden(
        f"({root!r}, {kind!r}) is memory: it changes only through the agent, the /memory routes or "
        f"'python -m mnemo', which keep the audit trail; raw store writes reach only {sorted(FREE_KINDS)} "
        "under a user's label"
    )


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
