"""Entitlements: which tools a user may have the model call, and how often.

One rule per item in ``(user_label, "entitlements")``; no rule means no restriction.
Usage is one item per call in ``(user_label, "usage")``, never read-modified-written,
so admitted calls never exceed a quota (why: ``docs/design.md``, Access).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict

from langgraph.store.base import BaseStore, PutOp

from mnemo.audit import Origin, abatch_audited, audit_op
from mnemo.core import ENTITLEMENTS, USAGE, InvalidInputError, User, alist_all

logger = logging.getLogger(__name__)

#: Key of the rule that covers every tool without its own rule, and the daily total.
ALL_TOOLS = "*"
#: Minutes a usage item lives where the store supports TTLs (counting uses today only).
USAGE_TTL_MINUTES = 2 * 24 * 60


class Rule(TypedDict):
    """One entitlement rule as stored."""

    allowed: bool
    daily_limit: int | None
    """Calls per UTC day: of this tool, or (for ``"*"``) of all tools together.
    ``None``: no quota."""
    updated_at: str
    updated_by: str | None


Entitlements = dict[str, Rule]
"""Rule key (``"*"`` or ``"tool:<name>"``) -> rule; empty = no restriction."""


class Usage(TypedDict):
    """One call of a tool, as stored under ``(user_label, "usage")``."""

    tool: str
    day: str
    at: str
    thread_id: str | None
    run_id: str | None


class Decision(TypedDict):
    allowed: bool
    reason: str
    """Why a call was refused, phrased for the model to relay; ``""`` when allowed."""
    usage_key: NotRequired[str]
    """The reservation written for an admitted call under a quota."""


def rule_key(tool: str | None) -> str:
    """``"*"`` for ``None`` (all tools), else ``"tool:<name>"``."""
    if tool is None:
        return ALL_TOOLS
    if not isinstance(tool, str) or not tool.strip() or tool == ALL_TOOLS:
        raise InvalidInputError(f"a tool name is a non-empty string, got {tool!r}")
    return f"tool:{tool}"


def today(now: datetime | None = None) -> str:
    return (now or datetime.now(UTC)).strftime("%Y-%m-%d")


def validate_rule(key: str, value: Any) -> None:
    """Refuse a stored rule mnemo could not apply: the key is ``"*"`` or
    ``"tool:<name>"``, the value has a boolean ``allowed`` and a ``daily_limit``
    that is a non-negative integer or ``None``. Applied to every rule read, so
    one written around mnemo is not applied.

    Raises:
        InvalidInputError: what is wrong, phrased for the admin.
    """
    if key != ALL_TOOLS and not (isinstance(key, str) and key.startswith("tool:") and key[5:].strip()):
        raise InvalidInputError(f"an entitlement key is '*' or 'tool:<name>', got {key!r}")
    if not isinstance(value, dict) or not isinstance(value.get("allowed"), bool):
        raise InvalidInputError(f"an entitlement rule is {{'allowed': bool, 'daily_limit': int | None}}, got {value!r}")
    _check_limit(value.get("daily_limit"))


def _check_limit(daily_limit: Any) -> None:
    if daily_limit is not None and (
        not isinstance(daily_limit, int) or isinstance(daily_limit, bool) or daily_limit < 0
    ):
        raise InvalidInputError(f"daily_limit is a non-negative integer or None, got {daily_limit!r}")


async def aget_entitlements(store: BaseStore, user: User) -> Entitlements:
    """Every rule of the user (empty: everything allowed, no quota).

    A stored rule mnemo cannot apply (written around :func:`validate_rule`)
    fails closed: under a rule key it denies that tool (or every tool, for
    ``"*"``), under any other key it is ignored; both are logged."""
    rules: Entitlements = {}
    for it in await alist_all(store, user.namespace(ENTITLEMENTS)):
        try:
            validate_rule(it.key, it.value)
        except InvalidInputError as exc:
            logger.warning("unusable entitlement %r of %s: %s", it.key, user.label, exc)
            if it.key == ALL_TOOLS or it.key.startswith("tool:"):
                rules[it.key] = Rule(allowed=False, daily_limit=None, updated_at="", updated_by=None)
            continue
        rules[it.key] = Rule(
            allowed=it.value["allowed"],
            daily_limit=it.value.get("daily_limit"),
            updated_at=str(it.value.get("updated_at", "")),
            updated_by=it.value.get("updated_by"),
        )
    return rules


async def aset_entitlement(
    store: BaseStore,
    user: User,
    tool: str | None = None,
    *,
    allowed: bool = True,
    daily_limit: int | None = None,
    origin: Origin,
) -> Rule:
    """Set the rule of ``tool`` (``None``: the default for all tools and the
    daily total). Replaces that rule only; appends an audit record in the same
    batch. Admin-only (``python -m mnemo entitle``; the store API writes no
    entitlement), and ``origin`` says who acted.

    Raises:
        InvalidInputError: a bad tool name, or a ``daily_limit`` that is not a
            non-negative integer.
    """
    key = rule_key(tool)
    _check_limit(daily_limit)
    before = (await aget_entitlements(store, user)).get(key)
    rule = Rule(
        allowed=bool(allowed),
        daily_limit=daily_limit,
        updated_at=datetime.now(UTC).isoformat(),
        updated_by=origin.actor,
    )
    await abatch_audited(
        store,
        [
            PutOp(user.namespace(ENTITLEMENTS), key, dict(rule), index=False),
            audit_op(user, origin, "entitlement.set", key, before=_public(before), after=_public(rule)),
        ],
    )
    return rule


async def aclear_entitlement(store: BaseStore, user: User, tool: str | None = None, *, origin: Origin) -> bool:
    """Remove the rule of ``tool`` (``None``: the ``"*"`` rule); ``False`` if there was none."""
    key = rule_key(tool)
    before = (await aget_entitlements(store, user)).get(key)
    if before is None:
        return False
    await abatch_audited(
        store,
        [
            PutOp(user.namespace(ENTITLEMENTS), key, None),
            audit_op(user, origin, "entitlement.clear", key, before=_public(before)),
        ],
    )
    return True


def _public(rule: Rule | None) -> dict | None:
    return None if rule is None else {"allowed": rule["allowed"], "daily_limit": rule["daily_limit"]}


def _limits(rules: Entitlements, tool: str) -> tuple[bool, int | None, int | None]:
    """``(allowed, the tool's daily limit, the daily total)`` for ``tool``."""
    own, default = rules.get(rule_key(tool)), rules.get(ALL_TOOLS)
    allowed = own["allowed"] if own else default["allowed"] if default else True
    return allowed, own["daily_limit"] if own else None, default["daily_limit"] if default else None


async def ausage_today(store: BaseStore, user: User, *, now: datetime | None = None) -> dict[str, int]:
    """Calls per tool today (UTC), counted from the per-call items."""
    counts: dict[str, int] = {}
    for it in await alist_all(store, user.namespace(USAGE), filter={"day": today(now)}):
        counts[it.value["tool"]] = counts.get(it.value["tool"], 0) + 1
    return counts


def _refusal(rules: Entitlements, tool: str, used: dict[str, int]) -> str:
    """Why ``tool`` may not be called now given today's ``used`` counts; ``""`` if it may."""
    allowed, tool_limit, total_limit = _limits(rules, tool)
    if not allowed:
        return (
            f"The tool {tool!r} is not enabled for this user; nothing was done. "
            "Tell the user it is not available to them."
        )
    if tool_limit is not None and used.get(tool, 0) > tool_limit:
        return (
            f"The daily limit of {tool_limit} calls of {tool!r} for this user is used up; nothing was done. "
            "Tell the user it can be used again tomorrow (UTC)."
        )
    if total_limit is not None and sum(used.values()) > total_limit:
        return (
            f"The daily limit of {total_limit} tool calls for this user is used up; nothing was done. "
            "Tell the user tools can be used again tomorrow (UTC)."
        )
    return ""


async def aavailable_tools(store: BaseStore, user: User, tools: Iterable[str]) -> list[str]:
    """The tools of ``tools`` the user may call now: allowed and under quota.

    What the model is offered; :func:`aadmit` still decides each call (a quota
    may run out between the two)."""
    tools = list(tools)
    rules = await aget_entitlements(store, user)
    if not rules:
        return tools
    used = await ausage_today(store, user) if any(r["daily_limit"] is not None for r in rules.values()) else {}
    # One more call of each must fit: count it as already made.
    return [t for t in tools if not _refusal(rules, t, {**used, t: used.get(t, 0) + 1})]


async def aadmit(store: BaseStore, user: User, tool: str, *, origin: Origin | None = None) -> Decision:
    """Decide one call of ``tool`` and, when admitted, count it.

    A refused call writes nothing (its reservation, if any, is removed).
    """
    rules = await aget_entitlements(store, user)
    allowed, tool_limit, total_limit = _limits(rules, tool)
    if not allowed:
        return Decision(allowed=False, reason=_refusal(rules, tool, {}))
    now = datetime.now(UTC)
    key = f"{today(now)}:{tool}:{uuid.uuid4().hex}"
    usage = Usage(
        tool=tool,
        day=today(now),
        at=now.isoformat(),
        thread_id=origin.thread_id if origin else None,
        run_id=origin.run_id if origin else None,
    )
    ns = user.namespace(USAGE)
    ttl = USAGE_TTL_MINUTES if store.supports_ttl else None
    await store.abatch([PutOp(ns, key, dict(usage), index=False, ttl=ttl)])
    if tool_limit is None and total_limit is None:
        return Decision(allowed=True, reason="", usage_key=key)
    reason = _refusal(rules, tool, await ausage_today(store, user, now=now))
    if reason:
        await store.abatch([PutOp(ns, key, None)])
        return Decision(allowed=False, reason=reason)
    return Decision(allowed=True, reason="", usage_key=key)
