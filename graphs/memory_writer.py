"""The background memory writer (``memory_writer`` in ``langgraph.json``).

    START -> extract_thread -> END

Started by ``write_memory`` in ``background`` mode, on a writer thread of its own.
"""

from langgraph.graph import END, START, StateGraph

from nodes.context import Context
from nodes.extract_thread import extract_thread
from nodes.state import WriterState

builder = StateGraph(WriterState, context_schema=Context)
builder.add_node("extract_thread", extract_thread)
builder.add_edge(START, "extract_thread")
builder.add_edge("extract_thread", END)

graph = builder.compile()
graph.name = "mnemo memory writer"
