"""LangChain's memory-agent template, the peer of ``python -m bench overhead``.

Written from https://github.com/langchain-ai/memory-agent at commit
09bf577731b4d5a35157cf4e18aa5af3c7a5095d (18 May 2026; ``src/memory_agent/graph.py``,
``tools.py``, ``prompts.py``): ``call_model`` searches ``("memories", user_id)``
by the last three messages (``limit=10``), renders the hits in its system
prompt and binds ``upsert_memory``; a call of it routes to ``store_memory``,
which puts each memory and goes back to ``call_model``.

Two departures, both to serve it beside mnemo under one server: the chat model
is ``$MNEMO_MODEL`` (the template reads ``provider/model`` from its context),
and each put passes its own index path, since the template's store embeds the
whole value (its index has no ``fields``, i.e. ``["$"]``) and the shared
server's index is mnemo's ``["text"]``. That path is ``""``, not ``"$"``:
langgraph (1.x) reads ``"$"`` as the whole value only in an index config; a
put's ``index=["$"]`` is tokenized into a key named ``$`` and embeds nothing,
while the empty path gives the text ``["$"]`` gives in a config (the value as
sorted JSON, one vector). The benchmark adds it to its copy of ``langgraph.json`` only; the
product never serves it. No ``from __future__ import annotations`` here, as in
the template: ``bind_tools`` reads the tool's annotations to leave out its
injected arguments.
"""

import asyncio
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Annotated, Any, cast

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AnyMessage
from langchain_core.tools import InjectedToolArg
from langgraph.graph import END, StateGraph, add_messages
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore

SYSTEM_PROMPT = """You are a helpful and friendly chatbot. Get to know the user! \
Ask questions! Be spontaneous! 
{user_info}

System Time: {time}"""


#: The index path of the whole value, as one text (see above).
WHOLE_VALUE = [""]


@dataclass(kw_only=True)
class Context:
    user_id: str = "default"
    system_prompt: str = SYSTEM_PROMPT


@dataclass(kw_only=True)
class State:
    messages: Annotated[list[AnyMessage], add_messages]


@cache
def _model() -> BaseChatModel:
    return init_chat_model(os.environ["MNEMO_MODEL"])


async def upsert_memory(
    content: str,
    context: str,
    *,
    memory_id: uuid.UUID | None = None,
    user_id: Annotated[str, InjectedToolArg],
    store: Annotated[BaseStore, InjectedToolArg],
) -> str:
    """Upsert a memory in the database.

    If a memory conflicts with an existing one, then just UPDATE the
    existing one by passing in memory_id - don't create two memories
    that are the same. If the user corrects a memory, UPDATE it.

    Args:
        content: The main content of the memory. For example:
            "User expressed interest in learning about French."
        context: Additional context for the memory. For example:
            "This was mentioned while discussing career options in Europe."
        memory_id: ONLY PROVIDE IF UPDATING AN EXISTING MEMORY.
        The memory to overwrite.
    """
    mem_id = memory_id or uuid.uuid4()
    value = {"content": content, "context": context}
    await store.aput(("memories", user_id), key=str(mem_id), value=value, index=WHOLE_VALUE)
    return f"Stored memory {mem_id}"


async def call_model(state: State, runtime: Runtime[Context]) -> dict:
    memories = await cast(BaseStore, runtime.store).asearch(
        ("memories", runtime.context.user_id),
        query=str([m.content for m in state.messages[-3:]]),
        limit=10,
    )
    formatted = "\n".join(f"[{mem.key}]: {mem.value} (similarity: {mem.score})" for mem in memories)
    if formatted:
        formatted = f"""
<memories>
{formatted}
</memories>"""
    sys = runtime.context.system_prompt.format(user_info=formatted, time=datetime.now().isoformat())
    msg = await _model().bind_tools([upsert_memory]).ainvoke([{"role": "system", "content": sys}, *state.messages])
    return {"messages": [msg]}


async def store_memory(state: State, runtime: Runtime[Context]) -> dict:
    tool_calls: list[dict[str, Any]] = getattr(state.messages[-1], "tool_calls", [])
    saved = await asyncio.gather(
        *(
            upsert_memory(**tc["args"], user_id=runtime.context.user_id, store=cast(BaseStore, runtime.store))
            for tc in tool_calls
        )
    )
    return {
        "messages": [
            {"role": "tool", "content": mem, "tool_call_id": tc["id"]}
            for tc, mem in zip(tool_calls, saved, strict=True)
        ]
    }


def route_message(state: State) -> str:
    return "store_memory" if getattr(state.messages[-1], "tool_calls", None) else END


builder = StateGraph(State, context_schema=Context)
builder.add_node(call_model)
builder.add_edge("__start__", "call_model")
builder.add_node(store_memory)
builder.add_conditional_edges("call_model", route_message, ["store_memory", END])
builder.add_edge("store_memory", "call_model")
graph = builder.compile()
graph.name = "MemoryAgent"
