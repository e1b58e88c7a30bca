"""The graphs as the server runs them (``langgraph.json`` → ``graphs``): each
of :mod:`graphs` inside :func:`server.run_lease.served`, so every run of a
user, whichever route created it, holds one of the user's run leases; and
with its context's JSON schema made once (:func:`schema_once`)."""

from __future__ import annotations

import copy
import logging
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from graphs.agent import graph as _agent
from graphs.memory_writer import graph as _memory_writer
from mnemo.app import configured_model, setup_problem
from server.run_lease import served

logger = logging.getLogger(__name__)

#: Context schema -> its JSON schema, as langgraph makes it.
_context_schemas: dict[Any, dict[str, Any] | None] = {}


class _SchemaOnce(CompiledStateGraph[Any, Any, Any, Any]):
    """A compiled graph whose context JSON schema is made once per process.
    The server asks for it on every run that sends a context (to filter the
    context by it: ``langgraph_api.stream``), and langgraph builds it anew
    each time (a ``TypeAdapter`` of the dataclass: 1.7 ms before the run's
    first step). The platform's copies of the graph keep this class."""

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        schema = self.context_schema
        if schema not in _context_schemas:
            _context_schemas[schema] = super().get_context_jsonschema()
        return copy.deepcopy(_context_schemas[schema])  # the caller's to change


def schema_once(graph: CompiledStateGraph[Any, Any, Any, Any]) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A copy of ``graph`` whose context JSON schema is made once (:class:`_SchemaOnce`)."""
    made = copy.copy(graph)
    made.__class__ = _SchemaOnce
    return made


def say_setup_problem() -> None:
    """At start-up, what the configured model lacks (no key, nothing configured): logged once,
    before the first run fails for it (every run then ends with the same sentence)."""
    if (problem := setup_problem(configured_model())) is not None:
        logger.warning("mnemo: %s. Every run fails until this is fixed.", problem)


say_setup_problem()
agent = served(schema_once(_agent))
memory_writer = served(schema_once(_memory_writer))
