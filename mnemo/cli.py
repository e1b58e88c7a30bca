"""``python -m mnemo <command>``: operator commands.

Adding a command is one function: decorate it with :func:`command`, giving its
name, a one-line help and its :func:`arg` declarations; it receives the parsed
``argparse.Namespace`` and returns the exit status.

    @command("hello", "say hello", arg("name"))
    def hello(args) -> int:
        print("hello", args.name)
        return 0
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.errors import MnemoError

Handler = Callable[[argparse.Namespace], int]


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


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args._run(args)
    except MnemoError as exc:  # a mistake of the caller: say what, no traceback
        print(f"error: {exc}", file=sys.stderr)
        return 2


# --------------------------------------------------------------------------- tokens


def signing_secret() -> str:
    """The secret tokens are signed with: ``MNEMO_JWT_SECRET`` (environment,
    then ``./.env``), else the development secret ``./scripts/dev`` created."""
    from mnemo import tokens

    secret = os.environ.get(tokens.SECRET_ENV) or _dotenv(tokens.SECRET_ENV)
    if secret:
        return tokens.check_secret(secret)
    if tokens.DEV_SECRET_PATH.exists():
        return tokens.ensure_dev_secret()
    raise tokens.SecretError(
        f"no secret: set {tokens.SECRET_ENV} to the server's secret, or start ./scripts/dev once "
        f"(it creates the development secret {tokens.DEV_SECRET_PATH})"
    )


def _dotenv(name: str) -> str | None:
    # `langgraph dev` reads ./.env with python-dotenv (installed with the server
    # extra); read it the same way so the CLI signs with the server's secret.
    try:
        from dotenv import dotenv_values
    except ImportError:
        return None
    return dotenv_values(Path(".env")).get(name) or None


def _ttl(text: str):
    from mnemo.tokens import parse_ttl

    try:
        return parse_ttl(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@command(
    "token",
    "mint a bearer token for a user (send it as 'Authorization: Bearer <token>')",
    arg("user_id", help="the user id the token authenticates (its 'sub' claim)"),
    arg("--admin", action="store_true",
        help="an admin token: may act for any user a run names and reach every namespace (app backends)"),
    arg("--ttl", type=_ttl, default="12h", help="validity, e.g. 3600, 30m, 12h, 7d (default: 12h)"),
)
def token(args: argparse.Namespace) -> int:
    from mnemo.tokens import mint_token

    print(mint_token(args.user_id, secret=signing_secret(), role="admin" if args.admin else "user", ttl=args.ttl))
    return 0


@command("dev-secret", "print the development signing secret, creating .mnemo/jwt-secret on first use")
def dev_secret(args: argparse.Namespace) -> int:
    from mnemo.tokens import ensure_dev_secret

    print(ensure_dev_secret())
    return 0
