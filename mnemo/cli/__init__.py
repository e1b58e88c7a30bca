"""``python -m mnemo <command>``: operator commands.

The commands live by concern: :mod:`mnemo.cli.tokens` (``token``,
``dev-secret``), :mod:`mnemo.cli.memory` (``export``, ``erase``,
``entitle``, ``promote-episode``), :mod:`mnemo.cli.chat` (``chat``).
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

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemo.errors import MnemoError

#: Environment variables the commands that reach a server read.
URL_ENV, TOKEN_ENV = "MNEMO_URL", "MNEMO_TOKEN"

#: A command: the parsed arguments in, the exit status out (a coroutine is run).
Handler = Callable[[argparse.Namespace], int | Awaitable[int]]


@dataclass(frozen=True)
class _Arg:
    flags: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)


def arg(*flags: str, **options: Any) -> _Arg:
    """One ``ArgumentParser.add_argument(*flags, **options)`` of a command."""
    return _Arg(flags, options)


@dataclass(frozen=True)
class _Command:
    help: str
    args: tuple[_Arg, ...]
    run: Handler


COMMANDS: dict[str, _Command] = {}


def command(name: str, help: str, *args: _Arg) -> Callable[[Handler], Handler]:
    """Register the decorated function as ``python -m mnemo <name>``."""

    def register(fn: Handler) -> Handler:
        if name in COMMANDS:
            raise ValueError(f"command {name!r} is defined twice")
        COMMANDS[name] = _Command(help, args, fn)
        return fn

    return register


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mnemo", description="mnemo operator commands")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, cmd in COMMANDS.items():
        p = sub.add_parser(name, help=cmd.help, description=cmd.help)
        for a in cmd.args:
            p.add_argument(*a.flags, **a.options)
        p.set_defaults(_run=cmd.run)
    return parser


async def _completed(status: Awaitable[int]) -> int:
    return await status


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args._run(args)
        return asyncio.run(_completed(status)) if inspect.isawaitable(status) else status
    except MnemoError as exc:  # a mistake of the caller: say what, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


# Registers every command (each module decorates its functions with @command).
from mnemo.cli import chat, memory, tokens  # noqa: E402, F401
