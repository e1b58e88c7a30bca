"""The graphs as the server runs them (``langgraph.json`` → ``graphs``): each
of :mod:`graphs` inside :func:`server.run_lease.served`, so every run of a
user, whichever route created it, holds one of the user's run leases."""

from graphs.agent import graph as _agent
from graphs.memory_writer import graph as _memory_writer
from server.run_lease import served

agent = served(_agent)
memory_writer = served(_memory_writer)
