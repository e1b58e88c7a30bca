"""The entitlement gate of the tool node: no tool runs unless the user may call it.

``ToolNode(awrap_tool_call=gate_tool_call)``: a refused call never reaches the tool and
comes back to the model as an error ``ToolMessage`` saying why.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from mnemo import Origin, aadmit
from nodes.context import current_user, memory_store


def refusal(request: ToolCallRequest, reason: str) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(content=reason, name=call["name"], tool_call_id=call["id"], status="error")


async def gate_tool_call(
    request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]]
) -> ToolMessage | Command:
    runtime = request.runtime
    user = current_user(runtime.context, runtime.config)
    origin = Origin.from_config(runtime.config, "tool")
    decision = await aadmit(memory_store(runtime), user, request.tool_call["name"], origin=origin)
    if not decision["allowed"]:
        return refusal(request, decision["reason"])
    return await execute(request)


def gate_tool_call_sync(
    request: ToolCallRequest, execute: Callable[[ToolCallRequest], ToolMessage | Command]
) -> ToolMessage | Command:
    """Without a sync wrapper ``ToolNode`` would run tools ungated under
    ``invoke``; mnemo's tools and store calls are async, so refuse instead."""
    return refusal(request, "Tools run only in asynchronous runs (ainvoke / the server); nothing was done.")
