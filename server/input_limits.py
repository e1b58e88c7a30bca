"""The messages a state update adds are bounded like a run's.

``POST /threads/{id}/state`` (and a thread created with ``supersteps``) writes
messages into a thread without a run, so the ``create_run`` check in
``server/auth.py`` never sees them; the auth handler of these routes gets no
body either. This ASGI middleware (mounted by ``web/app.py``, which the
server runs before its routes) applies :func:`mnemo.core.check_new_messages`
to them: 413 or 415 with the reason, before the server parses anything.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.core import MAX_RUN_CHARS, MessageTooLongError, UnsupportedContentError, check_new_messages

#: Largest body of a bounded route, in bytes (JSON escapes cost some room).
MAX_BODY_BYTES = 8 * MAX_RUN_CHARS
_BOUNDED = re.compile(r"^/threads(/[^/]+/state)?/?$")


class NestedTooDeepError(ValueError):
    """A JSON body nested deeper than Python's parser can follow (HTTP 400)."""


def parse_json(body: bytes | str) -> Any:
    """``json.loads(body)``; a body nested past the parser's recursion limit
    is a :class:`NestedTooDeepError` (a ``ValueError``, like any bad JSON),
    never the ``RecursionError`` that would answer 500. Every route's parser
    (this middleware, :func:`web.caller.json_object`)."""
    try:
        return json.loads(body)
    except RecursionError:
        raise NestedTooDeepError("the JSON body is nested too deeply; send a flatter document") from None


def _added_messages(path: str, body: Any) -> Iterator[Any]:
    """The ``messages`` each state update of ``body`` would add."""
    if not isinstance(body, dict):
        return
    if path.rstrip("/").endswith("/state"):
        updates = [body]
    else:  # POST /threads with supersteps
        updates = [
            u for step in body.get("supersteps") or [] if isinstance(step, dict) for u in step.get("updates") or []
        ]
    for update in updates:
        values = update.get("values") if isinstance(update, dict) else None
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, dict) and "messages" in value:
                yield value["messages"]


class BoundedStateUpdates:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or not _BOUNDED.match(scope["path"]):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                await JSONResponse({"detail": f"request body over {MAX_BODY_BYTES} bytes"}, 413)(scope, receive, send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        try:
            for messages in _added_messages(scope["path"], parse_json(body or b"null")):
                check_new_messages(messages)
        except MessageTooLongError as exc:
            await JSONResponse({"detail": str(exc)}, 413)(scope, receive, send)
            return
        except UnsupportedContentError as exc:
            await JSONResponse({"detail": str(exc)}, 415)(scope, receive, send)
            return
        except NestedTooDeepError as exc:
            await JSONResponse({"detail": str(exc)}, 400)(scope, receive, send)
            return
        except ValueError:
            pass  # not JSON: the route itself answers with its own error

        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
