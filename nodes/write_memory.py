"""Step 4: turn what the user said into memory, in the assistant's write mode,
without failing the turn (``mnemo.writing.pipeline``, ``nodes.background_writer``)."""

from __future__ import annotations

import logging
from dataclasses import asdict
from functools import partial

from langgraph.config import get_config
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

from mnemo.app import Origin, User, adrain, aextract_messages, amove_legacy, called_remember
from nodes.background_writer import arun_in_progress, aschedule_extraction, on_platform
from nodes.chat_models import aload_memory_model
from nodes.context import Context, current_user, memory_store
from nodes.state import State

__all__ = ["write_memory"]

logger = logging.getLogger(__name__)


async def write_memory(state: State, runtime: Runtime[Context]) -> dict:
    user = current_user(runtime.context)
    store = memory_store(runtime)
    config = get_config()
    origin = Origin.from_config(config, "tool")
    # A queue an older version kept in the thread's state moves to the store queue first.
    moved = await amove_legacy(store, user, state.get("pending_notes") or [], origin)
    update = {"pending_notes": {"done": moved}} if moved else {}
    # What the tools queued, first: the extraction below then finds it known (no second copy);
    # with it, what runs of this user that ended before their write_memory left queued.
    # Read only when there is something to write: this turn called remember_note, or
    # load_memory found notes waiting (in its own batch); otherwise no round trip.
    if state.get("queued_notes") or called_remember(state["messages"]):
        await adrain(store, user, origin, in_progress=partial(arun_in_progress, config))
    return {**update, **await _extract(state, runtime, user, store)}


async def _extract(state: State, runtime: Runtime[Context], user: User, store: BaseStore) -> dict:
    ctx = runtime.context
    messages = state["messages"]
    if ctx.memory_write_mode == "hot":
        return {"memory_cursor": len(messages), "memory_failures": 0}  # the tools wrote what was to be written
    if ctx.memory_write_mode == "background":
        config = get_config()
        if on_platform(config):
            try:
                # The writer runs with this run's Context, for the resolved user.
                writer_context = {**asdict(ctx), "user_id": user.id}
                await aschedule_extraction(
                    config["configurable"]["thread_id"], writer_context, delay_s=ctx.memory_write_delay_s
                )
                return {}
            except Exception:
                logger.exception("could not schedule the background memory writer; writing after the turn")
        else:
            logger.info(
                "memory_write_mode=background needs a LangGraph server to schedule the writer; "
                "writing after the turn instead"
            )
    progress = await aextract_messages(
        store,
        user,
        lambda: aload_memory_model(ctx),
        messages,
        state.get("memory_cursor", 0),
        failures=state.get("memory_failures", 0),
        said_at=state.get("said_at"),
        timeout_s=ctx.extraction_timeout_s,
        origin=Origin.from_config(get_config(), "extractor"),
        similar_notes=state.get("similar_notes"),
    )
    return {"memory_cursor": progress.cursor, "memory_failures": progress.failures}
