"""``python -m mnemo <command>``: operator commands.

The commands live by concern: :mod:`mnemo.cli.tokens` (``token``,
``dev-secret``), :mod:`mnemo.cli.memory` (``export``, ``erase``,
``entitle``, ``promote-episode``, ``consolidate``), :mod:`mnemo.cli.chat` (``chat``).
Adding a command is one function: decorate it with :func:`command`, giving its
name, a one-line help and its :func:`arg` declarations; it receives the parsed
``argparse.Namespace`` and returns the exit status.

    @command("hello", "say hello", arg("name"))
    def hello(args) -> int:
        print("hello", args.name)
        return 0

Where the memory is (every store command):

* ``--url URL`` (or ``$MNEMO_URL``): a running LangGraph server, through
  ``langgraph_sdk`` and the server's own auth, with the token in
  ``$MNEMO_TOKEN`` (``Authorization: Bearer``). This is the way to reach the
  default ``./scripts/dev`` server, whose store lives inside the server.
* otherwise PostgreSQL: ``$POSTGRES_URI`` when set, else the embedded server
  of ``$MNEMO_PGDATA`` (default ``.mnemo/pgdata``), as ``langgraph.postgres.json``
  uses it.
"""

from mnemo.cli import chat, memory, tokens  # noqa: F401  (each registers its commands)
from mnemo.cli.registry import COMMANDS, main

__all__ = ["COMMANDS", "main"]
