"""Step 4: turn what the user said this turn into memory, without failing the turn."""

from __future__ import annotations

import logging

from langchain_core.messages import HumanMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from nodes.context import Context
from nodes.state import State
from mnemo import aextract, build_extractor
from mnemo.audit import Origin
from mnemo.writes import aapply_extraction
from nodes.chat_models import aload_chat_model
from nodes.context import current_user, memory_store

logger = logging.getLogger(__name__)

#: At most this many pending user messages are sent to the extractor (a long
#: backlog after repeated failures is cut to the latest ones).
MAX_PENDING_MESSAGES = 10


async def write_memory(state: State, runtime: Runtime[Context]) -> dict:
    user = current_user(runtime.context)
    messages = state["messages"]
    cursor = state.get("memory_cursor", 0)
    said = [m.text for m in messages[cursor:] if isinstance(m, HumanMessage)][-MAX_PENDING_MESSAGES:]
    if not said:
        return {"memory_cursor": len(messages)}
    ctx = runtime.context
    try:
        model = await aload_chat_model(ctx.extraction_model or ctx.model)
        extraction = await aextract(build_extractor(model), said, timeout_s=ctx.extraction_timeout_s)
    except Exception:
        logger.exception("could not build the memory extractor; will retry next turn")
        return {}
    if extraction is None:
        # The extractor failed, timed out or returned nothing: skip the write,
        # the turn still succeeds, and these messages are tried again next turn.
        return {}
    try:
        await aapply_extraction(memory_store(runtime), user, extraction, origin=Origin.from_config(get_config(), "extractor"))
    except Exception:
        logger.exception("memory write failed; will retry with the next turn")
        return {}
    return {"memory_cursor": len(messages)}
