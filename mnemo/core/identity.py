"""Who the memory belongs to: user ids, namespace labels and namespaces.

mnemo never hands a raw user id to the store: :func:`user_label` keeps a safe id
verbatim and maps any other to ``~`` + 32 hex digits of its SHA-256, deterministically,
never equal to a verbatim id. The id comes from trusted context, never from the model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mnemo.core.errors import InvalidInputError, MissingUserError

#: Roots used by shared namespaces (and by the platform). A user with one of
#: these ids is mapped, so a prefix search over the user's data can never reach
#: shared data.
RESERVED_ROOTS = frozenset({"org", "agent", "langgraph", "mnemo"})

_VERBATIM = re.compile(r"[A-Za-z0-9_@+:\-]{1,128}")
#: Unpaired surrogates (a lone JSON escape such as \ud800): not text, and not encodable for hashing.
_SURROGATE = re.compile(r"[\ud800-\udfff]")

PROFILE = "profile"
NOTES = "notes"
AUDIT = "audit"
ENTITLEMENTS = "entitlements"
USAGE = "usage"

#: Role of an authenticated caller that may act for the user a run names
#: (``langgraph_auth_user["role"]``, set by the server from a verified token).
ADMIN_ROLE = "admin"

#: Shared, read-only organisation knowledge.
POLICIES_NAMESPACE: tuple[str, ...] = ("org", "policies")


def user_label(user_id: str) -> str:
    """Return the namespace label that holds ``user_id``'s memories.

    Raises:
        MissingUserError: ``user_id`` is empty or only whitespace.
        InvalidInputError: ``user_id`` is not a string (``123``) or holds an
            unpaired surrogate.
    """
    if user_id is not None and not isinstance(user_id, str):
        raise InvalidInputError(f"a user id is a string, got {type(user_id).__name__}: send it as a JSON string")
    if isinstance(user_id, str) and _SURROGATE.search(user_id):
        raise InvalidInputError(
            "the user id contains an unpaired UTF-16 surrogate, which is not text; send valid Unicode"
        )
    if not isinstance(user_id, str) or not user_id.strip():
        raise MissingUserError(
            "No user id: pass context={'user_id': ...} with the run (mnemo has no shared default user)."
        )
    if _VERBATIM.fullmatch(user_id) and user_id.lower() not in RESERVED_ROOTS:
        return user_id
    return "~" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class User:
    """A resolved user: the id as given, and the label its namespaces use."""

    id: str
    label: str
    authenticated: bool = False

    @classmethod
    def of(cls, user_id: str, *, authenticated: bool = False) -> User:
        return cls(id=user_id, label=user_label(user_id), authenticated=authenticated)

    def namespace(self, kind: str) -> tuple[str, str]:
        """``(label, kind)``: the user first, so ``(label,)`` prefixes all of it."""
        return (self.label, kind)

    @property
    def root(self) -> tuple[str]:
        """Prefix of every namespace of this user (export / delete everything)."""
        return (self.label,)


def resolve_user(context: Any, config: Mapping[str, Any] | None) -> User:
    """The one place that decides whose memory a run reads and writes.

    Args:
        context: the run's context object (``runtime.context``); its
            ``user_id`` attribute (or key) is what the client sent.
        config: the run's ``RunnableConfig``. When the server authenticated the
            caller, ``configurable.langgraph_auth_user_id`` holds that identity
            and **wins** over the client's ``user_id``, except for an
            identity whose ``langgraph_auth_user`` has role
            :data:`ADMIN_ROLE`: an admin acts for the ``user_id`` the run
            names (and, naming none, fails like everyone else). The
            unauthenticated placeholder (empty identity) and LangGraph
            Studio's built-in user do not count as an authenticated identity.

    Raises:
        MissingUserError: neither source has a user id.
    """
    configurable = (config or {}).get("configurable") or {}
    auth_id = configurable.get("langgraph_auth_user_id")
    auth_user = configurable.get("langgraph_auth_user")
    studio = field_of(auth_user, "kind") == "StudioUser"
    if isinstance(auth_id, str) and auth_id.strip() and not studio:
        if field_of(auth_user, "role") == ADMIN_ROLE:
            return User.of(field_of(context, "user_id") or "", authenticated=True)
        return User.of(auth_id, authenticated=True)
    return User.of(field_of(context, "user_id") or "")


def field_of(obj: Any, name: str) -> Any:
    """Read ``name`` from a dataclass, a mapping or the platform's user object."""
    value = getattr(obj, name, None)
    if value is None and callable(getattr(obj, "get", None)):
        value = obj.get(name)
    return value
