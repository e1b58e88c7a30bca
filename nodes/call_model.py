"""Step 2: the model answers, or asks for tools."""

from __future__ import annotations

import logging

from langchain_core.messages import SystemMessage
from langgraph.runtime import Runtime

from mnemo.entitlements import aavailable_tools
from nodes.chat_models import aload_chat_model
from nodes.context import Context, current_user, memory_store
from nodes.prompts import SYSTEM_PROMPT
from nodes.state import State
from nodes.tools import MODEL_TOOLS

logger = logging.getLogger(__name__)


async def call_model(state: State, runtime: Runtime[Context]) -> dict:
    # The model is offered only the tools this user may call now (entitlements);
    # the tool node's gate still decides each call.
    user = current_user(runtime.context)
    try:
        names = set(await aavailable_tools(memory_store(runtime), user, [t.name for t in MODEL_TOOLS]))
    except Exception:  # every tool needs the store: answer without tools rather than not at all
        logger.exception("could not read entitlements; offering no tools this turn")
        names = set()
    model = await aload_chat_model(runtime.context.model)
    offered = [t for t in MODEL_TOOLS if t.name in names]
    model = model.bind_tools(offered) if offered else model
    system = SystemMessage(SYSTEM_PROMPT.format(memory=state.get("memory") or "(not loaded)"))
    response = await model.ainvoke([system, *state["messages"]])
    return {"messages": [response]}


def route_after_model(state: State) -> str:
    """``tools`` when the model asked for tool calls, else ``write_memory``."""
    last = state["messages"][-1]
    return "tools" if getattr(last, "tool_calls", None) else "write_memory"
