"""Step 1b: keep a long thread under its token budget (``mnemo.turn.history``):
extract what is leaving the window, summarise it (or not), remove it."""

from __future__ import annotations

import logging

from langchain_core.messages import RemoveMessage
from langgraph.runtime import Runtime

from mnemo.turn import asummarize, plan_compaction
from mnemo.writing import MAX_PENDING_MESSAGES, aextract_pending, pending
from nodes.chat_models import aload_chat_model
from nodes.context import Context, current_user, memory_store
from nodes.state import State

logger = logging.getLogger(__name__)


async def compact_history(state: State, runtime: Runtime[Context]) -> dict:
    ctx = runtime.context
    messages = state["messages"]
    summary = state.get("summary")
    cut = plan_compaction(messages, budget=ctx.history_token_budget, summary=summary)
    if not cut:
        return {}
    dropped = messages[:cut]
    cursor = state.get("memory_cursor", 0)
    said = pending(messages, cursor, cut) if ctx.memory_write_mode != "hot" else []
    try:
        if said:
            model = await aload_chat_model(ctx.extraction_model or ctx.model)
            user = current_user(runtime.context)
            for i in range(0, len(said), MAX_PENDING_MESSAGES):  # all of them, not only the latest
                if not await aextract_pending(
                    memory_store(runtime),
                    user,
                    model,
                    said[i : i + MAX_PENDING_MESSAGES],
                    thread=messages,
                    said_at=state.get("said_at"),
                    timeout_s=ctx.extraction_timeout_s,
                ):
                    logger.warning("could not extract messages leaving the window; keeping them for now")
                    return {}
        if ctx.history_strategy == "summarize":
            summary = await asummarize(
                await aload_chat_model(ctx.extraction_model or ctx.model),
                summary,
                dropped,
                timeout_s=ctx.extraction_timeout_s,
            )
            if summary is None:
                return {}
    except Exception:
        logger.exception("compacting the thread failed; keeping every message for now")
        return {}
    gone = {m.id for m in dropped}
    update = {
        "messages": [RemoveMessage(id=m.id) for m in dropped if m.id],
        "memory_cursor": max(cursor, cut) - cut,
        "said_at": {k: v for k, v in (state.get("said_at") or {}).items() if k not in gone},
    }
    if ctx.history_strategy == "summarize":
        update["summary"] = summary
    return update
