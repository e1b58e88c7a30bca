"""The ``memory_writer`` graph's one step: extract a conversation thread's
pending user messages, off the user's path (``nodes.background_writer``)."""

from __future__ import annotations

import logging
from typing import Any, cast

from langchain_core.messages import convert_to_messages
from langgraph.runtime import Runtime

from mnemo.app import ForeignThreadError, Origin, aextract_messages, asweep_user, pending
from nodes.background_writer import start_after
from nodes.chat_models import aload_memory_model
from nodes.context import Context, current_user, memory_store
from nodes.state import WriterState

logger = logging.getLogger(__name__)


async def extract_thread(state: WriterState, runtime: Runtime[Context]) -> dict:
    from langgraph_sdk import get_client

    user = current_user(runtime.context)
    ctx = runtime.context
    thread = await get_client().threads.get_state(state["thread_id"])
    values = cast(dict[str, Any], thread.get("values") or {})
    if values.get("owner") != user.label:
        # The in-process client reads any thread (no auth): without this, a run
        # of this graph naming someone else's thread would extract their words
        # into this user's memory.
        raise ForeignThreadError("memory_writer: this conversation thread belongs to another user")
    messages = convert_to_messages(values.get("messages") or [])
    if not messages:
        return {}
    start = start_after(messages, state.get("extracted_through"), values.get("memory_cursor", 0))
    failures = state.get("failures", 0) if state.get("failing") == _first_pending(messages, start) else 0
    cursor, failures = await aextract_messages(
        memory_store(runtime),
        user,
        lambda: aload_memory_model(ctx),
        messages,
        start,
        failures=failures,
        said_at=values.get("said_at"),
        timeout_s=ctx.extraction_timeout_s,
        origin=Origin(source="extractor", thread_id=str(state["thread_id"])),
        # What the thread's latest load_memory read (this user's own notes, the
        # thread's owner checked above): no read before extracting, as after the turn.
        similar_notes=values.get("similar_notes"),
    )
    update: dict[str, Any] = {"failures": failures, "failing": _first_pending(messages, cursor)}
    if cursor > start:
        update["extracted_through"] = messages[cursor - 1].id
        logger.info("memory_writer: thread %s extracted from message %d to %d", state["thread_id"], start, cursor)
    if cursor >= len(messages):
        await asweep_user(memory_store(runtime), user)
    return update  # what is left is retried by the writer run of the next turn


def _first_pending(messages: list, start: int) -> str:
    """Id of the first user message from ``start`` not written yet ("" for none)."""
    return next((m.id or "" for m in pending(messages, start)), "")
