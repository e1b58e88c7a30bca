"""A user's own procedural memory: how the agent treats this user, learned from their feedback.

Kept in ``(user_label, "instructions")``: every accepted text is a new version (the
``head`` names the current one), a refused rewrite is recorded with the reason, each
write is audited in the same batch. Applied to this user's runs only, shown to the
model as quoted data below the hard rules; exported and erased with the user.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, Literal, NotRequired, TypedDict

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore, PutOp

from mnemo.audit import Origin, abatch_audited, audit_op
from mnemo.core import INSTRUCTIONS, InvalidInputError, User, alist_all, now_iso
from mnemo.instructions.assistant import HEAD, arewrite, clean, head_text, instructions_head_op
from mnemo.instructions.hard_rules import MAX_INSTRUCTIONS_CHARS, check_rewrite

#: Longest feedback kept with a version (the start of a longer one).
MAX_FEEDBACK_CHARS = 1000
#: Longest text of a refused rewrite kept, to show what was refused.
MAX_REFUSED_CHARS = 2 * MAX_INSTRUCTIONS_CHARS
#: The fields of each kind of item, and the longest each string may be (``None``: a version number).
_FIELDS: dict[str, dict[str, int | None]] = {
    HEAD: {"kind": 16, "key": 64, "version": None, "text": MAX_INSTRUCTIONS_CHARS},
    "version": {
        "kind": 16,
        "version": None,
        "text": MAX_INSTRUCTIONS_CHARS,
        "feedback": MAX_FEEDBACK_CHARS,
        "created_at": 40,
    },
    "rejected": {
        "kind": 16,
        "text": MAX_REFUSED_CHARS,
        "feedback": MAX_FEEDBACK_CHARS,
        "rejected_because": MAX_REFUSED_CHARS,
        "created_at": 40,
    },
}


def check_own_item(value: Mapping[str, Any], where: str = "the item") -> dict[str, Any]:
    """``value`` as an item of a user's own instructions as :func:`alearn_for_user`
    writes them: a version or the head within the guardrails (:func:`check_rewrite`,
    the user's own: length and hard rules), a refused rewrite within its bounds.

    Raises:
        InvalidInputError: anything else, saying which field (``where.field``).
    """
    fields = _FIELDS.get(str(value.get("kind")))
    if fields is None:
        raise InvalidInputError(f"{where}.kind: one of {sorted(_FIELDS)}, got {str(value.get('kind'))[:40]!r}")
    if value["kind"] != "rejected" and (why := check_rewrite(str(value.get("text", "")), shared=False)):
        raise InvalidInputError(f"{where}.text: {why}")
    for name, field in value.items():
        if name not in fields:
            raise InvalidInputError(f"{where}.{str(name)[:40]}: not a field of an item of kind {value['kind']!r}")
        limit = fields[name]
        if limit is None and (isinstance(field, bool) or not isinstance(field, int) or field < 1):
            raise InvalidInputError(f"{where}.{name}: a version number (1, 2, ...)")
        if limit is not None and (not isinstance(field, str) or len(field) > limit):
            raise InvalidInputError(f"{where}.{name}: a string of at most {limit} characters")
    return dict(value)


class OwnVersion(TypedDict):
    id: str
    version: int
    text: str
    feedback: str
    """The user's words that led to it."""
    created_at: str


class OwnResult(TypedDict):
    """``accepted``: a new version; ``unchanged``: same text as now; ``rejected``: refused, recorded."""

    status: Literal["accepted", "unchanged", "rejected"]
    version: NotRequired[OwnVersion]
    rejected_because: NotRequired[str]


async def aget_own(store: BaseStore, user: User) -> tuple[str, int] | None:
    """The user's current own instructions and their version (``None``: none)."""
    ns = user.namespace(INSTRUCTIONS)
    (found,) = await store.abatch([instructions_head_op(ns)])
    return head_text(ns, found)


async def alist_own(store: BaseStore, user: User) -> list[dict[str, Any]]:
    """Every version and refused rewrite of the user's own instructions, oldest first."""
    items = await alist_all(store, user.namespace(INSTRUCTIONS))
    return sorted(
        ({"id": it.key, **it.value} for it in items if it.key != HEAD),
        key=lambda v: (v.get("created_at", ""), v["id"]),
    )


async def alearn_for_user(
    store: BaseStore,
    model: BaseChatModel,
    user: User,
    feedback: str,
    *,
    origin: Origin,
    timeout_s: float,
) -> OwnResult:
    """Rewrite the user's own instructions to take ``feedback`` into account,
    through the guardrails (:func:`check_rewrite`: length, hard rules; the
    user's own data may stay, only they see it). A refusal is recorded.

    Raises:
        InvalidInputError: empty feedback, or no usable rewrite (nothing is written).
    """
    feedback = clean(feedback, "the feedback")[:MAX_FEEDBACK_CHARS]
    current = await aget_own(store, user)
    rewrite = await arewrite(model, current[0] if current else None, feedback, "me", timeout_s=timeout_s)
    text, ns, now = rewrite.instructions, user.namespace(INSTRUCTIONS), now_iso()
    if current is not None and current[0] == text:
        return OwnResult(status="unchanged")
    if (why := check_rewrite(text, shared=False)) is not None:
        key = f"rejected-{uuid.uuid4().hex}"
        value: dict[str, Any] = {
            "kind": "rejected",
            "text": text[:MAX_REFUSED_CHARS],
            "feedback": feedback,
            "rejected_because": why,
            "created_at": now,
        }
        await abatch_audited(
            store,
            [PutOp(ns, key, value, index=False), audit_op(user, origin, "instructions.refuse", key, after=value)],
        )
        return OwnResult(status="rejected", rejected_because=why)
    number = (current[1] if current else 0) + 1  # the head carries the latest version's number
    key = f"v{number:06d}-{uuid.uuid4().hex[:8]}"
    value = {"kind": "version", "version": number, "text": text, "feedback": feedback, "created_at": now}
    head = {"kind": HEAD, "key": key, "version": number, "text": text}
    await abatch_audited(
        store,
        [
            PutOp(ns, key, value, index=False),
            PutOp(ns, HEAD, head, index=False),
            audit_op(user, origin, "instructions.learn", key, before=current[0] if current else None, after=text),
        ],
    )
    return OwnResult(
        status="accepted",
        version=OwnVersion(id=key, version=number, text=text, feedback=feedback, created_at=now),
    )
