"""The command registry of ``python -m mnemo``: :func:`command` and
:func:`arg` declare a command, :func:`main` parses and runs one."""

from __future__ import annotations

import argparse
import asyncio
import inspect
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mnemo.core import MnemoError

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
