"""Where a memory write comes from: its :class:`Origin`, recorded with it in the
audit trail, and the :data:`Source` of a value a write stores.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from mnemo.core import InvalidInputError

AuditSource = Literal["user_said", "tool", "extractor", "admin"]
AUDIT_SOURCES: tuple[str, ...] = ("user_said", "tool", "extractor", "admin")

#: Where a value came from: the user's words, a tool call of the model, the
#: extractor's inference, or an application (the ``/memory`` REST routes).
Source = Literal["user_said", "tool", "inferred", "app"]
SOURCES: tuple[str, ...] = get_args(Source)

#: Who stated a value, as its prompt line says it (by its :data:`Source`): the user
#: (their words, or the model's tool call at their request), an application, a model's inference.
STATED_BY: dict[str, str] = {
    "user_said": "said",
    "tool": "said",
    "app": "set by an application",
    "inferred": "inferred",
}


def stated(source: object, first_seen: object = None) -> str:
    """Who stated a value and since when, for its prompt line: ``said 2026-11-30``,
    ``set by an application``, ``inferred 2026-12-01`` (:data:`STATED_BY`; a source it
    does not know is ``inferred``, never the user's words; no date when unknown)."""
    who = STATED_BY.get(str(source), "inferred")
    return f"{who} {str(first_seen)[:10]}" if first_seen else who


@dataclass(frozen=True, kw_only=True)
class Origin:
    """Where a memory write comes from, recorded with it in the audit trail."""

    source: AuditSource
    """``user_said`` (the user asked directly), ``tool`` (a tool call of the
    model), ``extractor`` (extraction after a turn) or ``admin``."""

    thread_id: str | None = None
    """Thread of the agent run that made the write, if any."""

    run_id: str | None = None
    """Run of the agent that made the write, if any."""

    actor: str | None = None
    """Identity of whoever acted for the user (an admin), if not the user; on a
    REST route, the caller's (the admin's or the user's own)."""

    route: str | None = None
    """The REST route of the write (``POST /memory/notes``), when it came through one."""

    def __post_init__(self) -> None:
        if self.source not in AUDIT_SOURCES:
            raise InvalidInputError(f"audit source must be one of {AUDIT_SOURCES}, got {self.source!r}")

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None, source: AuditSource) -> Origin:
        """The origin of a write made inside a graph run whose ``RunnableConfig``
        is ``config``: thread id from ``configurable``, run id from
        ``configurable`` or ``metadata`` (where the LangGraph server puts it)."""
        config = config or {}
        configurable = config.get("configurable") or {}
        metadata = config.get("metadata") or {}

        def pick(name: str) -> str | None:
            value = configurable.get(name) or metadata.get(name) or config.get(name)
            return str(value) if value else None

        return cls(source=source, thread_id=pick("thread_id"), run_id=pick("run_id"))


def default_origin(source: Source) -> Origin:
    """The audit origin of a write from ``source`` when the caller names none
    (``inferred`` is the extractor's; ``app`` an admin's)."""
    return Origin(source={"inferred": "extractor", "app": "admin"}.get(source, source))  # type: ignore[arg-type]
