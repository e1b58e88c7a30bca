"""What a memory kind adds to the snapshot a turn reads (``mnemo.turn.snapshot``):
a :class:`Part` names its key, the limits it takes, the reads it adds to the
snapshot's one batch, how it reads its own results back and the prompt block
it renders, if any. Each kind's module defines its part; ``mnemo/turn/parts.py``
lists them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import BaseStore, Op, Result

from mnemo.core.identity import User


@dataclass(frozen=True)
class Ask:
    """What a snapshot is read for: the user, the (bounded) query and every part's limits by name."""

    user: User
    query: str
    limits: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Block:
    """A prompt block a part renders on its own: the prompt's slot for it (its key in
    the graph's state and in ``mnemo.turn.aexplain``), the keyword of its character
    budget (``<name>_char_budget``, with its default), its rendering, the tag of its
    data block in the system prompt and how the prompt names what it holds
    (``"<tag> " + about``, e.g. ``are past cases``)."""

    slot: str
    budget: str
    default: int
    render: Callable[[Any, int], str]
    tag: str
    about: str

    def __post_init__(self) -> None:
        if not self.budget.endswith("_char_budget"):
            raise ValueError(f"a block's budget is named <name>_char_budget, not {self.budget!r}")

    @property
    def chars(self) -> str:
        """The key of the characters it rendered, beside its budget's (``episode_chars``)."""
        return self.budget.removesuffix("_char_budget") + "_chars"


@dataclass(frozen=True)
class Part:
    """One part of a snapshot: its key, its limits (keyword and default), its reads
    for an :class:`Ask`, its reading of their results (given only its own), the
    prompt block it renders, if it renders one apart from the memory block, and a
    turn's defaults of its limits where they differ from a library call's
    (``nodes.context.Context``'s; ``tests/turn/test_parts.py`` holds them equal)."""

    name: str
    ops: Callable[[Ask], list[Op]]
    parse: Callable[[BaseStore, Ask, Sequence[Result]], Awaitable[Any]]
    limits: Mapping[str, Any] = field(default_factory=dict)
    block: Block | None = None
    turn_limits: Mapping[str, Any] = field(default_factory=dict)
