"""``python -m mnemo``: operator commands.

Each command is an ``add_<name>(subparsers)`` function registered in
:data:`COMMANDS`; it declares its arguments and sets ``run`` (an async
function of the parsed arguments returning the exit code).

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
import getpass
import json
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

from mnemo.audit import Origin
from mnemo.errors import MnemoError
from mnemo.identity import User

#: Environment variables the store commands read.
URL_ENV, TOKEN_ENV = "MNEMO_URL", "MNEMO_TOKEN"


# --------------------------------------------------------------------------- where the store is


def add_target_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--url", default=os.environ.get(URL_ENV) or None,
                        help=f"LangGraph server to go through (default ${URL_ENV}); token from ${TOKEN_ENV}. "
                             "Without it: PostgreSQL ($POSTGRES_URI, else the embedded server of $MNEMO_PGDATA)")


@asynccontextmanager
async def open_target(args: argparse.Namespace) -> AsyncIterator[tuple[Any, Any]]:
    """``(store, sdk_client)``; the client is ``None`` without ``--url``."""
    if args.url:
        from langgraph_sdk import get_client

        from mnemo.server_store import ServerStore

        token = os.environ.get(TOKEN_ENV, "").strip()
        headers = {"Authorization": f"Bearer {token}"} if token else None
        client = get_client(url=args.url, headers=headers)
        yield ServerStore(client), client
        return
    from mnemo.platform_store import PGDATA_ENV
    from mnemo.pgserver import DEFAULT_DATA_DIR
    from mnemo.stores import open_postgres_store

    datadir = os.environ.get(PGDATA_ENV, "").strip() or DEFAULT_DATA_DIR
    async with open_postgres_store(datadir=datadir, sweep=False) as store:
        yield store, None


def admin_origin() -> Origin:
    """Writes made from this command line are the operator's, recorded as ``admin``."""
    return Origin(source="admin", actor=f"cli:{getpass.getuser()}")


def _write_json(document: Any, out: str | None) -> None:
    text = json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)


# --------------------------------------------------------------------------- export


def add_export(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="all of one user's memory as one JSON document")
    p.add_argument("user_id")
    p.add_argument("--out", help="file to write (default: stdout)")
    add_target_arguments(p)
    p.set_defaults(run=run_export)


async def run_export(args: argparse.Namespace) -> int:
    from mnemo.privacy import aexport_user

    async with open_target(args) as (store, _):
        document = await aexport_user(store, User.of(args.user_id))
    _write_json(document, args.out)
    if args.out not in (None, "-"):
        print(f"exported {len(document['notes'])} notes, {len(document['profile'])} profile fields, "
              f"{len(document['audit'])} audit records to {args.out}", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- erase


def add_erase(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("erase", help="delete all of one user's memory (and, with --threads, their threads)")
    p.add_argument("user_id")
    p.add_argument("--yes", action="store_true", help="required: nothing is erased without it")
    p.add_argument("--threads", action="store_true",
                   help="also delete the user's threads (metadata.owner); needs --url")
    p.add_argument("--include-entitlements", action="store_true",
                   help="also delete entitlements and usage (closing the account)")
    add_target_arguments(p)
    p.set_defaults(run=run_erase)


async def run_erase(args: argparse.Namespace) -> int:
    from mnemo.privacy import aerase_threads, aerase_user

    if not args.yes:
        print(f"refusing to erase {args.user_id!r} without --yes", file=sys.stderr)
        return 2
    if args.threads and not args.url:
        print("--threads needs --url: threads live in the server, not in the store", file=sys.stderr)
        return 2
    async with open_target(args) as (store, client):
        report: dict[str, Any] = dict(await aerase_user(store, User.of(args.user_id), origin=admin_origin(),
                                                        include_entitlements=args.include_entitlements))
        if args.threads:
            report["threads"] = await aerase_threads(client, args.user_id)
    _write_json(report, None)
    return 0


# --------------------------------------------------------------------------- entitle


def add_entitle(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("entitle", help="show or set a user's tool permissions and daily quotas",
                       description="Without a rule change, shows the user's rules and today's usage. "
                                   "No rule at all means every tool is allowed with no quota.")
    p.add_argument("user_id")
    p.add_argument("--tool", help="the tool the rule is for (default: '*', every tool without its own rule; "
                                  "its daily limit is the total over all tools)")
    action = p.add_mutually_exclusive_group()
    action.add_argument("--allow", dest="allowed", action="store_true", default=None)
    action.add_argument("--deny", dest="allowed", action="store_false")
    action.add_argument("--clear", action="store_true", help="remove the rule")
    p.add_argument("--daily-limit", type=int, default=None, help="calls per UTC day (with --allow)")
    add_target_arguments(p)
    p.set_defaults(run=run_entitle)


async def run_entitle(args: argparse.Namespace) -> int:
    from mnemo.entitlements import aclear_entitlement, aget_entitlements, aset_entitlement, ausage_today

    user = User.of(args.user_id)
    async with open_target(args) as (store, _):
        if args.clear:
            await aclear_entitlement(store, user, args.tool, origin=admin_origin())
        elif args.allowed is not None or args.daily_limit is not None:
            allowed = True if args.allowed is None else args.allowed
            await aset_entitlement(store, user, args.tool, allowed=allowed, daily_limit=args.daily_limit,
                                   origin=admin_origin())
        rules = await aget_entitlements(store, user)
        usage = await ausage_today(store, user)
    _write_json({"user_label": user.label, "rules": rules, "usage_today": usage,
                 "default": "every tool allowed, no quota" if not rules else None}, None)
    return 0


# --------------------------------------------------------------------------- entry point

#: Every subcommand, in the order ``--help`` lists them.
COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [add_export, add_erase, add_entitle]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mnemo", description="mnemo operator commands")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return asyncio.run(args.run(args))
    except MnemoError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
