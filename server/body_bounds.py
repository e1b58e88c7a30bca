"""Every request body bounded before it is read, on every route: one ASGI layer.

``web/app.py`` mounts :class:`BodyBounds` as its first middleware. With
``http.middleware_order: auth_first`` (``langgraph.json``) the server applies
a custom app's middleware to each of its routes: mnemo's own (``/memory/...``,
``/feedback``, ``/ui/...``), its meta routes (``/ok``, ``/info``, ...) and,
after its authentication, every platform route (threads, runs, store,
assistants, MCP, A2A). So this layer stands ahead of every route's reading:

* a request that carries a body (a ``Content-Length`` over 0, or a
  ``Transfer-Encoding``) from no known caller (no valid token, read by
  :func:`server.credentials.caller_from_headers`, the API's own verifier) is
  answered 401 from its headers, none of the body read; only a route
  :data:`BOUNDS` declares ``open`` (the development sign-in, whose code
  is in its body) takes one, within its bound;
* a known caller's body is held to its route's bound (:data:`BOUNDS`, first
  match; :data:`GENERAL` for a route not named there): a ``Content-Length``
  over it is a 413 before one body message is read, a body sent without one
  (chunked) is read to the bound and no further (413);
* the routes behind it get the body whole, in one message.

The server's in-process client (``langgraph_sdk.get_client()`` with no URL:
``root_path`` ``/noauth``, which no request can set) is mnemo's own code, not
a client: it passes unbounded, as the platform's authentication lets it pass.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.app import MAX_MEMORY_BODY_BYTES, MAX_OPERATOR_BODY_BYTES, Caller, InvalidTokenError
from server.credentials import caller_from_headers
from server.input_limits import MAX_BODY_BYTES, bounded_body, replaying

#: Largest body of the development sign-in (``{"user_id", "code"}``), in bytes.
DEV_TOKEN_BODY_BYTES = 4096


@dataclass(frozen=True)
class Bound:
    """The most bytes a route's body may have: ``user`` for any caller,
    ``admin`` for an admin's where it is larger; an ``open`` route takes
    its body without a caller (it checks what the body says itself)."""

    user: int
    admin: int | None = None
    open: bool = False

    def limit(self, caller: Caller | None) -> int:
        return self.admin if caller is not None and caller.admin and self.admin is not None else self.user


#: Route pattern (``{name}``: one path segment) -> its body's bound; the first
#: match decides. The platform's routes are all at :data:`GENERAL`.
BOUNDS: dict[str, Bound] = {
    "/ui/dev-token": Bound(DEV_TOKEN_BODY_BYTES, open=True),
    "/memory/operator/{name}": Bound(MAX_MEMORY_BODY_BYTES, admin=MAX_OPERATOR_BODY_BYTES),  # an import: admins
    "/memory/notes": Bound(MAX_MEMORY_BODY_BYTES),
    "/memory/notes/{note_id}": Bound(MAX_MEMORY_BODY_BYTES),
    "/memory/notes/{note_id}/invalidate": Bound(MAX_MEMORY_BODY_BYTES),
    "/memory/profile": Bound(MAX_MEMORY_BODY_BYTES),
    "/memory/forget": Bound(MAX_MEMORY_BODY_BYTES),
    "/feedback": Bound(MAX_MEMORY_BODY_BYTES),
}
#: The bound of every route :data:`BOUNDS` does not name (a run's input, a
#: state update, a store item, a search, MCP, A2A: all far below it).
GENERAL = Bound(MAX_BODY_BYTES)


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    segments = ("[^/]+" if s.startswith("{") and s.endswith("}") else re.escape(s) for s in pattern.split("/"))
    return re.compile("/".join(segments) + "/?")


def route_bound(path: str) -> Bound:
    """The bound of the body of a request to ``path``."""
    return next((bound for pattern, bound in BOUNDS.items() if _compiled(pattern).fullmatch(path)), GENERAL)


def has_body(headers: Headers) -> bool:
    """Whether a request with these headers carries a body (HTTP/1.1: a
    ``Content-Length`` over 0, or a ``Transfer-Encoding``)."""
    length = headers.get("content-length", "").strip()
    return "transfer-encoding" in headers or (length.isdigit() and int(length) > 0)


def in_process(scope: Scope) -> bool:
    """The server's own in-process client (the platform's test, ``root_path`` ``/noauth``)."""
    root = scope.get("root_path") or ""
    return root == "/noauth" or root.startswith("/noauth/")


def refused(detail: str, status: int) -> JSONResponse:
    """The layer's answer: the server's own shape (``{"detail"}``, as its authentication's 401)."""
    return JSONResponse({"detail": detail}, status)


class BodyBounds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope) if scope["type"] == "http" else Headers()
        if scope["type"] != "http" or in_process(scope) or not has_body(headers):
            await self.app(scope, receive, send)
            return
        bound = route_bound(scope["path"])
        try:
            caller: Caller | None = caller_from_headers(headers)
        except InvalidTokenError as exc:
            if not bound.open:  # nothing of the body read
                await refused(str(exc), 401)(scope, receive, send)
                return
            caller = None
        limit = bound.limit(caller)
        body = await bounded_body(scope, receive, limit)
        if body is None:
            await refused(f"request body over {limit} bytes", 413)(scope, receive, send)
            return
        await self.app(scope, replaying(body, receive), send)
