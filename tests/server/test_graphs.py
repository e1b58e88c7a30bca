"""server.graphs: the served graphs make their context's JSON schema once per
process (the server asks for it on every run that sends a context), the same
schema langgraph makes, through the platform's copies, never shared for change."""

from __future__ import annotations

import pytest

from graphs.agent import graph as agent_graph
from graphs.memory_writer import graph as writer_graph
from server import graphs as served_graphs


@pytest.fixture
def made(monkeypatch):
    """How many times langgraph built a context schema's JSON schema."""
    from langgraph.pregel import main

    built: list[object] = []
    adapter = main.TypeAdapter

    def counting(schema):
        built.append(schema)
        return adapter(schema)

    monkeypatch.setattr(main, "TypeAdapter", counting)
    monkeypatch.setattr(served_graphs, "_context_schemas", {})
    return built


@pytest.mark.parametrize("graph", [agent_graph, writer_graph], ids=["agent", "memory_writer"])
def test_the_context_schema_is_langgraphs_own_made_once_through_the_platforms_copies(graph, made):
    own = graph.get_context_jsonschema()
    assert made == [graph.context_schema] and own["properties"]["user_id"]  # the precondition: langgraph made it
    served = served_graphs.schema_once(graph)
    # As the server does per run (langgraph_api.graph.get_graph): a copy with its store and checkpointer.
    runs = [served.copy(update={"store": None, "checkpointer": None}) for _ in range(3)]
    assert [run.get_context_jsonschema() for run in runs] == [own] * 3
    assert len(made) == 2  # langgraph's own call above, then one for every run
    assert graph.get_context_jsonschema() == own and len(made) == 3  # the graph itself is unchanged


def test_a_schema_changed_by_one_caller_is_not_what_the_next_gets(made):
    served = served_graphs.schema_once(agent_graph)
    first = served.get_context_jsonschema()
    first["properties"].clear()  # e.g. a filter that pops what it read
    assert served.get_context_jsonschema()["properties"]["user_id"]


@pytest.mark.parametrize("factory", ["agent", "memory_writer"])
async def test_the_graphs_langgraph_json_names_are_the_ones_that_make_it_once(factory, made):
    """What the server loads (``langgraph.json`` → ``server/graphs.py``), entered as for a schema read."""
    from types import SimpleNamespace

    async with getattr(served_graphs, factory)({"configurable": {}}, SimpleNamespace(execution_runtime=None)) as graph:
        schemas = [graph.copy(update={"store": None}).get_context_jsonschema() for _ in range(3)]
    assert schemas[0]["properties"]["user_id"] and schemas == schemas[:1] * 3
    assert len(made) == 1


def test_a_server_with_no_model_configured_says_so_at_start_up(monkeypatch, caplog):
    from server.graphs import say_setup_problem

    for name in ("MNEMO_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    with caplog.at_level("WARNING", logger="server.graphs"):
        say_setup_problem()
    assert any("no chat model is configured" in r.getMessage() for r in caplog.records), caplog.text
    caplog.clear()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-configured")
    with caplog.at_level("WARNING", logger="server.graphs"):
        say_setup_problem()
    assert not caplog.records  # a key is set: nothing to say
