"""The memory commands: ``export``, ``erase``, ``entitle``, ``promote-episode``,
``reindex``, ``audit verify``, ``consolidate``, ``instructions``: arguments parsed here, the work
done by :mod:`mnemo.operator`.

Where the memory is: a running server with ``--url`` (or ``$MNEMO_URL``;
an admin token in ``$MNEMO_TOKEN``), which runs the operation itself, else
PostgreSQL (``$POSTGRES_URI``, else the embedded server of ``$MNEMO_PGDATA``).
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from langgraph.store.base import BaseStore

from mnemo.cli.command_line import TOKEN_ENV, URL_ENV, arg, command
from mnemo.core import MnemoError, env
from mnemo.operator import OPERATIONS, Target

#: The ``--url`` of every store command.
TARGET = arg(
    "--url",
    default=env.text(URL_ENV) or None,
    help=f"LangGraph server to go through (default ${URL_ENV}); token from ${TOKEN_ENV}. "
    "Without it: PostgreSQL ($POSTGRES_URI, else the embedded server of $MNEMO_PGDATA)",
)


async def run(args: argparse.Namespace, name: str, params: dict[str, Any]) -> Any:
    """Operation ``name`` of :mod:`mnemo.operator` with ``params``: on
    the server of ``--url`` (``POST /memory/operator/<name>``, the admin
    token of ``$MNEMO_TOKEN``), else on PostgreSQL.

    Raises:
        MnemoError: the operation refused (the server's answer, or the error itself).
    """
    if args.url:
        import httpx

        token = env.text(TOKEN_ENV, strip=True)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(base_url=args.url, headers=headers, timeout=600) as http:
            res = await http.post(f"/memory/operator/{name}", json=params)
        if res.status_code != 200:
            raise MnemoError(f"the server refused ({res.status_code}): {res.text}")
        return res.json()
    async with open_local_store() as store:
        target = Target(store=store, actor=f"cli:{getpass.getuser()}", route=f"python -m mnemo {name}")
        return await OPERATIONS[name](target, params)


@asynccontextmanager
async def open_local_store() -> AsyncIterator[BaseStore]:
    """PostgreSQL: ``$POSTGRES_URI``, else the embedded server of ``$MNEMO_PGDATA``."""
    from mnemo.stores import (
        DEFAULT_DATA_DIR,
        PGDATA_ENV,
        open_postgres_store,
    )  # deferred: python -m mnemo loads every command

    datadir = env.text(PGDATA_ENV, strip=True) or DEFAULT_DATA_DIR
    async with open_postgres_store(datadir=datadir, sweep=False) as store:
        yield store


def write_json(document: Any, out: str | None) -> None:
    text = json.dumps(document, ensure_ascii=False, indent=2, default=str) + "\n"
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)


# --------------------------------------------------------------------------- export


@command(
    "export",
    "all of one user's memory as one JSON document",
    arg("user_id"),
    arg("--out", help="file to write (default: stdout)"),
    TARGET,
)
async def export(args: argparse.Namespace) -> int:
    document = await run(args, "export", {"user_id": args.user_id})
    write_json(document, args.out)
    if args.out not in (None, "-"):
        print(
            f"exported {len(document['notes'])} notes, {len(document['profile'])} profile fields, "
            f"{len(document['audit'])} audit records to {args.out}",
            file=sys.stderr,
        )
    return 0


# --------------------------------------------------------------------------- erase


@command(
    "erase",
    "delete all of one user's memory (and, with --threads, their threads)",
    arg("user_id"),
    arg("--yes", action="store_true", help="required: nothing is erased without it"),
    arg("--threads", action="store_true", help="also delete the user's threads (metadata.owner); needs --url"),
    arg("--include-entitlements", action="store_true", help="also delete entitlements and usage (closing the account)"),
    TARGET,
)
async def erase(args: argparse.Namespace) -> int:
    if not args.yes:
        print(f"refusing to erase {args.user_id!r} without --yes", file=sys.stderr)
        return 2
    if args.threads and not args.url:
        print("--threads needs --url: threads live in the server, not in the store", file=sys.stderr)
        return 2
    params = {
        "user_id": args.user_id,
        "yes": True,
        "threads": args.threads,
        "include_entitlements": args.include_entitlements,
    }
    write_json(await run(args, "erase", params), None)
    return 0


# --------------------------------------------------------------------------- entitle


@command(
    "entitle",
    "show or set a user's tool permissions and daily quotas (no rule: every tool, no quota)",
    arg("user_id"),
    arg(
        "--tool",
        help="the tool the rule is for (default: '*', every tool without its own rule; "
        "its daily limit is the total over all tools)",
    ),
    arg("--allow", dest="allowed", action="store_true", default=None),
    arg("--deny", dest="allowed", action="store_false"),
    arg("--clear", action="store_true", help="remove the rule"),
    arg("--daily-limit", type=int, default=None, help="calls per UTC day (with --allow)"),
    TARGET,
)
async def entitle(args: argparse.Namespace) -> int:
    if args.clear and (args.allowed is not None or args.daily_limit is not None):
        print("--clear takes no --allow, --deny or --daily-limit", file=sys.stderr)
        return 2
    params = {
        "user_id": args.user_id,
        "tool": args.tool,
        "allowed": args.allowed,
        "daily_limit": args.daily_limit,
        "clear": args.clear,
    }
    write_json(await run(args, "entitle", params), None)
    return 0


# --------------------------------------------------------------------------- promote-episode


@command(
    "promote-episode",
    "copy one of a user's resolved cases to the shared examples, personal data removed (admin)",
    arg("user_id"),
    arg("episode_id", help="the episode's id (export the user's memory to see them)"),
    TARGET,
)
async def promote_episode(args: argparse.Namespace) -> int:
    write_json(await run(args, "promote-episode", {"user_id": args.user_id, "episode_id": args.episode_id}), None)
    return 0


# --------------------------------------------------------------------------- reindex


@command(
    "reindex",
    "build the note index (recent notes, words) of one user or of every user, in bounded batches",
    arg("user_id", nargs="?", help="the user (default: none; give --all for every user)"),
    arg("--all", dest="every", action="store_true", help="every user that has memories"),
    TARGET,
)
async def reindex(args: argparse.Namespace) -> int:
    if bool(args.user_id) == args.every:
        print("give one user id or --all", file=sys.stderr)
        return 2
    params: dict[str, Any] = {"all": True} if args.every else {"user_id": args.user_id}
    write_json(await run(args, "reindex", params), None)
    return 0


# --------------------------------------------------------------------------- audit


@command(
    "audit",
    "check a user's audit trail: every record in place, unaltered, none slipped in (exit 1 if not)",
    arg("action", choices=["verify"]),
    arg("user_id"),
    TARGET,
)
async def audit(args: argparse.Namespace) -> int:
    check = await run(args, "audit-verify", {"user_id": args.user_id})
    write_json(check, None)
    return 0 if check["ok"] else 1


# --------------------------------------------------------------------------- consolidate


@command(
    "consolidate",
    "merge one user's notes that say the same thing; list likely contradictions it could not resolve",
    arg("user_id"),
    arg(
        "--model",
        default=None,
        help="chat model (init_chat_model spec; default $MNEMO_EXTRACTION_MODEL, else $MNEMO_MODEL, where it runs)",
    ),
    arg("--max-calls", type=int, default=None, help="model calls at most (default: mnemo's bound)"),
    TARGET,
)
async def consolidate(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"user_id": args.user_id}
    if args.model:
        params["model"] = args.model
    if args.max_calls is not None:
        params["max_calls"] = args.max_calls
    write_json(await run(args, "consolidate", params), None)
    return 0


# --------------------------------------------------------------------------- instructions


@command(
    "instructions",
    "learned instructions: list proposals, approve or reject one (admin); versions, rollback; "
    "migrate (moves what older versions kept where users read it)",
    arg("action", choices=["list", "approve", "reject", "versions", "rollback", "migrate"]),
    arg("id", nargs="?", help="approve / reject: the proposal's id (from list); rollback: the version number or key"),
    arg("--status", default="pending", help="list: pending (default), refused, approved, rejected or all"),
    arg("--assistant", default=None, help="versions / rollback: the assistant id (default: versions of every one)"),
    arg("--reason", default="", help="reject / rollback: why (recorded)"),
    TARGET,
)
async def instructions(args: argparse.Namespace) -> int:
    if (args.id is None) == (args.action in ("approve", "reject", "rollback")):
        print(f"instructions {args.action} takes {'an id' if args.id is None else 'no id'}", file=sys.stderr)
        return 2
    params: dict[str, Any] = {
        "list": {"status": args.status},
        "approve": {"id": args.id},
        "reject": {"id": args.id, "reason": args.reason},
        "versions": {"assistant_id": args.assistant},
        "migrate": {},
        "rollback": {
            "version": int(args.id) if (args.id or "").isdigit() else args.id,
            "assistant_id": args.assistant,
            "reason": args.reason,
        },
    }[args.action]
    write_json(await run(args, f"instructions-{args.action}", params), None)
    return 0
