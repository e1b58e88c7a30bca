"""``python -m mnemo chat``: the agent in a terminal, answers streamed."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from mnemo.cli.command_line import TOKEN_ENV, URL_ENV, arg, command
from mnemo.cli.token_commands import signing_secret
from mnemo.core import MnemoError, env

#: Where ``./scripts/dev`` serves by default.
DEV_URL = "http://127.0.0.1:2024"
#: Where ``./scripts/dev`` writes the URL it serves at (whatever its ``--port``), in its checkout.
DEV_URL_PATH = Path(".mnemo") / "dev-url"


def server_url(given: str | None) -> str:
    """The server to talk to: ``--url``, else ``$MNEMO_URL``, else the one ``./scripts/dev``
    of this checkout last started (:data:`DEV_URL_PATH`), else :data:`DEV_URL`."""
    if given:
        return given
    if url := env.text(URL_ENV, strip=True):
        return url
    try:
        return DEV_URL_PATH.read_text().strip() or DEV_URL
    except OSError:
        return DEV_URL


def _chat_credentials(args: argparse.Namespace) -> tuple[str, dict[str, str]]:
    """``(token, context)`` of a chat: ``$MNEMO_TOKEN`` as given (``--user``
    then names whom an admin token acts for; a user token may name only
    itself, the server refuses anyone else), or, without one, a user token
    for ``--user`` minted with the signing secret (development)."""
    from mnemo.access import mint_token  # deferred: python -m mnemo loads every command

    context = {"user_id": args.user} if args.user else {}
    if token := env.text(TOKEN_ENV, strip=True):
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
            print(f"\nerror: the run failed: {_run_error(part.data)}", file=sys.stderr)
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
    arg(
        "--url",
        help=f"the server (default ${URL_ENV}, else where ./scripts/dev of this checkout serves ({DEV_URL_PATH}), "
        f"else {DEV_URL})",
    ),
    arg("--assistant", default="agent", help="assistant id or graph name (default: agent)"),
    arg("--thread", help="continue this thread (default: a new one)"),
)
async def chat(args: argparse.Namespace) -> int:
    """Exit status 0, or 1 when a turn failed (each failure is said, and the chat goes on)."""
    from langgraph_sdk import get_client

    token, context = _chat_credentials(args)
    args.url = server_url(args.url)
    client = get_client(url=args.url, headers={"Authorization": f"Bearer {token}"})
    interactive = sys.stdin.isatty()
    if interactive:
        print(f"mnemo at {args.url}, assistant {args.assistant!r}. /new: new conversation, /quit: end.")
    thread_id: str | None = args.thread
    failed = False
    while True:
        if interactive:
            print("you> ", end="", flush=True)
        line = await asyncio.to_thread(sys.stdin.readline)
        if not line or line.strip() == "/quit":
            return int(failed)
        text = line.strip()
        if text == "/new":
            thread_id = None
            continue
        if not text:
            continue
        try:
            if thread_id is None:
                thread_id = (await client.threads.create())["thread_id"]
            ok = await _stream_turn(client, thread_id, args, text, context)
        except Exception as exc:  # said, and the next line is another try: the chat stays
            ok = False
            print(f"error: {_failure(exc, args.url)}", file=sys.stderr)
        failed = failed or not ok


def _failure(exc: Exception, url: str) -> str:
    import httpx

    if isinstance(exc, httpx.HTTPStatusError):
        return f"{exc.response.status_code} from the server: {_detail(exc.response)}"
    if isinstance(exc, httpx.TransportError):
        return f"cannot reach {url} ({exc}); is the server running (./scripts/dev)?"
    return f"{type(exc).__name__}: {exc}"


def _run_error(data: Any) -> str:
    """What a failed run's ``error`` event says (the server sends ``{"error": type, "message": ...}``)."""
    if isinstance(data, dict) and data.get("message"):
        return str(data["message"])
    return str(data)


def _detail(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text
    return str(body.get("detail") or body.get("error") or body) if isinstance(body, dict) else str(body)
