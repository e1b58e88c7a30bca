"""Who the memory belongs to: user ids, namespace labels and namespaces.

mnemo never hands a raw user id to the store: :func:`user_label` keeps a safe id
verbatim and maps any other to ``~`` + 32 hex digits of its SHA-256, deterministically,
never equal to a verbatim id. Who acts for whom is decided once, by :func:`resolve_user`,
from the :class:`Caller` the server verified, never from the model.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from mnemo.core.errors import InvalidInputError, InvalidTokenError, MissingUserError
from mnemo.core.namespaces import RESERVED_ROOTS

_VERBATIM = re.compile(r"[A-Za-z0-9_@+:\-]{1,128}")
#: Unpaired surrogates (a lone JSON escape such as \ud800): not text, and not encodable for hashing.
_SURROGATE = re.compile(r"[\ud800-\udfff]")

Role = Literal["user", "admin"]
ROLES: tuple[Role, ...] = ("user", "admin")
#: ``kind`` of LangGraph Studio's built-in user: not an identity mnemo issued.
STUDIO_USER = "StudioUser"
#: What a caller whose identity mnemo did not issue is told.
NOT_ISSUED = "This identity was not issued by mnemo; send 'Authorization: Bearer <token>'"


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


@dataclass(frozen=True, slots=True)
class Caller:
    """Who acts: an identity the server verified (a mnemo token's ``sub`` and ``role``)."""

    user_id: str
    role: Role = "user"

    @property
    def admin(self) -> bool:
        return self.role == "admin"

    @property
    def label(self) -> str:
        """The namespace label of this caller's own memory."""
        return user_label(self.user_id)

    @classmethod
    def of(cls, auth_user: Any, identity: object = None) -> Caller | None:
        """The caller the platform authenticated: what ``server.auth.authenticate``
        returned, as the auth handlers get it (``ctx.user``) and runs get it
        (``configurable["langgraph_auth_user"]``). ``None`` when nobody was: no
        identity (a server without auth, a compiled graph) or LangGraph Studio's
        built-in user. ``identity`` overrides the user object's own (runs
        carry it beside, as ``langgraph_auth_user_id``).

        Raises:
            InvalidTokenError: an identity mnemo did not issue (no mnemo role).
        """
        identity = identity if identity is not None else _field(auth_user, "identity")
        if not isinstance(identity, str) or not identity.strip() or _field(auth_user, "kind") == STUDIO_USER:
            return None
        role = _field(auth_user, "role")
        if role not in ROLES:
            raise InvalidTokenError(NOT_ISSUED)
        return cls(user_id=identity, role=cast(Role, role))


def run_caller(config: Mapping[str, Any] | None) -> Caller | None:
    """The :class:`Caller` the server authenticated for a run (its ``RunnableConfig``)."""
    configurable = (config or {}).get("configurable") or {}
    identity = configurable.get("langgraph_auth_user_id")
    return Caller.of(configurable.get("langgraph_auth_user"), identity) if identity else None


def resolve_user(caller: Caller | None, named_user_id: object) -> User:
    """The one rule of who acts for whom: whose memory ``caller`` reaches when
    the request (a run's ``context.user_id``, a route's ``user_id``) names
    ``named_user_id``.

    * nobody authenticated (``None``): the user named;
    * a user: themselves, whatever is named (the REST API refuses the
      naming of another user before, see ``server.access.check_run_user``);
    * an admin: the user named.

    Raises:
        MissingUserError: the user is to be named and none is.
        InvalidInputError: the named id is not a string.
    """
    if caller is not None and not caller.admin:
        return User.of(caller.user_id, authenticated=True)
    return User.of(cast(str, named_user_id or ""), authenticated=caller is not None)


def _field(obj: Any, name: str) -> Any:
    """``name`` of the platform's user object (attributes and mapping access) or a mapping."""
    value = getattr(obj, name, None)
    if value is None and callable(getattr(obj, "get", None)):
        value = obj.get(name)
    return value
