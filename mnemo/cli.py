"""``python -m mnemo <command>``: operator commands.

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
import getpass
import inspect
import json
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mnemo.audit import Origin
from mnemo.errors import MnemoError
from mnemo.identity import User

#: Environment variables the store commands read.
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
    arg(
        "--admin",
        action="store_true",
        help="an admin token: may act for any user a run names and reach every namespace (app backends)",
    ),
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


# --------------------------------------------------------------------------- where the store is


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

        from mnemo.server_store import ServerStore

        token = os.environ.get(TOKEN_ENV, "").strip()
        headers = {"Authorization": f"Bearer {token}"} if token else None
        client = get_client(url=args.url, headers=headers)
        yield ServerStore(client), client
        return
    from mnemo.pgserver import DEFAULT_DATA_DIR
    from mnemo.platform_store import PGDATA_ENV
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


@command(
    "export",
    "all of one user's memory as one JSON document",
    arg("user_id"),
    arg("--out", help="file to write (default: stdout)"),
    TARGET,
)
async def export(args: argparse.Namespace) -> int:
    from mnemo.privacy import aexport_user

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
    from mnemo.privacy import aerase_threads, aerase_user

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
    from mnemo.entitlements import aclear_entitlement, aget_entitlements, aset_entitlement, ausage_today

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
    from mnemo.episodes import apromote_episode
    from mnemo.profile import aget_profile

    user = User.of(args.user_id)
    async with open_target(args) as (store, _):
        # The user's own profile values are personal data too: scrubbed with the id.
        personal = [entry["value"] for entry in (await aget_profile(store, user)).values()]
        shared = await apromote_episode(
            store, user, args.episode_id, promoted_by=admin_origin().actor or "admin", personal=personal
        )
    _write_json(shared, None)
    return 0


# --------------------------------------------------------------------------- chat

#: Where ``./scripts/dev`` serves.
DEV_URL = "http://127.0.0.1:2024"


def _chat_credentials(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """``(token, context)`` of a chat: ``$MNEMO_TOKEN`` as given (``--user``
    then names whom an admin token acts for; a user token may name only
    itself, the server refuses anyone else), or, without one, a user token
    for ``--user`` minted with the signing secret (development)."""
    from mnemo.tokens import mint_token

    context = {"user_id": args.user} if args.user else {}
    if token := os.environ.get(TOKEN_ENV, "").strip():
        return token, context
    if not args.user:
        raise MnemoError(f"say whom to chat as: --user <id> (or set ${TOKEN_ENV} to a user's token)")
    return mint_token(args.user, secret=signing_secret()), context


def _reply_text(chunk: dict[str, Any]) -> str:
    content = chunk.get("content")
    if isinstance(content, str):
        return content
    # Providers that stream content blocks: keep their text parts.
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict) and b.get("type") == "text")


async def _stream_turn(client: Any, thread_id: str, args: argparse.Namespace, text: str, context: dict) -> bool:
    """One turn, the answer printed as the model streams it; ``False`` if the run failed."""
    started = False
    async for part in client.runs.stream(
        thread_id,
        args.assistant,
        input={"messages": [{"role": "user", "content": text}]},
        context=context or None,
        stream_mode="messages-tuple",
    ):
        if part.event == "error":
            print(f"\nerror: the run failed: {part.data}", file=sys.stderr)
            return False
        if part.event != "messages":
            continue
        chunk, meta = part.data
        # Only the answering model: the memory writer's model calls stream too.
        if meta.get("langgraph_node") != "call_model" or not str(chunk.get("type", "")).lower().startswith("ai"):
            continue
        for call in chunk.get("tool_call_chunks") or []:
            if call.get("name"):
                print(f"[using {call['name']}]", flush=True)
        if piece := _reply_text(chunk):
            started = True
            print(piece, end="", flush=True)
    if started:
        print(flush=True)
    return True


@command(
    "chat",
    "chat with the agent in the terminal, answers streamed (one line is one message; /new starts a new "
    "conversation, /quit or end of input ends)",
    arg(
        "--user",
        help=f"the user to chat as; without ${TOKEN_ENV}, a user token for them is minted with the signing "
        "secret (development: ./scripts/dev's secret)",
    ),
    arg("--url", default=os.environ.get(URL_ENV) or DEV_URL, help=f"the server (default ${URL_ENV}, else {DEV_URL})"),
    arg("--assistant", default="agent", help="assistant id or graph name (default: agent)"),
    arg("--thread", help="continue this thread (default: a new one)"),
)
async def chat(args: argparse.Namespace) -> int:
    import httpx
    from langgraph_sdk import get_client

    token, context = _chat_credentials(args)
    client = get_client(url=args.url, headers={"Authorization": f"Bearer {token}"})
    interactive = sys.stdin.isatty()
    if interactive:
        print(f"mnemo at {args.url}, assistant {args.assistant!r}. /new: new conversation, /quit: end.")
    thread_id: str | None = args.thread
    try:
        while True:
            if interactive:
                print("you> ", end="", flush=True)
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line or line.strip() == "/quit":
                return 0
            text = line.strip()
            if text == "/new":
                thread_id = None
                continue
            if not text:
                continue
            if thread_id is None:
                thread_id = (await client.threads.create())["thread_id"]
            if not await _stream_turn(client, thread_id, args, text, context):
                return 1
    except httpx.HTTPStatusError as exc:
        print(f"error: {exc.response.status_code} from the server: {_detail(exc.response)}", file=sys.stderr)
        return 1
    except httpx.TransportError as exc:
        print(f"error: cannot reach {args.url} ({exc}); is the server running (./scripts/dev)?", file=sys.stderr)
        return 1


def _detail(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text
    return str(body.get("detail") or body.get("error") or body) if isinstance(body, dict) else str(body)
