"""``python -m mnemo <command>``: operator commands, one function per command.

A command is a function decorated with :func:`mnemo.cli.registry.command` (name, help, args)
that returns the exit status. Store commands reach memory through ``--url`` (a server,
with ``$MNEMO_TOKEN``) or else PostgreSQL (``$POSTGRES_URI`` or the embedded one).
"""

from mnemo.cli import chat, memory, tokens  # noqa: F401  (each registers its commands)
from mnemo.cli.registry import COMMANDS, main

__all__ = ["COMMANDS", "main"]
