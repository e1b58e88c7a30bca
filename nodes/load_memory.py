"""Step 1: read what is remembered about the user, and similar past cases,
for the model to see."""

from __future__ import annotations

import asyncio
import logging

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from graphs.context import Context
from graphs.state import State
from mnemo.episodes import asimilar_episodes, render_episodes
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
    query = latest.text if latest is not None else ""
    snapshot, episodes = await asyncio.gather(
        aload_snapshot(runtime.store, user, query, recall_limit=ctx.recall_limit, recent_limit=ctx.recent_limit,
                       min_score=ctx.recall_min_score),
        asimilar_episodes(runtime.store, user, query, limit=ctx.episode_limit, min_score=ctx.episode_min_score),
        return_exceptions=True,
    )
    if isinstance(episodes, BaseException):
        logger.warning("could not load past cases; answering without examples", exc_info=episodes)
        episodes = []
    update["examples"] = render_episodes(episodes, char_budget=ctx.episode_char_budget)
    if isinstance(snapshot, BaseException):  # a failing store must not cost the user an answer
        logger.error("load_memory failed; answering without long-term memory", exc_info=snapshot)
        return {**update, "memory": f"(long-term memory is unavailable this turn: {type(snapshot).__name__}; do not guess)"}
    return {**update, "memory": render_snapshot(snapshot, char_budget=ctx.memory_char_budget)}
