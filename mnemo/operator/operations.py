"""The operator commands' work, one function each, wherever the memory is.

``python -m mnemo`` runs an operation on PostgreSQL itself, or, with
``--url``, asks the server to run the same function on its own store
(``POST /memory/operator/<name>``, :mod:`web.operator`, admins only): the
store REST API refuses raw writes of memory (:mod:`server.access`), so every
write an operator makes goes through mnemo's functions and their audit
trail, whichever way it is reached.

An operation takes a :class:`Target` and the command's parameters by name
(``user_id``, ...), checks them (a route's body is input like any other) and
returns a JSON-serialisable document.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore

from mnemo.access import (
    aclear_entitlement,
    aerase_threads,
    aerase_user,
    aexport_user,
    aget_entitlements,
    aimport_user,
    amigrate_langgraph,
    aset_entitlement,
    ausage_today,
    source_items,
)
from mnemo.audit import Origin, averify
from mnemo.core import InvalidInputError, User, alist_users, check_message
from mnemo.episodes import apromote_episode
from mnemo.instructions import (
    DEFAULT_ASSISTANT,
    aapprove,
    alist_every_version,
    alist_proposals,
    alist_versions,
    amigrate_legacy,
    areject,
    arollback,
)
from mnemo.models import aload_chat_model, configured_memory_model
from mnemo.notes import arebuild, aremember, arestamp, expiry_from
from mnemo.profile import aget_profile, aupdate_profile
from mnemo.turn import aexplain
from mnemo.writing import MAX_CONSOLIDATION_CALLS, aconsolidate


@dataclass(frozen=True, kw_only=True)
class Target:
    """Where an operation runs and who asked."""

    store: BaseStore
    client: Any = None
    """A ``langgraph_sdk`` client of the server (threads), ``None`` on PostgreSQL."""
    actor: str
    """Who asked (``cli:<login>``, or the admin's identity), recorded in the audit trail."""
    route: str | None = None
    """How it was asked (``POST /memory/operator/import``), recorded in the audit trail."""

    @property
    def origin(self) -> Origin:
        return Origin(source="admin", actor=self.actor, route=self.route)


Operation = Callable[[Target, Mapping[str, Any]], Awaitable[Any]]
OPERATIONS: dict[str, Operation] = {}


def operation(name: str) -> Callable[[Operation], Operation]:
    def register(fn: Operation) -> Operation:
        OPERATIONS[name] = fn
        return fn

    return register


def _user(params: Mapping[str, Any]) -> User:
    return User.of(params.get("user_id"))  # type: ignore[arg-type]  # checked there: a string, not empty


def _flag(params: Mapping[str, Any], name: str) -> bool:
    value = params.get(name, False)
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} is true or false, got {value!r}")
    return value


def _text(params: Mapping[str, Any], name: str) -> str | None:
    value = params.get(name)
    if value is not None and not isinstance(value, str):
        raise InvalidInputError(f"{name} is a string, got {value!r}")
    return value


@operation("export")
async def export(target: Target, params: Mapping[str, Any]) -> Any:

    return await aexport_user(target.store, _user(params))


@operation("import")
async def import_(target: Target, params: Mapping[str, Any]) -> Any:
    """An export document (``document``) into the user's memory (:func:`mnemo.access.aimport_user`)."""

    return await aimport_user(
        target.store, _user(params), params.get("document"), origin=target.origin, dry_run=_flag(params, "dry_run")
    )


@operation("migrate-langgraph")
async def migrate_langgraph(target: Target, params: Mapping[str, Any]) -> Any:
    """A LangGraph memory app's items (namespace ``namespace_template``, read from
    the store, or given as ``items``) into the user's mnemo memory."""

    return await amigrate_langgraph(
        target.store,
        _user(params),
        _text(params, "namespace_template") or "",
        origin=target.origin,
        dry_run=_flag(params, "dry_run"),
        items=source_items(params["items"]) if params.get("items") is not None else None,
    )


@operation("remember")
async def remember(target: Target, params: Mapping[str, Any]) -> Any:
    """A note from an application (``text``, ``expires_at``, ``refers_to``), as ``POST /memory/notes``."""

    until = _text(params, "expires_at")
    return await aremember(
        target.store,
        _user(params),
        _text(params, "text") or "",
        source="app",
        origin=target.origin,
        expires_at=expiry_from(until=until) if until else None,
        refers_to=_text(params, "refers_to"),
    )


@operation("set-profile")
async def set_profile(target: Target, params: Mapping[str, Any]) -> Any:
    """Profile fields set by an application (``fields``: field -> value, ``None``
    deletes), as ``PATCH /memory/profile``."""

    fields = params.get("fields")
    if not isinstance(fields, dict) or not fields:
        raise InvalidInputError("fields is an object naming at least one profile field")
    user = _user(params)
    changes = await aupdate_profile(
        target.store,
        user,
        {f: v for f, v in fields.items() if v is not None},
        forget=[f for f, v in fields.items() if v is None],
        source="app",
        origin=target.origin,
    )
    return {"changes": changes, "profile": await aget_profile(target.store, user)}


@operation("search")
async def search(target: Target, params: Mapping[str, Any]) -> Any:
    """What ``load_memory`` would put in the prompt for the message ``q`` (:func:`mnemo.turn.aexplain`)."""

    query = _text(params, "q") or ""
    check_message(query)
    return await aexplain(target.store, _user(params), query)


@operation("erase")
async def erase(target: Target, params: Mapping[str, Any]) -> Any:

    if not _flag(params, "yes"):
        raise InvalidInputError("nothing is erased without yes=true (--yes)")
    threads = _flag(params, "threads")
    if threads and target.client is None:
        raise InvalidInputError("threads live in the server, not in the store: erase them with --url")
    user = _user(params)
    report: dict[str, Any] = dict(
        await aerase_user(
            target.store, user, origin=target.origin, include_entitlements=_flag(params, "include_entitlements")
        )
    )
    if threads:
        report["threads"] = await aerase_threads(target.client, user.id)
    return report


@operation("entitle")
async def entitle(target: Target, params: Mapping[str, Any]) -> Any:

    user, tool, allowed, limit = _user(params), _text(params, "tool"), params.get("allowed"), params.get("daily_limit")
    if allowed is not None and not isinstance(allowed, bool):
        raise InvalidInputError(f"allowed is true or false, got {allowed!r}")
    if _flag(params, "clear"):
        if allowed is not None or limit is not None:
            raise InvalidInputError("clear takes no allowed or daily_limit")
        await aclear_entitlement(target.store, user, tool, origin=target.origin)
    elif allowed is not None or limit is not None:
        allowed = True if allowed is None else allowed
        await aset_entitlement(target.store, user, tool, allowed=allowed, daily_limit=limit, origin=target.origin)
    rules = await aget_entitlements(target.store, user)
    return {
        "user_label": user.label,
        "rules": rules,
        "usage_today": await ausage_today(target.store, user),
        "default": "every tool allowed, no quota" if not rules else None,
    }


@operation("promote-episode")
async def promote_episode(target: Target, params: Mapping[str, Any]) -> Any:

    user, episode_id = _user(params), _text(params, "episode_id")
    if not episode_id:
        raise InvalidInputError("episode_id is required (export the user's memory to see them)")
    # The user's own profile values are personal data too: scrubbed with the id.
    personal = [entry["value"] for entry in (await aget_profile(target.store, user)).values()]
    return await apromote_episode(target.store, user, episode_id, promoted_by=target.actor, personal=personal)


@operation("reindex")
async def reindex(target: Target, params: Mapping[str, Any]) -> Any:

    every = _flag(params, "all")
    if every == (params.get("user_id") is not None):
        raise InvalidInputError("give one user id or all=true (--all)")
    # --all lists labels: a label is its own user for every namespace (User.of would map "~..." again).
    labels = await alist_users(target.store) if every else [_user(params).label]
    users = [User(id=label, label=label) for label in labels]
    return {
        "notes_indexed": {user.label: await arebuild(target.store, user) for user in users},
        "sparse_vectors_added": {user.label: await arestamp(target.store, user) for user in users},
    }


@operation("audit-verify")
async def audit_verify(target: Target, params: Mapping[str, Any]) -> Any:

    return await averify(target.store, _user(params))


@operation("consolidate")
async def consolidate(target: Target, params: Mapping[str, Any]) -> Any:
    """Merge the user's notes that say the same thing; list likely contradictions
    (:func:`mnemo.writing.aconsolidate`), with ``model`` (default: the extraction
    model where it runs; one of ``MNEMO_ALLOWED_MODELS``) and at most ``max_calls`` model calls."""

    spec = params.get("model") or configured_memory_model()
    if not isinstance(spec, str) or not spec.strip():
        raise InvalidInputError("no model: pass --model or set MNEMO_EXTRACTION_MODEL / MNEMO_MODEL")
    max_calls = params.get("max_calls", MAX_CONSOLIDATION_CALLS)
    if isinstance(max_calls, bool) or not isinstance(max_calls, int):
        raise InvalidInputError("max_calls is a whole number")
    # The server's one way to build a model: its allow list, timeouts, retries and output cap.
    model = await aload_chat_model(spec, memory=True)
    return await aconsolidate(
        target.store, _user(params), model, origin=target.origin, max_calls=min(max(1, max_calls), 20)
    )


# Learned instructions: proposals decided by an admin, the shared versions and rollback.


@operation("instructions-list")
async def instructions_list(target: Target, params: Mapping[str, Any]) -> Any:

    status = params.get("status", "pending")
    if status not in ("pending", "refused", "approved", "rejected", "all"):
        raise InvalidInputError(f"status is pending, refused, approved, rejected or all, got {status!r}")
    return {"proposals": await alist_proposals(target.store, status=None if status == "all" else status)}


@operation("instructions-approve")
async def instructions_approve(target: Target, params: Mapping[str, Any]) -> Any:

    proposal_id = _text(params, "id")
    label = (proposal_id or "").split("/")[0]
    # The author's profile values are personal data too: checked again at approval.
    personal = [e["value"] for e in (await aget_profile(target.store, User(id=label, label=label))).values()]
    return await aapprove(target.store, proposal_id or "", origin=target.origin, personal=personal)


@operation("instructions-reject")
async def instructions_reject(target: Target, params: Mapping[str, Any]) -> Any:

    proposal_id, reason = _text(params, "id") or "", _text(params, "reason") or ""
    return await areject(target.store, proposal_id, origin=target.origin, reason=reason)


@operation("instructions-versions")
async def instructions_versions(target: Target, params: Mapping[str, Any]) -> Any:

    if assistant := _text(params, "assistant_id"):
        return {"versions": {assistant: await alist_versions(target.store, assistant)}}
    return {"versions": await alist_every_version(target.store)}


@operation("instructions-rollback")
async def instructions_rollback(target: Target, params: Mapping[str, Any]) -> Any:

    to = params.get("version")
    if isinstance(to, bool) or not isinstance(to, int | str) or to == "":
        raise InvalidInputError("version is a version number or key (see 'instructions versions')")
    assistant = _text(params, "assistant_id") or DEFAULT_ASSISTANT
    return await arollback(target.store, assistant, to, approved_by=target.actor, reason=_text(params, "reason") or "")


@operation("instructions-migrate")
async def instructions_migrate(target: Target, params: Mapping[str, Any]) -> Any:

    return {"moved": await amigrate_legacy(target.store)}
