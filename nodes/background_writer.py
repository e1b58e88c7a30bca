"""``memory_write_mode="background"``: the reply does not wait for extraction.

:func:`aschedule_extraction` asks the server to run ``memory_writer`` later on a
writer thread of its own, cancelling the one still waiting, so a burst of turns gives
one extraction; outside a server, ``write_memory`` falls back to ``after_turn``.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

logger = logging.getLogger(__name__)

#: Graph id of the background writer in ``langgraph.json``.
WRITER_GRAPH = "memory_writer"

_WRITER_THREADS = uuid.UUID("6d6e656d-6f00-4000-8000-777269746572")  # "mnemo" ... "writer"


def on_platform(config: Mapping[str, Any] | None) -> bool:
    """Whether this run was started by a LangGraph server (``langgraph dev``
    or a deployment), which can schedule another run: the server stamps every
    run with ``langgraph_request_id`` and its module is loaded."""
    configurable = (config or {}).get("configurable") or {}
    return bool(configurable.get("langgraph_request_id")) and "langgraph_api" in sys.modules


async def arun_in_progress(
    config: Mapping[str, Any] | None, thread_id: str | None, run_id: str | None, *, client: Any = None
) -> bool | None:
    """Whether the server's run ``run_id`` of ``thread_id`` is in progress (pending
    or running); ``False`` when the server no longer has it (a rollback deletes
    the run, after its task ended); ``None`` outside a server, or without ids."""
    if not (thread_id and run_id) or (client is None and not on_platform(config)):
        return None
    if client is None:
        from langgraph_sdk import get_client

        client = get_client()
    from langgraph_sdk.errors import NotFoundError

    try:
        run = await client.runs.get(thread_id, run_id)
    except NotFoundError:
        return False
    return run.get("status") in ("pending", "running")


def writer_thread_id(thread_id: str) -> str:
    """The writer thread of conversation thread ``thread_id`` (stable)."""
    return str(uuid.uuid5(_WRITER_THREADS, str(thread_id)))


async def aschedule_extraction(
    thread_id: str, context: Mapping[str, Any], *, delay_s: int, client: Any = None
) -> dict[str, Any]:
    """Schedule (or re-schedule) the ``memory_writer`` run of ``thread_id``;
    returns the run. ``context`` is the writer's context: the resolved user
    id and the model settings of this run.

    Raises whatever the SDK raises (the caller falls back to ``after_turn``).
    """
    if client is None:
        from langgraph_sdk import get_client

        client = get_client()
    return await client.runs.create(
        writer_thread_id(thread_id),
        WRITER_GRAPH,
        input={"thread_id": str(thread_id)},
        context=dict(context),
        multitask_strategy="rollback",
        after_seconds=max(0, int(delay_s)),
        if_not_exists="create",
        metadata={"mnemo_writer_for": str(thread_id)},
    )


def start_after(messages: Sequence[BaseMessage], extracted_through: str | None, cursor: int) -> int:
    """Index from which the writer extracts: past the thread's own
    ``memory_cursor`` and past the message it last extracted (when that message
    is still in the thread; if compaction removed it, the thread's cursor
    covers it, because compaction extracts what it removes)."""
    start = cursor
    if extracted_through:
        for i, message in enumerate(messages):
            if message.id == extracted_through:
                start = max(start, i + 1)
                break
    return start
