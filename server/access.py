"""Who may do what through the server's REST API: pure rules, no server.

:mod:`server.auth` hands every request to these functions; they are plain
functions of the caller and the request so they can be tested without a
server. A refusal is a :class:`Forbidden` (HTTP 403) whose message says why.

Store namespaces (the first label is always the owner, see
:mod:`mnemo.core.identity`): reads reach the caller's own label (an admin's:
every label, and ``("org", ...)`` for everyone). Raw writes (``PUT`` /
``DELETE /store/items``) are an allow-list, default-deny:

=================================  ================  ==========================
namespace                          user              admin
=================================  ================  ==========================
``(own label, "app", ...)``        read, write       read, write (any user's)
every other namespace              read (own, org)   read
=================================  ================  ==========================

Every memory kind (profile, notes, note index, episodes, instructions,
audit, usage, entitlements, shared knowledge, and any kind added later) is
written only through mnemo's audited paths: the agent, the ``/memory/*``
routes (:mod:`web.memory`, :mod:`web.operator`) and ``python -m mnemo``. A raw
write would leave no audit record, or put into a derived kind (the note
index) what the prompt then shows as a note.

A search or namespace listing with an empty prefix is narrowed to the user's
own label; with a foreign prefix it is refused. It is never widened.

The graph and the custom routes write through the platform store directly,
which these rules do not see: they guard the REST routes only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from mnemo.core import (
    POLICIES_NAMESPACE,
    RESERVED_ROOTS,
    check_message,
    field_of,
    user_label,
)

StoreAction = Literal["get", "search", "list_namespaces", "put", "delete"]
_READS = frozenset({"get", "search", "list_namespaces"})
_WRITES = frozenset({"put", "delete"})

SHARED_ROOT = POLICIES_NAMESPACE[0]  # "org": shared knowledge
#: Kinds under a user's label that raw store writes may change: the
#: application's own items, which mnemo never reads. Nothing else (allow-list).
FREE_KINDS = frozenset({"app"})

#: Thread / cron metadata key holding the identity of the owner.
OWNER = "owner"


class Forbidden(Exception):
    """The caller is authenticated but may not do this (HTTP 403)."""


@dataclass(frozen=True, slots=True)
class Caller:
    """The authenticated identity of a request."""

    user_id: str
    admin: bool = False

    @property
    def label(self) -> str:
        return user_label(self.user_id)

    @classmethod
    def of(cls, user: Any) -> Caller:
        """From the server's user object (what ``authenticate`` returned)."""
        role = field_of(user, "role")
        if field_of(user, "kind") == "StudioUser" or role not in ("user", "admin"):
            # Only identities from a verified mnemo token reach the handlers
            # (studio auth is disabled); anything else is refused, not guessed.
            raise Forbidden("This identity was not issued by mnemo; send 'Authorization: Bearer <token>'")
        return cls(user_id=user.identity, admin=role == "admin")


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
    """A user's run may not name another user: refused rather than silently
    re-targeted, so a client bug shows up instead of reading the wrong memory.
    (The graph uses the token's user anyway, see :func:`mnemo.resolve_user`.)
    An admin may name any user."""
    named = (context or {}).get("user_id")
    if caller.admin or named in (None, "", caller.user_id):
        return
    raise Forbidden("context.user_id names another user; a user token runs only as its own user")


def check_run_input(run_input: Any) -> None:
    """A run's input messages, each at most :data:`mnemo.core.limits.MAX_MESSAGE_CHARS`
    long: refused before the run is created, so an oversized message costs
    the server nothing (``load_memory`` checks again, for runs that do not come
    through the API).

    Raises:
        mnemo.core.limits.MessageTooLongError: a message is too long.
    """
    messages = run_input.get("messages") if isinstance(run_input, Mapping) else None
    if isinstance(messages, Mapping | str):
        messages = [messages]
    for message in messages if isinstance(messages, list) else []:
        content = message.get("content") if isinstance(message, Mapping) else message
        if isinstance(content, list):  # content blocks: their text parts count
            content = "".join(str(part.get("text", "")) if isinstance(part, Mapping) else str(part) for part in content)
        if isinstance(content, str):
            check_message(content)


def authorize_assistants(caller: Caller, action: str) -> None:
    """Users read and search assistants; creating, changing and deleting them is for admins."""
    if action in ("read", "search") or caller.admin:
        return
    raise Forbidden(f"Only admins may {action} assistants")
