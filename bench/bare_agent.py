"""The bare agent of ``python -m bench overhead``: START -> call_model -> END,
no memory, the chat model of ``$MNEMO_MODEL`` (built once per process).

The benchmark adds it, as a second graph, to the ``langgraph.json`` of its
copy of the project only; the product never serves it.
"""

from __future__ import annotations

import os
from functools import cache

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel
from langgraph.graph import END, START, MessagesState, StateGraph


@cache
def _model() -> BaseChatModel:
    return init_chat_model(os.environ["MNEMO_MODEL"])


async def call_model(state: MessagesState) -> dict:
    return {"messages": [await _model().ainvoke(state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("call_model", call_model)
builder.add_edge(START, "call_model")
builder.add_edge("call_model", END)
graph = builder.compile()
