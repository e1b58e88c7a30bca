"""Who may do what through the server's REST API: pure rules, no server.

Plain functions of the caller and the request, so they are tested without a server;
a refusal is a :class:`Forbidden` (HTTP 403) saying why. A search is narrowed to the
user's own label, never widened. Raw store writes are an allow-list (:data:`FREE_KINDS`
under a user's label), default-deny: memory is written through mnemo alone
(``docs/write-path.md``). The access table: ``docs/security.md``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Literal

from mnemo.app import (
    APP,
    MAX_CONTEXT_BYTES,
    MAX_METADATA_BYTES,
    NOT_ISSUED,
    RESERVED_ROOTS,
    SHARED_ROOT,
    Caller,
    ClientWriteError,
    InvalidTokenError,
    MessageTooLongError,
    MnemoError,
    UnsupportedContentError,
    ValueTooLargeError,
    check_app_item,
    check_json_size,
    resolve_user,
)
from nodes.client_writes import check_command, check_new_messages

StoreAction = Literal["get", "search", "list_namespaces", "put", "delete"]
_READS = frozenset({"get", "search", "list_namespaces"})
_WRITES = frozenset({"put", "delete"})

#: Kinds under a user's label that raw store writes may change: the
#: application's own items, which mnemo never reads. Nothing else (allow-list).
FREE_KINDS = frozenset({APP})

#: Thread / cron metadata key holding the identity of the owner.
OWNER = "owner"

#: True while the platform's A2A route serves a request ``server/platform_guards.py``
#: checked: the runs that route creates (in-process, in this context) carry the
#: platform's A2A mark on the messages it made of the client's text parts.
PLATFORM_A2A: ContextVar[bool] = ContextVar("mnemo_platform_a2a", default=False)


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
    (:func:`mnemo.app.resolve_user`): a user's run naming another user is refused
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


def check_run_input(run_input: Any, command: Any = None, *, a2a: bool = False) -> None:
    """A run's ``input`` and ``command`` within the client's rule
    (:mod:`nodes.client_writes`): refused before the run is created, so
    an oversized or forbidden write costs the server nothing (the graph's state
    holds the same rule for routes that do not come through here). With ``a2a``
    (the platform's A2A route made the input: :data:`PLATFORM_A2A`) the input's
    messages may carry the platform's A2A mark.

    Raises:
        mnemo.core.MessageTooLongError: too many messages, or too long.
        mnemo.core.UnsupportedContentError: a content block that is not text.
        mnemo.core.ClientWriteError: a role, key, ``goto`` or ``resume`` a client may not send.
    """
    # Other input keys are not refused: the agent's input schema takes
    # ``messages`` alone, and the background writer's input is its thread id.
    check_new_messages(run_input.get("messages") if isinstance(run_input, Mapping) else None, a2a=a2a)
    check_command(command)


def check_run_request(caller: Caller, context: Any, run_input: Any, command: Any = None, *, a2a: bool = False) -> None:
    """A run a client asks for, whichever route creates it (the run routes, MCP
    ``tools/call``, A2A): its user (:func:`check_run_user`), then the sizes of its
    context and input (:func:`check_sizes`, :func:`check_run_input`, with ``a2a``).

    Raises:
        Forbidden: the context names another user (HTTP 403).
        mnemo.core.InvalidInputError: past a bound (:func:`refusal_status`: 413, 415, 422).
    """
    check_run_user(caller, context if isinstance(context, Mapping) else None)
    check_sizes(context=context)
    check_run_input(run_input, command, a2a=a2a)


def check_sizes(metadata: Any = None, context: Any = None) -> None:
    """Metadata of a thread, run or cron, and a run's context, within their bounds.

    Raises:
        mnemo.core.ValueTooLargeError: past :data:`mnemo.core.limits.MAX_METADATA_BYTES`
            or :data:`mnemo.core.limits.MAX_CONTEXT_BYTES`.
    """
    check_json_size("metadata", metadata, MAX_METADATA_BYTES)
    check_json_size("context", context, MAX_CONTEXT_BYTES)


def check_item_size(value: Any) -> None:
    """A store item a client writes, within :data:`mnemo.core.limits.MAX_APP_ITEM_BYTES`."""
    check_app_item(value)


def refusal_status(exc: MnemoError) -> int:
    """The HTTP status of a refused client write: 413 too large, 415 not text, 422 not the client's to write."""
    if isinstance(exc, MessageTooLongError | ValueTooLargeError):
        return 413
    if isinstance(exc, UnsupportedContentError):
        return 415
    return 422 if isinstance(exc, ClientWriteError) else 400


def authorize_assistants(caller: Caller, action: str) -> None:
    """Users read and search assistants; creating, changing and deleting them is for admins."""
    if action in ("read", "search") or caller.admin:
        return
    raise Forbidden(f"Only admins may {action} assistants")
