"""Step 2: the model answers, or asks for tools.

Its prompt (``nodes.prompts``): the rules and
the assistant's approved instructions; the user's own instructions and the running
summary; the thread's messages, fitted to ``history_token_budget``
(``mnemo.turn.history``); the user's memory and the memory kinds' blocks (similar
past cases) just before the turn's user message. The instructions are read here
every call, beside the entitlements and at the same time, so an approval, a
rollback or the user's feedback applies from the next model call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable
from typing import TypeVar

from langgraph.config import get_config
from langgraph.runtime import Runtime

from mnemo.app import (
    MAX_TOOL_ROUNDS,
    Learned,
    aavailable_tools,
    aload_learned,
    assistant_of,
    bounded_ints,
    fit_to_budget,
    recover_tool_calls,
    tool_rounds,
    with_tools,
    within_deadline,
)
from nodes.chat_models import aload_chat_model
from nodes.context import Context, current_user, memory_store
from nodes.prompts import for_model, keeps_system_messages, lay_out, place_turn, render_prompt
from nodes.state import State
from nodes.tools import MODEL_TOOLS

logger = logging.getLogger(__name__)

T = TypeVar("T")
#: The learned instructions when they cannot be read.
UNAVAILABLE: Learned = {"shared": "(unavailable this turn)", "own": None}


async def call_model(state: State, runtime: Runtime[Context]) -> dict:
    # The model is offered only the tools this user may call now (entitlements);
    # the tool node's gate still decides each call.
    user = current_user(runtime.context)
    store = memory_store(runtime)
    # Both reads at once: one round trip's wait before the model, not two. A failed
    # read costs only what it reads: without entitlements no tools are offered (every
    # tool needs the store), without instructions the hard rules still apply.
    entitled, learned = await asyncio.gather(
        _or_else(
            aavailable_tools(store, user, [t.name for t in MODEL_TOOLS]),
            [],
            "could not read entitlements; offering no tools this turn",
        ),
        _or_else(
            aload_learned(store, assistant_of(get_config()), user),
            UNAVAILABLE,
            "could not load the learned instructions; answering with the hard rules only",
        ),
    )
    names = set(entitled)
    instructions, own = learned["shared"] or "", learned["own"]
    chat_model = await aload_chat_model(runtime.context.model)
    if (rounds := tool_rounds(state["messages"])) >= MAX_TOOL_ROUNDS:
        logger.warning("%d rounds of tool calls this turn; asking the model to answer without tools", rounds)
        names = set()
    offered = [t for t in MODEL_TOOLS if t.name in names]
    model = with_tools(chat_model, offered) if offered else chat_model
    summary = state.get("summary")
    parts = render_prompt(
        instructions=instructions,
        memory=state.get("memory") or "",
        summary=summary,
        blocks=state.get("blocks"),
        own_instructions=own,
    )
    messages = fit_to_budget(state["messages"], budget=runtime.context.history_token_budget, summary=summary)
    # What every user shares first, what this turn recalled last: a runtime reuses the prefix.
    placed = place_turn(messages, parts.turn, state.get("turn_at"), updates=keeps_system_messages(chat_model))
    laid_out = lay_out(rules=parts.rules, standing=parts.standing, placed=placed, messages=messages)
    prompt = for_model(chat_model, laid_out)
    # The whole answer, streamed or not, within MNEMO_MODEL_TIMEOUT_S: past it the run fails with why.
    response = await within_deadline(model.ainvoke(prompt))
    # A call written as text is still a call, when the answer is that call alone and copies none
    # the prompt spells; nothing is recovered once no tool is offered (docs/models.md).
    response = recover_tool_calls(response, offered, prompt)
    for call in getattr(response, "tool_calls", None) or []:
        call["args"] = bounded_ints(call["args"])  # the thread must be able to store them
    return {"messages": [response], "turn_at": {"placed": [list(p) for p in placed]}}


async def _or_else(read: Awaitable[T], fallback: T, failure: str) -> T:
    """What ``read`` returns, or ``fallback`` when it fails (logged as ``failure``): the turn goes on."""
    try:
        return await read
    except Exception:
        logger.exception(failure)
        return fallback


def route_after_model(state: State) -> str:
    """``tools`` when the model asked for tool calls, else ``write_memory``."""
    last = state["messages"][-1]
    return "tools" if getattr(last, "tool_calls", None) else "write_memory"
