"""``python -m mnemo <command>``: operator commands, one function per command.

A command is a function decorated with :func:`mnemo.cli.registry.command` (name, help, args)
that returns the exit status; a store command's work is an operation of
:mod:`mnemo.cli.operations`, run on PostgreSQL (``$POSTGRES_URI`` or the embedded one), or
with ``--url`` by the server itself (``POST /memory/operator/<name>``, ``$MNEMO_TOKEN``).
"""

from mnemo.cli import app_memory, chat, doctor, memory, tokens  # noqa: F401  (each registers its commands)
from mnemo.cli.operations import OPERATIONS, Target
from mnemo.cli.registry import main

__all__ = ["OPERATIONS", "Target", "main"]
