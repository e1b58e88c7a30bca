"""Step 2: the model answers, or asks for tools."""

from __future__ import annotations

from langchain_core.messages import SystemMessage
from langgraph.runtime import Runtime

from nodes.context import Context
from nodes.state import State
from nodes.prompts import SYSTEM_PROMPT
from nodes.chat_models import aload_chat_model
from nodes.tools import MODEL_TOOLS


async def call_model(state: State, runtime: Runtime[Context]) -> dict:
    model = (await aload_chat_model(runtime.context.model)).bind_tools(MODEL_TOOLS)
    system = SystemMessage(SYSTEM_PROMPT.format(memory=state.get("memory") or "(not loaded)"))
    response = await model.ainvoke([system, *state["messages"]])
    return {"messages": [response]}


def route_after_model(state: State) -> str:
    """``tools`` when the model asked for tool calls, else ``write_memory``."""
    last = state["messages"][-1]
    return "tools" if getattr(last, "tool_calls", None) else "write_memory"
