"""Bad requests the platform's own routes would answer with 500, answered
first with the 4xx that says why (ASGI middleware, mounted by ``web/app.py``
after :mod:`server.body_bounds`: only a known caller's body reaches it, within
its route's bound).

* ``POST /store/items/search`` without ``namespace_prefix``: the platform
  reads the key unchecked (``KeyError``); 422 here.
* MCP ``tools/call`` (``POST /mcp``) whose arguments break the run input
  bounds: the platform's handler turns the run route's 413/415 into a 500; the
  same check (:func:`server.access.check_run_request`) answers 413/415 here, and
  403 for a ``params.context`` naming another user (413 past its bound).
  A user at the run cap gets no 429 there either (:func:`server.run_cap.no_early_429`):
  the run is created and ends at once saying why (its lease), which MCP reports.
* A2A ``message/send`` and ``message/stream`` (``POST /a2a/{assistant_id}``,
  either form): the messages the platform will make of the message's parts
  are held to the run input's rule here (413/415/422 with the reason, where
  the platform would answer a JSON-RPC error or -32603); what passes runs
  with :data:`server.access.PLATFORM_A2A` set, so the platform's own A2A mark
  on those messages is admitted (:func:`nodes.client_writes.is_a2a_mark`).
  A user at the run cap gets the run routes' 429 here (the platform's handler
  would answer -32603); past this early check the lease bounds the runs, as for MCP.
* Either with a body nested too deeply to parse: 400.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.app import Caller, ClientWriteError, InvalidInputError, UnsupportedContentError
from nodes.client_writes import check_new_messages
from server.access import (
    PLATFORM_A2A,
    Forbidden,
    check_run_input,
    check_run_request,
    refusal_status,
    request_caller,
)
from server.input_limits import NestedTooDeepError, parse_json, read_body, replaying
from server.run_cap import RETRY_AFTER_S, aat_cap, no_early_429

_GUARDED = re.compile(r"^(/store/items/search|/mcp|/a2a/[^/]+)/?$")
#: The A2A methods that create a run, in both forms the platform takes.
A2A_SENDS = frozenset({"message/send", "message/stream", "SendMessage", "SendStreamingMessage"})
#: Headers whose values the platform copies into each message's A2A mark.
A2A_EXTENSION_HEADERS = ("a2a-extensions", "x-a2a-extensions")


def a2a_messages(message: dict, headers: Headers) -> Iterator[dict]:
    """The messages the platform's A2A route makes of ``message`` (one per text
    part, of its role), once nothing else of the client's would reach the thread.

    Raises:
        mnemo.core.InvalidInputError: a file part (415), a data part, message
            ``metadata`` or an extension header (422: each would write more than text).
    """
    if message.get("metadata") or any(headers.get(name) for name in A2A_EXTENSION_HEADERS):
        raise ClientWriteError("A2A message metadata and extensions are refused: mnemo keeps a message's text only")
    role = "user" if message.get("role") in ("user", "ROLE_USER") else str(message.get("role"))[:40]
    for part in message.get("parts") or []:
        if isinstance(part, dict) and "file" in part:
            raise UnsupportedContentError("mnemo reads text only: an A2A file part is not accepted")
        if isinstance(part, dict) and "data" in part:
            raise ClientWriteError("an A2A data part is refused: a client sends text parts, mnemo's graph the rest")
        if isinstance(part, dict) and "text" in part:
            yield {"role": role, "content": part["text"]}


def refusal(
    path: str, body: Any, headers: Headers | None = None, caller: Caller | None = None
) -> tuple[int, str] | None:
    """``(status, reason)`` when the platform would fail on ``body`` sent to ``path``
    by ``caller`` (``None``: no valid identity, which the platform answers), else ``None``."""
    if not isinstance(body, dict):
        return None  # the route answers malformed bodies itself
    if path == "/store/items/search":
        if "namespace_prefix" not in body:
            return 422, "namespace_prefix is required: a list of namespace labels ([] searches all you may read)"
        return None
    params = body.get("params")
    try:
        if path.startswith("/a2a/") and body.get("method") in A2A_SENDS and isinstance(params, dict):
            if isinstance(message := params.get("message"), dict):
                check_new_messages(list(a2a_messages(message, headers or Headers())))
        elif path == "/mcp" and body.get("method") == "tools/call" and isinstance(params, dict):
            if caller is None:
                check_run_input(params.get("arguments"))
            else:  # the run it starts, as the run routes check it (server/auth.py): the user, then the sizes
                check_run_request(caller, params.get("context"), params.get("arguments"))
    except Forbidden as exc:
        return 403, str(exc)
    except InvalidInputError as exc:
        return refusal_status(exc), str(exc)
    return None


def _caller(scope: Scope) -> Caller | None:
    """The request's caller, from the platform's authentication (it runs first), or ``None``."""
    try:
        return request_caller(scope.get("user"))
    except Forbidden:
        return None


async def a2a_busy(scope: Scope, body: Any) -> str | None:
    """Why the caller of an A2A send may start no run now (the run routes' early
    429, :func:`server.run_cap.aat_cap`), else ``None``: the platform's A2A
    handler would answer a run refused when created with an unexplained -32603."""
    if not isinstance(body, dict) or body.get("method") not in A2A_SENDS:
        return None
    caller = _caller(scope)  # None: the route's own handlers refuse it
    return await aat_cap(caller) if caller is not None else None


class PlatformGuards:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") if scope["type"] == "http" else ""
        if scope["type"] != "http" or scope["method"] != "POST" or not _GUARDED.match(path):
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        parsed: Any = None
        try:
            parsed = parse_json(body or b"null")
            refused = refusal(path, parsed, Headers(scope=scope), _caller(scope))
        except NestedTooDeepError as exc:
            refused = 400, str(exc)
        except ValueError:
            refused = None  # not JSON: the route answers with its own error
        retry = {}
        if refused is None and path.startswith("/a2a/") and (busy := await a2a_busy(scope, parsed)):
            refused, retry = (429, busy), {"Retry-After": str(RETRY_AFTER_S)}
        if refused is not None:
            status, reason = refused
            # Each route's own error shape: the platform's {"detail"}, MCP's and A2A's {"error"}.
            key = "detail" if path == "/store/items/search" else "error"
            await JSONResponse({key: reason}, status, headers=retry)(scope, receive, send)
            return

        # MCP's and A2A's runs are bounded by their lease alone: their handlers would turn
        # a 429 into a 500 or an unexplained -32603; a run ended by its lease says why.
        with no_early_429() if path != "/store/items/search" else contextlib.nullcontext():
            marked = PLATFORM_A2A.set(path.startswith("/a2a/"))
            try:
                await self.app(scope, replaying(body, receive), send)
            finally:
                PLATFORM_A2A.reset(marked)
