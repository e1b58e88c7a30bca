"""The parts of a snapshot besides the notes' recall, one registration each:
each kind's module defines its :class:`mnemo.core.Part` (its key, limits, reads,
parsing and prompt block); :mod:`mnemo.turn.snapshot` reads and builds the
snapshot, and renders the blocks, from :data:`PARTS` alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph.store.base import BaseStore, Op, Result

from mnemo.core import Ask, Block, Part
from mnemo.episodes import EPISODES_PART
from mnemo.notes import QUEUED_PART, SIMILAR_PART
from mnemo.profile import PROFILE_PART

#: The snapshot's parts besides recall, in the order their reads join the batch.
PARTS: tuple[Part, ...] = (
    PROFILE_PART,
    EPISODES_PART,
    SIMILAR_PART,
    QUEUED_PART,
)


def part_limits(given: dict[str, Any]) -> dict[str, Any]:
    """Every part's limits: ``given`` over the parts' defaults.

    Raises:
        TypeError: ``given`` names a limit no part takes (as for an unknown keyword).
    """
    defaults = {name: value for part in PARTS for name, value in part.limits.items()}
    if unknown := sorted(set(given) - set(defaults)):
        raise TypeError(f"no snapshot part takes {', '.join(unknown)}")
    return {**defaults, **given}


def part_budgets(given: dict[str, int]) -> dict[str, int]:
    """Every block's character budget: ``given`` over the blocks' defaults.

    Raises:
        TypeError: ``given`` names a budget no block takes.
    """
    defaults = {part.block.budget: part.block.default for part in PARTS if part.block is not None}
    if unknown := sorted(set(given) - set(defaults)):
        raise TypeError(f"no prompt block takes {', '.join(unknown)}")
    return {**defaults, **given}


def settings_of(context: object) -> tuple[dict[str, Any], dict[str, int]]:
    """The parts' limits and the blocks' budgets that ``context`` (a run's
    context, ``nodes.context.Context``) sets, each by the name the part takes."""
    limits = {name for part in PARTS for name in part.limits}
    budgets = {part.block.budget for part in PARTS if part.block is not None}
    return (
        {name: getattr(context, name) for name in sorted(limits) if hasattr(context, name)},
        {name: getattr(context, name) for name in sorted(budgets) if hasattr(context, name)},
    )


def turn_settings(given: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """``given`` split into the limits a snapshot takes and the blocks' budgets,
    the parts' limits over a turn's defaults (:attr:`mnemo.core.Part.turn_limits`):
    what a turn reads unless told otherwise. Names no part or block takes stay
    with the limits (the snapshot's own, or a ``TypeError`` from it)."""
    budgets = {part.block.budget for part in PARTS if part.block is not None}
    turn = {name: value for part in PARTS for name, value in part.turn_limits.items()}
    return (
        {**turn, **{k: v for k, v in given.items() if k not in budgets}},
        {k: v for k, v in given.items() if k in budgets},
    )


def part_names() -> list[str]:
    """The parts' names (their keys in a snapshot), in :data:`PARTS`' order."""
    return [part.name for part in PARTS]


def prompt_blocks() -> list[tuple[str, Block]]:
    """Each part's prompt block with the part's name, in :data:`PARTS`' order."""
    return [(part.name, part.block) for part in PARTS if part.block is not None]


def slots() -> list[str]:
    """The prompt's slots the parts' blocks fill."""
    return [block.slot for _, block in prompt_blocks()]


def part_ops(ask: Ask) -> list[tuple[Part, list[Op]]]:
    """Each part with its reads for ``ask``, in :data:`PARTS`' order (joined into one batch)."""
    return [(part, part.ops(ask)) for part in PARTS]


async def aparse_parts(
    store: BaseStore, ask: Ask, planned: Sequence[tuple[Part, list[Op]]], results: Sequence[Result]
) -> dict[str, Any]:
    """Every part's value by name, each part given back only its own ``results``
    (those of its reads in ``planned``, which ``results`` answer in order)."""
    values: dict[str, Any] = {}
    start = 0
    for part, ops in planned:
        values[part.name] = await part.parse(store, ask, results[start : start + len(ops)])
        start += len(ops)
    return values
