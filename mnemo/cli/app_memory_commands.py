"""The commands an application's operator writes memory with: ``import``, ``remember``,
``set-profile``, ``search``; arguments parsed here, the work done by :mod:`mnemo.operator`
(the same functions as the ``/memory`` routes), on PostgreSQL or, with ``--url``, by the server.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from mnemo.cli.command_line import arg, command
from mnemo.cli.memory_commands import TARGET, run, write_json
from mnemo.core import InvalidInputError, env


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") if path != "-" else sys.stdin as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from None


#: The token ``--source-url`` is called with, if its server needs one.
SOURCE_TOKEN_ENV = "MNEMO_SOURCE_TOKEN"


async def _aread_source(url: str, template: str, user_id: str) -> list[dict[str, Any]]:
    """The items of the namespace ``template`` names for ``user_id`` on the LangGraph server at ``url``."""

    from langgraph_sdk import get_client

    from mnemo.access import namespace_of  # deferred: python -m mnemo loads every command
    from mnemo.core import alist_all  # deferred: python -m mnemo loads every command
    from mnemo.stores import ServerStore  # deferred: python -m mnemo loads every command

    token = env.text(SOURCE_TOKEN_ENV, strip=True)
    client = get_client(url=url, headers={"Authorization": f"Bearer {token}"} if token else None)
    items = await alist_all(ServerStore(client), namespace_of(template, user_id))
    return [{"key": it.key, "value": it.value, "created_at": it.created_at.isoformat()} for it in items]


@command(
    "import",
    "load an export document into a user's memory (the inverse of export; importing twice changes nothing), "
    "or, with --from-langgraph-store, migrate a LangGraph memory app's items",
    arg("user_id"),
    arg("file", nargs="?", help="the export document (JSON; - for stdin)"),
    arg(
        "--from-langgraph-store",
        metavar="NAMESPACE_TEMPLATE",
        default=None,
        help="read a LangGraph memory app's items from the store under this namespace, {user_id} "
        'standing for the user (memory-agent: "memories/{user_id}"); FILE then is not given',
    ),
    arg(
        "--source-url",
        default=None,
        help="with --from-langgraph-store: the LangGraph server the app ran on (token, if it needs one, "
        f"from ${SOURCE_TOKEN_ENV}); default: the store written to",
    ),
    arg("--dry-run", action="store_true", help="say what would be written, write nothing"),
    TARGET,
)
async def import_(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.from_langgraph_store is None):
        print("give an export FILE or --from-langgraph-store NAMESPACE_TEMPLATE", file=sys.stderr)
        return 2
    if args.from_langgraph_store is not None:
        params: dict[str, Any] = {
            "user_id": args.user_id,
            "namespace_template": args.from_langgraph_store,
            "dry_run": args.dry_run,
        }
        if args.source_url:
            params["items"] = await _aread_source(args.source_url, args.from_langgraph_store, args.user_id)
        write_json(await run(args, "migrate-langgraph", params), None)
        return 0
    document = _read_json(args.file)
    write_json(
        await run(args, "import", {"user_id": args.user_id, "document": document, "dry_run": args.dry_run}), None
    )
    return 0


@command(
    "remember",
    "add a note to a user's memory as an application (deduplicated, audited), like POST /memory/notes",
    arg("user_id"),
    arg("text"),
    arg("--expires-at", default=None, help="when it stops being true (ISO date or time, within a year)"),
    arg("--refers-to", default=None, help="the date the fact is about (YYYY, YYYY-MM or YYYY-MM-DD)"),
    TARGET,
)
async def remember(args: argparse.Namespace) -> int:
    params = {"user_id": args.user_id, "text": args.text, "expires_at": args.expires_at, "refers_to": args.refers_to}
    write_json(await run(args, "remember", params), None)
    return 0


@command(
    "set-profile",
    "set profile fields of a user as an application (FIELD=VALUE; FIELD= deletes it), like PATCH /memory/profile",
    arg("user_id"),
    arg("assignments", nargs="+", metavar="FIELD=VALUE"),
    TARGET,
)
async def set_profile(args: argparse.Namespace) -> int:
    fields: dict[str, str | None] = {}
    for assignment in args.assignments:
        field, sep, value = assignment.partition("=")
        if not sep:
            print(f"{assignment!r} is not FIELD=VALUE", file=sys.stderr)
            return 2
        fields[field.strip()] = value or None
    write_json(await run(args, "set-profile", {"user_id": args.user_id, "fields": fields}), None)
    return 0


@command(
    "search",
    "what the agent would be shown about a user for a message, and why (like GET /memory/search)",
    arg("user_id"),
    arg("message"),
    arg("--json", dest="as_json", action="store_true", help="the whole explanation as JSON"),
    TARGET,
)
async def search(args: argparse.Namespace) -> int:
    from mnemo.turn import summary_lines  # deferred: python -m mnemo loads every command

    explanation = await run(args, "search", {"user_id": args.user_id, "q": args.message})
    if args.as_json:
        write_json(explanation, None)
    else:
        print("\n".join(summary_lines(explanation)))
    return 0
