"""Step 1b: keep a long thread under its token budget (``mnemo.turn.history``):
extract what is leaving the window, summarise it (or not), remove it. Taken
only when the thread is over its budget (:func:`route_after_load`): a turn
under it goes straight to the model, without a step (and a checkpoint) of its own."""

from __future__ import annotations

import logging

from langchain_core.messages import RemoveMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from mnemo.app import Origin, aextract_messages, asummarize, plan_compaction
from nodes.chat_models import aload_memory_model
from nodes.context import Context, current_user, memory_store
from nodes.state import State

logger = logging.getLogger(__name__)


def route_after_load(state: State, runtime: Runtime[Context]) -> str:
    """``compact_history`` when the thread is over its token budget, else ``call_model``."""
    ctx = runtime.context
    over = plan_compaction(state["messages"], budget=ctx.history_token_budget, summary=state.get("summary"))
    return "compact_history" if over else "call_model"


async def compact_history(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    messages = state["messages"]
    summary = state.get("summary")
    cut = plan_compaction(messages, budget=ctx.history_token_budget, summary=summary)
    if not cut:
        return {}
    dropped = messages[:cut]
    cursor = state.get("memory_cursor", 0)
    failures = state.get("memory_failures", 0)
    try:
        if ctx.memory_write_mode != "hot":
            # What leaves the window is extracted first; a backlog longer than
            # one turn's calls (or a failure) defers the compaction, keeping
            # what was written (the model reads a window of the thread meanwhile).
            cursor, failures = await aextract_messages(
                memory_store(runtime),
                current_user(runtime.context),
                lambda: aload_memory_model(ctx),
                messages,
                cursor,
                cut,
                failures=failures,
                said_at=state.get("said_at"),
                timeout_s=ctx.extraction_timeout_s,
                origin=Origin.from_config(get_config(), "extractor"),
            )
            if cursor < cut:
                logger.warning("messages leaving the window are not all extracted yet; compacting later")
                return {"memory_cursor": cursor, "memory_failures": failures}
        if ctx.history_strategy == "summarize":
            summary = await asummarize(
                await aload_memory_model(ctx),
                summary,
                dropped,
                timeout_s=ctx.extraction_timeout_s,
            )
            if summary is None:
                return {"memory_cursor": cursor, "memory_failures": failures}
    except Exception:
        logger.exception("compacting the thread failed; keeping every message for now")
        return {}
    gone = {m.id for m in dropped}
    update = {
        "messages": [RemoveMessage(id=m.id) for m in dropped if m.id],
        "memory_cursor": max(cursor, cut) - cut,
        "memory_failures": failures,
        "said_at": {k: v for k, v in (state.get("said_at") or {}).items() if k not in gone},
    }
    if ctx.history_strategy == "summarize":
        update["summary"] = summary
    return update
