"""The memory commands: ``export``, ``erase``, ``entitle``, ``promote-episode``, ``consolidate``.

Where the memory is: a running server with ``--url`` (or ``$MNEMO_URL``;
an admin token in ``$MNEMO_TOKEN``), else PostgreSQL (``$POSTGRES_URI``, else
the embedded server of ``$MNEMO_PGDATA``).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mnemo.cli.registry import TOKEN_ENV, URL_ENV, arg, command
from mnemo.core import User
from mnemo.kinds import Origin

#: The ``--url`` of every store command.
TARGET = arg(
    "--url",
    default=os.environ.get(URL_ENV) or None,
    help=f"LangGraph server to go through (default ${URL_ENV}); token from ${TOKEN_ENV}. "
    "Without it: PostgreSQL ($POSTGRES_URI, else the embedded server of $MNEMO_PGDATA)",
)


@asynccontextmanager
async def open_target(args: argparse.Namespace) -> AsyncIterator[tuple[Any, Any]]:
    """``(store, sdk_client)``; the client is ``None`` without ``--url``."""
    if args.url:
        from langgraph_sdk import get_client

        from mnemo.stores import ServerStore

        token = os.environ.get(TOKEN_ENV, "").strip()
        headers = {"Authorization": f"Bearer {token}"} if token else None
        client = get_client(url=args.url, headers=headers)
        yield ServerStore(client), client
        return
    from mnemo.stores import DEFAULT_DATA_DIR, PGDATA_ENV, open_postgres_store

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


@command(
    "export",
    "all of one user's memory as one JSON document",
    arg("user_id"),
    arg("--out", help="file to write (default: stdout)"),
    TARGET,
)
async def export(args: argparse.Namespace) -> int:
    from mnemo.access import aexport_user

    async with open_target(args) as (store, _):
        document = await aexport_user(store, User.of(args.user_id))
    _write_json(document, args.out)
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
    from mnemo.access import aerase_threads, aerase_user

    if not args.yes:
        print(f"refusing to erase {args.user_id!r} without --yes", file=sys.stderr)
        return 2
    if args.threads and not args.url:
        print("--threads needs --url: threads live in the server, not in the store", file=sys.stderr)
        return 2
    async with open_target(args) as (store, client):
        report: dict[str, Any] = dict(
            await aerase_user(
                store, User.of(args.user_id), origin=admin_origin(), include_entitlements=args.include_entitlements
            )
        )
        if args.threads:
            report["threads"] = await aerase_threads(client, args.user_id)
    _write_json(report, None)
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
    from mnemo.access import aclear_entitlement, aget_entitlements, aset_entitlement, ausage_today

    user = User.of(args.user_id)
    async with open_target(args) as (store, _):
        if args.clear:
            await aclear_entitlement(store, user, args.tool, origin=admin_origin())
        elif args.allowed is not None or args.daily_limit is not None:
            allowed = True if args.allowed is None else args.allowed
            await aset_entitlement(
                store, user, args.tool, allowed=allowed, daily_limit=args.daily_limit, origin=admin_origin()
            )
        rules = await aget_entitlements(store, user)
        usage = await ausage_today(store, user)
    _write_json(
        {
            "user_label": user.label,
            "rules": rules,
            "usage_today": usage,
            "default": "every tool allowed, no quota" if not rules else None,
        },
        None,
    )
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
    from mnemo.kinds import aget_profile, apromote_episode

    user = User.of(args.user_id)
    async with open_target(args) as (store, _):
        # The user's own profile values are personal data too: scrubbed with the id.
        personal = [entry["value"] for entry in (await aget_profile(store, user)).values()]
        shared = await apromote_episode(
            store, user, args.episode_id, promoted_by=admin_origin().actor or "admin", personal=personal
        )
    _write_json(shared, None)
    return 0


# --------------------------------------------------------------------------- consolidate


@command(
    "consolidate",
    "merge one user's notes that say the same thing; list likely contradictions it could not resolve",
    arg("user_id"),
    arg(
        "--model",
        default=os.environ.get("MNEMO_EXTRACTION_MODEL") or os.environ.get("MNEMO_MODEL") or None,
        help="chat model (init_chat_model spec; default $MNEMO_EXTRACTION_MODEL, else $MNEMO_MODEL)",
    ),
    arg("--max-calls", type=int, default=None, help="model calls at most (default: mnemo's bound)"),
    TARGET,
)
async def consolidate(args: argparse.Namespace) -> int:
    from langchain.chat_models import init_chat_model

    from mnemo.writing import MAX_CONSOLIDATION_CALLS, aconsolidate

    if not args.model:
        print("no model: pass --model or set MNEMO_EXTRACTION_MODEL / MNEMO_MODEL", file=sys.stderr)
        return 2
    model = init_chat_model(args.model, temperature=0)
    async with open_target(args) as (store, _):
        report = await aconsolidate(
            store,
            User.of(args.user_id),
            model,
            origin=admin_origin(),
            max_calls=max(1, args.max_calls or MAX_CONSOLIDATION_CALLS),
        )
    _write_json(report, None)
    return 0
