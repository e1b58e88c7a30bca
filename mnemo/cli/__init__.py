"""``python -m mnemo <command>``: operator commands, one function per command.

A command is a function decorated with :func:`mnemo.cli.command_line.command` (name, help, args)
that returns the exit status; a store command's work is an operation of
:mod:`mnemo.operator`, run on PostgreSQL (``$POSTGRES_URI`` or the embedded one), or
with ``--url`` by the server itself (``POST /memory/operator/<name>``, ``$MNEMO_TOKEN``).
Only ``python -m mnemo`` (and tests) import this package: it loads every command
module so that :func:`main` knows them; the server reaches the operations through
:mod:`mnemo.operator`, without the commands.
"""

from mnemo.cli import (  # noqa: F401  (each registers its commands)
    app_memory_commands,
    chat,
    doctor,
    local_model_commands,
    memory_commands,
    token_commands,
)
from mnemo.cli.command_line import main

__all__ = ["main"]
