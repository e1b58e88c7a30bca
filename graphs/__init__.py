"""Graph wiring only: the steps live in ``nodes/``, the memory model in ``mnemo/``.

Imports run one way: ``graphs`` -> ``nodes`` -> (``nodes.context``,
``nodes.state``) -> ``mnemo`` (tests/project/test_import_layers.py), so importing the
graph from here is safe whichever module a process imports first.
"""

from graphs.agent import builder, graph

__all__ = ["builder", "graph"]
