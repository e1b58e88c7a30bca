"""``python -m mnemo token`` and ``dev-secret``: bearer tokens for the server."""

from __future__ import annotations

import argparse
from pathlib import Path

from mnemo.cli.command_line import arg, command
from mnemo.core import SecretError, env


def signing_secret() -> str:
    """The secret tokens are signed with: ``MNEMO_JWT_SECRET`` (environment,
    then ``./.env``), else the development secret ``./scripts/dev`` created."""
    from mnemo.access import (
        DEV_SECRET_PATH,
        SECRET_ENV,
        check_secret,
        ensure_dev_secret,
    )  # deferred: python -m mnemo loads every command

    secret = env.raw(SECRET_ENV) or _dotenv(SECRET_ENV)
    if secret:
        return check_secret(secret)
    if DEV_SECRET_PATH.exists():
        return ensure_dev_secret()
    raise SecretError(
        f"no secret: set {SECRET_ENV} to the server's secret, or start ./scripts/dev once "
        f"(it creates the development secret {DEV_SECRET_PATH})"
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
    from mnemo.access import parse_ttl  # deferred: python -m mnemo loads every command

    try:
        return parse_ttl(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@command(
    "token",
    "mint a bearer token for a user (send it as 'Authorization: Bearer <token>')",
    arg("user_id", help="the user id the token authenticates (its 'sub' claim)"),
    arg(
        "--admin",
        action="store_true",
        help="an admin token: may act for any user a run names and reach every namespace (app backends)",
    ),
    arg("--ttl", type=_ttl, default="12h", help="validity, e.g. 3600, 30m, 12h, 7d (default: 12h)"),
)
def token(args: argparse.Namespace) -> int:
    from mnemo.access import mint_token  # deferred: python -m mnemo loads every command

    print(mint_token(args.user_id, secret=signing_secret(), role="admin" if args.admin else "user", ttl=args.ttl))
    return 0


@command("dev-secret", "print the development signing secret, creating .mnemo/jwt-secret on first use")
def dev_secret(args: argparse.Namespace) -> int:
    from mnemo.access import ensure_dev_secret  # deferred: python -m mnemo loads every command

    print(ensure_dev_secret())
    return 0
