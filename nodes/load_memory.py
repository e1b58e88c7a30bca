"""Step 1: read what is remembered about the user, and similar past cases,
for the model to see (one store round trip, ``mnemo.snapshot``)."""

from __future__ import annotations

import logging

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from graphs.context import Context
from graphs.state import State
from mnemo.episodes import render_episodes
from mnemo.snapshot import aload_snapshot, render_snapshot
from mnemo.writer import stamp_said_at
from nodes.runtime import current_user

logger = logging.getLogger(__name__)


async def load_memory(state: State, runtime: Runtime[Context]) -> dict:
    user = current_user(runtime.context)  # no user: the run fails here, before any model call
    ctx = runtime.context
    stamped = stamp_said_at(state["messages"], state.get("said_at"))
    update = {"said_at": stamped} if stamped is not None else {}
    latest = next((m for m in reversed(state["messages"]) if isinstance(m, HumanMessage)), None)
    try:
        snapshot = await aload_snapshot(
            runtime.store,
            user,
            latest.text if latest is not None else "",
            recall_limit=ctx.recall_limit,
            recent_limit=ctx.recent_limit,
            min_score=ctx.recall_min_score,
            episode_limit=ctx.episode_limit,
            episode_min_score=ctx.episode_min_score,
        )
    except Exception as exc:  # a failing store must not cost the user an answer
        logger.exception("load_memory failed; answering without long-term memory")
        return {**update, "examples": "",
                "memory": f"(long-term memory is unavailable this turn: {type(exc).__name__}; do not guess)"}
    return {**update, "memory": render_snapshot(snapshot, char_budget=ctx.memory_char_budget),
            "examples": render_episodes(snapshot["episodes"], char_budget=ctx.episode_char_budget)}
