"""The gate of the tool node: no tool runs unless the user may call it, and no
call that deletes or ends memory runs without the user's own word.

``ToolNode(awrap_tool_call=gate_tool_call)``: every call passes here, whether the
model returned it as a call or wrote it as text (``mnemo.app.recover_tool_calls``). A
refused call never reaches the tool and comes back to the model as an error
``ToolMessage`` saying why. A call of a tool that ends memory (its declared effect,
``mnemo.access.consent``) runs only when the user's latest message asks to forget
or confirms this very call, held in the turn before; the held call is kept in the
answer's ``artifact``, which neither the model nor a client writes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest
from langgraph.types import Command

from mnemo.app import Origin, aadmit, consent_refusal, effect_of, held
from nodes.context import current_user, memory_store


def refusal(request: ToolCallRequest, reason: str, artifact: Any = None) -> ToolMessage:
    call = request.tool_call
    return ToolMessage(content=reason, name=call["name"], tool_call_id=call["id"], status="error", artifact=artifact)


def _messages(state: Any) -> list:
    messages = state.get("messages") if isinstance(state, dict) else getattr(state, "messages", None)
    return list(messages or [])


async def gate_tool_call(
    request: ToolCallRequest, execute: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]]
) -> ToolMessage | Command:
    runtime = request.runtime
    user = current_user(runtime.context, runtime.config)
    if request.tool is not None:  # an unknown tool is refused by the node itself
        why = consent_refusal(effect_of(request.tool), request.tool_call, _messages(request.state))
        if why is not None:
            return refusal(request, why, held(request.tool_call))
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
