"""Feedback meant for every user: a proposal, never applied until an admin approves it.

A proposal lives in its author's own namespace (``(user_label, "proposals")``), so
only they and admins read it, and their export and erase cover it. It holds the
feedback, the rewrite the model made of the shared instructions, and its status:
``pending``, ``refused`` (the guardrails said no), ``approved`` or ``rejected`` (an
admin decided, recorded with who). Approval re-checks the guardrails and makes the
text the assistant's next version (:mod:`mnemo.instructions.assistant`), which carries
the text and the approver, nothing of the author. Every write is audited.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any, Literal, NotRequired, TypedDict

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore, PutOp

from mnemo.audit import Origin, abatch_audited, audit_op
from mnemo.core import PROPOSALS, RESERVED_ROOTS, InvalidInputError, User, alist_all, alist_every_namespace, now_iso
from mnemo.instructions.assistant import acommit_ops, alist_versions, arewrite, clean
from mnemo.instructions.hard_rules import MAX_INSTRUCTIONS_CHARS, check_rewrite

Status = Literal["pending", "refused", "approved", "rejected"]


class Proposal(TypedDict):
    id: str
    """``<author label>/<key>``: what ``python -m mnemo instructions approve`` takes."""
    author: str
    """The author's label."""
    assistant_id: str
    text: str
    """The shared instructions as they would read after approval."""
    change: str
    feedback: str
    """The author's words."""
    status: Status
    based_on_version: int
    """The version the rewrite started from (0: none)."""
    created_at: str
    refused_because: NotRequired[str]
    """Why the guardrails refused it (``refused``)."""
    rejected_because: NotRequired[str]
    """The admin's reason (``rejected``)."""
    decided_by: NotRequired[str]
    decided_at: NotRequired[str]
    version: NotRequired[int]
    """The version it became, once approved."""


def _proposal(label: str, key: str, value: dict[str, Any]) -> Proposal:
    return Proposal(id=f"{label}/{key}", author=label, **value)  # type: ignore[typeddict-item]


async def apropose(
    store: BaseStore,
    model: BaseChatModel,
    user: User,
    assistant_id: str,
    feedback: str,
    *,
    origin: Origin,
    personal: Iterable[str] = (),
    timeout_s: float,
) -> Proposal:
    """Turn ``feedback`` into a proposal: the model rewrites the assistant's
    current shared instructions, the guardrails (:func:`check_rewrite`, the
    author's ``personal`` words included) decide ``pending`` or ``refused``.
    Nothing shared changes.

    Raises:
        InvalidInputError: empty feedback, or no usable rewrite (nothing is written).
    """
    feedback = clean(feedback, "the feedback")[:1000]
    versions = await alist_versions(store, assistant_id)
    current = versions[-1] if versions else None
    rewrite = await arewrite(model, current["text"] if current else None, feedback, "everyone", timeout_s=timeout_s)
    why = check_rewrite(rewrite.instructions, personal=[user.id, user.label, *personal])
    key = f"p{uuid.uuid4().hex[:16]}"
    value: dict[str, Any] = {
        "assistant_id": str(assistant_id),
        "text": rewrite.instructions[: MAX_INSTRUCTIONS_CHARS * 2],
        "change": rewrite.change,
        "feedback": feedback,
        "status": "pending" if why is None else "refused",
        "based_on_version": current["version"] if current else 0,
        "created_at": now_iso(),
    }
    if why is not None:
        value["refused_because"] = why
    await abatch_audited(
        store,
        [
            PutOp(user.namespace(PROPOSALS), key, value, index=False),
            audit_op(user, origin, "proposal.add", key, after=value),
        ],
    )
    return _proposal(user.label, key, value)


async def alist_proposals(store: BaseStore, *, status: Status | None = "pending") -> list[Proposal]:
    """Every user's proposals (of ``status``; ``None``: all), oldest first. Admins only."""
    found: list[Proposal] = []
    # No max_depth: it would cut (label, "x", "proposals") to (label, "x"), another namespace.
    for ns in await alist_every_namespace(store, suffix=(PROPOSALS,)):
        if len(ns) != 2 or ns[0].lower() in RESERVED_ROOTS:
            continue
        found.extend(_proposal(ns[0], it.key, dict(it.value)) for it in await alist_all(store, ns))
    return sorted(
        (p for p in found if status is None or p["status"] == status), key=lambda p: (p["created_at"], p["id"])
    )


async def _aget(store: BaseStore, proposal_id: object) -> tuple[User, str, dict[str, Any]]:
    """The author, key and stored value of a pending proposal."""
    if not isinstance(proposal_id, str) or proposal_id.count("/") != 1:
        raise InvalidInputError(f"a proposal id is '<user label>/<key>' (see 'instructions list'), got {proposal_id!r}")
    label, key = proposal_id.split("/")
    author = User(id=label, label=label)  # a label is its own user for every namespace
    item = await store.aget(author.namespace(PROPOSALS), key) if label and key else None
    if item is None:
        raise InvalidInputError(f"no proposal {proposal_id!r}")
    if item.value["status"] != "pending":
        raise InvalidInputError(f"proposal {proposal_id!r} is {item.value['status']}, not pending")
    return author, key, dict(item.value)


def _decided(value: dict[str, Any], status: Status, by: str, **extra: Any) -> dict[str, Any]:
    return {**value, "status": status, "decided_by": by, "decided_at": now_iso(), **extra}


async def aapprove(store: BaseStore, proposal_id: str, *, origin: Origin, personal: Iterable[str] = ()) -> Proposal:
    """Make a pending proposal's text the assistant's next version, approved
    by ``origin.actor``, in one batch with the proposal's new status and its
    audit record. The guardrails are checked again (rules may have changed).

    Raises:
        InvalidInputError: no such pending proposal, or the guardrails refuse it now.
    """
    if not origin.actor:
        raise InvalidInputError("an approval needs the approver's identity")
    author, key, pending = await _aget(store, proposal_id)
    if (why := check_rewrite(pending["text"], personal=[author.id, *personal])) is not None:
        raise InvalidInputError(f"proposal {proposal_id!r} cannot be approved: {why}")
    ops, version = await acommit_ops(
        store, pending["assistant_id"], pending["text"], approved_by=origin.actor, reason=f"proposal {key}"
    )
    value = _decided(pending, "approved", origin.actor, version=version["version"])
    await abatch_audited(
        store,
        [
            *ops,
            PutOp(author.namespace(PROPOSALS), key, value, index=False),
            audit_op(author, origin, "proposal.approve", key, before="pending", after=value),
        ],
    )
    return _proposal(author.label, key, value)


async def areject(store: BaseStore, proposal_id: str, *, origin: Origin, reason: str = "") -> Proposal:
    """Close a pending proposal without applying it, recording who and why.

    Raises:
        InvalidInputError: no such pending proposal.
    """
    if not origin.actor:
        raise InvalidInputError("a rejection needs the admin's identity")
    author, key, pending = await _aget(store, proposal_id)
    value = _decided(pending, "rejected", origin.actor, rejected_because=clean(reason, "the reason")[:500])
    await abatch_audited(
        store,
        [
            PutOp(author.namespace(PROPOSALS), key, value, index=False),
            audit_op(author, origin, "proposal.reject", key, before="pending", after=value),
        ],
    )
    return _proposal(author.label, key, value)
