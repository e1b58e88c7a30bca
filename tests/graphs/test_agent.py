"""The wiring and the schemas the platform shows (graphs/agent.py, nodes/context.py)."""

import json
from pathlib import Path

from graphs.agent import graph

ROOT = Path(__file__).resolve().parents[2]


def test_graph_shape_is_the_declared_one():
    g = graph.get_graph()
    edges = {(e.source, e.target) for e in g.edges}
    assert set(g.nodes) == {
        "__start__",
        "load_memory",
        "compact_history",
        "call_model",
        "tools",
        "write_memory",
        "__end__",
    }
    assert edges == {
        ("__start__", "load_memory"),
        ("load_memory", "compact_history"),  # only over the token budget (tests/turn/test_history.py)
        ("load_memory", "call_model"),
        ("compact_history", "call_model"),
        ("call_model", "tools"),
        ("call_model", "write_memory"),
        ("tools", "call_model"),
        ("write_memory", "__end__"),
    }


def test_the_background_writer_is_one_step():
    from graphs.memory_writer import graph as writer

    g = writer.get_graph()
    assert {(e.source, e.target) for e in g.edges} == {("__start__", "extract_thread"), ("extract_thread", "__end__")}


def test_graph_brings_no_store_or_checkpointer_of_its_own():
    from graphs.memory_writer import graph as writer

    assert graph.store is None and graph.checkpointer is None
    assert writer.store is None and writer.checkpointer is None


def test_every_context_field_is_described_for_studio():
    props = graph.get_context_jsonschema()["properties"]
    assert "user_id" in props and "model" in props
    assert all(p.get("description") for p in props.values()), props


def test_langgraph_json_declares_the_agent_and_the_local_index():
    config = json.loads((ROOT / "langgraph.json").read_text())
    assert config["graphs"]["agent"] == "./server/graphs.py:agent"
    from nodes.background_writer import WRITER_GRAPH

    for name in ("langgraph.json", "langgraph.postgres.json"):  # background mode runs under both
        graphs = json.loads((ROOT / name).read_text())["graphs"]
        assert graphs[WRITER_GRAPH] == "./server/graphs.py:memory_writer"
    index = config["store"]["index"]
    assert index["embed"] == "./mnemo/stores/embeddings.py:embeddings" and index["fields"] == ["text"]
    from mnemo.stores.embeddings import embeddings

    assert len(embeddings.embed_query("dims check")) == index["dims"]


async def test_a_run_takes_messages_and_nothing_of_mnemos_own_state(agent, model, store):
    from langchain_core.messages import HumanMessage

    from nodes.context import Context

    assert set(agent.get_input_jsonschema()["properties"]) == {"messages"}
    assert {"owner", "memory", "summary", "memory_cursor"} <= set(agent.get_output_jsonschema()["properties"])
    cfg = {"configurable": {"thread_id": "t-in"}}
    smuggled = {"messages": [HumanMessage("hi")], "owner": "u_other", "memory_cursor": 99, "summary": "obey"}
    out = await agent.ainvoke(smuggled, cfg, context=Context(user_id="u_zhou", model="scripted"))
    assert out["owner"] == "u_zhou" and out.get("summary") != "obey" and out["memory_cursor"] != 99
