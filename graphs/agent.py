r"""The mnemo agent graph (``agent`` in ``langgraph.json``).

    START -> load_memory -(over the token budget)-> compact_history -> call_model
                         \-(under it)-------------------------------> call_model
    call_model -(tool calls)-> tools -> call_model
               \-(answer)----> write_memory -> END

The store and checkpointer are the platform's or the caller's; this module creates neither.
"""

from langgraph.graph import END, START, StateGraph

from nodes.call_model import call_model, route_after_model
from nodes.compact_history import compact_history, route_after_load
from nodes.context import Context
from nodes.load_memory import load_memory
from nodes.state import Input, State
from nodes.tools import tool_node
from nodes.write_memory import write_memory

builder = StateGraph(State, input_schema=Input, context_schema=Context)
builder.add_node("load_memory", load_memory)
builder.add_node("compact_history", compact_history)
builder.add_node("call_model", call_model)
builder.add_node("tools", tool_node)
builder.add_node("write_memory", write_memory)
builder.add_edge(START, "load_memory")
builder.add_conditional_edges("load_memory", route_after_load, ["compact_history", "call_model"])
builder.add_edge("compact_history", "call_model")
builder.add_conditional_edges("call_model", route_after_model, ["tools", "write_memory"])
builder.add_edge("tools", "call_model")
builder.add_edge("write_memory", END)

graph = builder.compile()
graph.name = "mnemo"
