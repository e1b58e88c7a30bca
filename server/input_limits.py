"""A state update is held to the client's rule, like a run's input.

``POST /threads/{id}/state`` (and a thread created with ``supersteps``) writes
into a thread without a run, so the ``create_run`` check in ``server/auth.py``
never sees it; the auth handler of these routes gets no body either. This ASGI
middleware (mounted by ``web/app.py``, which the server runs before its
routes) applies :mod:`nodes.client_writes` to each update: user messages
only, within the bounds, no other state key, no ``as_node`` naming a node, no
``command`` but an update. 413, 415 or 422 with the reason, before the server
parses anything; the graph's state holds the same rule (``nodes/state.py``).

The body it reads was bounded by the layer ahead of every route
(:mod:`server.body_bounds`): read only once its caller is known, never past
the route's bound.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.app import MAX_RUN_CHARS, ClientWriteError, InvalidInputError
from nodes.client_writes import check_client_update, check_command
from server.access import refusal_status

#: Largest body of a platform route (:data:`server.body_bounds.GENERAL`), in
#: bytes: a run's input at its bound, JSON escapes included.
MAX_BODY_BYTES = 8 * MAX_RUN_CHARS
_BOUNDED = re.compile(r"^/threads(/[^/]+/state)?/?$")
#: ``as_node`` values that write as the graph's input (what a run's input does).
INPUT_NODES = frozenset({"__start__", "__input__"})


class NestedTooDeepError(ValueError):
    """A JSON body nested deeper than Python's parser can follow (HTTP 400)."""


def parse_json(body: bytes | str) -> Any:
    """``json.loads(body)``; a body nested past the parser's recursion limit
    is a :class:`NestedTooDeepError` (a ``ValueError``, like any bad JSON),
    never the ``RecursionError`` that would answer 500. Every route's parser
    (these middlewares, :func:`web.caller.json_body`, the development sign-in)."""
    try:
        return json.loads(body)
    except RecursionError:
        raise NestedTooDeepError("the JSON body is nested too deeply; send a flatter document") from None


def _updates(path: str, body: Any) -> Iterator[Any]:
    """Each state update ``body`` makes."""
    if not isinstance(body, dict):
        return
    if path.rstrip("/").endswith("/state"):
        yield body
    else:  # POST /threads with supersteps
        yield from (
            u for step in body.get("supersteps") or [] if isinstance(step, dict) for u in step.get("updates") or []
        )


def check_state_update(update: Any) -> None:
    """One state update within the client's rule (a list of ``values`` is one
    write per item).

    Raises:
        mnemo.core.InvalidInputError: as :func:`nodes.client_writes.check_client_update`, an
            ``as_node`` naming a node, or a ``command`` other than an update.
    """
    if not isinstance(update, dict):
        return  # the route itself answers with its own error
    if update.get("as_node") not in (None, *INPUT_NODES):
        raise ClientWriteError(
            f"as_node {str(update['as_node'])[:40]!r} is refused: a client writes as the thread's input, "
            "never as one of the graph's nodes"
        )
    check_command(update.get("command"))
    values = update.get("values")
    for value in values if isinstance(values, list) and all(isinstance(v, dict) for v in values) else [values]:
        check_client_update(value)


async def bounded_body(scope: Scope, receive: Receive, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """The request's body, or ``None`` when it is over ``limit`` bytes: a
    ``Content-Length`` over it is refused unread, a body sent without one
    (chunked) is read no further than the bound."""
    for name, value in scope.get("headers") or []:
        if name.lower() == b"content-length" and value.strip().isdigit() and int(value) > limit:
            return None
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


async def read_body(receive: Receive) -> bytes:
    """The request's whole body, as :class:`server.body_bounds.BodyBounds` bounded it
    ahead of every route (a middleware mounted after it reads it again here)."""
    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message.get("body", b""))
        more = message.get("more_body", False)
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the route ``body``, already read by a middleware,
    then the client's own messages (a disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class BoundedStateUpdates:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _BOUNDED.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        body = await read_body(receive)
        try:
            for update in _updates(scope["path"], parse_json(body or b"null")):
                check_state_update(update)
        except InvalidInputError as exc:
            await JSONResponse({"detail": str(exc)}, refusal_status(exc))(scope, receive, send)
            return
        except NestedTooDeepError as exc:
            await JSONResponse({"detail": str(exc)}, 400)(scope, receive, send)
            return
        except ValueError:
            pass  # not JSON: the route itself answers with its own error

        await self.app(scope, replaying(body, receive), send)
