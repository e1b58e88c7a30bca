"""Step 1: read what is remembered about the user, and what each memory kind
adds (similar past cases), for the model to see (``mnemo.turn.snapshot``: one
batch, a second round trip for notes only the words found, two more when
expired notes were met); and, in the same read, the notes this turn's
extractor is shown."""

from __future__ import annotations

import logging

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from mnemo.app import (
    MAX_EXISTING_NOTES,
    ForeignThreadError,
    aload_snapshot,
    check_message,
    render_blocks,
    render_snapshot,
    settings_of,
    slots,
    stamp_said_at,
)
from nodes.context import Context, current_user, memory_store
from nodes.state import State

logger = logging.getLogger(__name__)

#: Write modes whose extractor reads this turn's words (not ``hot``: the tools write).
EXTRACTING_MODES = ("after_turn", "background")


async def load_memory(state: State, runtime: Runtime[Context]) -> dict:
    user = current_user(runtime.context)  # no user: the run fails here, before any model call
    if state.get("owner", user.label) != user.label:
        # Otherwise the other user's words would be extracted into this user's memory.
        raise ForeignThreadError("This thread belongs to another user; start a new thread.")
    latest = next((m for m in reversed(state["messages"]) if isinstance(m, HumanMessage)), None)
    if latest is not None:
        check_message(latest.text)  # before any work: the embedder's cost grows with the text
    ctx = runtime.context
    stamped = stamp_said_at(state["messages"], state.get("said_at"))
    update = {"said_at": stamped} if stamped is not None else {}
    limits, budgets = settings_of(ctx)  # the memory kinds' own, by name (mnemo.turn.parts)
    try:
        snapshot = await aload_snapshot(
            memory_store(runtime),
            user,
            latest.text if latest is not None else "",
            recall_limit=ctx.recall_limit,
            recent_limit=ctx.recent_limit,
            recall_margin=ctx.recall_margin,
            **limits,
            # The extractor of this turn's words (after this run, or the background
            # writer reading this thread) is shown these (mnemo.writing.known).
            similar_limit=MAX_EXISTING_NOTES if ctx.memory_write_mode in EXTRACTING_MODES else 0,
        )
    except Exception as exc:  # a failing store must not cost the user an answer
        logger.exception("load_memory failed; answering without long-term memory")
        return {
            **update,
            "owner": user.label,
            "similar_notes": None,
            "blocks": dict.fromkeys(slots(), ""),
            # The model is told, so it tells the user; what they say now stays
            # pending (write_memory's cursor) and is extracted once the store is back.
            "memory": (
                f"(long-term memory is unavailable this turn: {type(exc).__name__}; do not guess, "
                "and tell the user you cannot see what they told you before right now)"
            ),
        }
    return {
        **update,
        "owner": user.label,
        "similar_notes": (
            [{"id": n["id"], "text": n["text"]} for n in snapshot["similar"]]
            if ctx.memory_write_mode in EXTRACTING_MODES
            else None
        ),
        "queued_notes": snapshot["queued"],
        "memory": render_snapshot(snapshot, char_budget=ctx.memory_char_budget),
        "blocks": render_blocks(snapshot, **budgets),
    }
