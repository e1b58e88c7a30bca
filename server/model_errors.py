"""A2A's and MCP's answers for a run the model could not serve, made to say why.

The platform answers A2A ``message/send`` with "Error executing assistant: <the
error's type>" and MCP ``tools/call`` with the type alone: a run that failed with
:class:`~mnemo.ModelUnavailableError` tells those clients nothing they can act on,
while the run routes, the SDK and A2A's stream carry its message. This ASGI layer
(mounted by ``web/app.py``) adds the message to those two answers: what the
process last found the model lacking (:func:`mnemo.app.last_reason`), which is the
configuration every run of the process shares. Nothing else is rewritten; an
answer past :data:`MAX_REWRITTEN` bytes passes as it is.
"""

from __future__ import annotations

import json
import re

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mnemo.app import ModelUnavailableError, last_reason

_ROUTES = re.compile(r"^(/mcp|/a2a/[^/]+)/?$")
_TYPE = ModelUnavailableError.__name__
#: How the platform writes the bare type: A2A's failed task, MCP's error content.
_BARE = (f'"Error executing assistant: {_TYPE}"', f'"text":"{_TYPE}"')
#: Larger answers are passed through untouched (a task with a long history).
MAX_REWRITTEN = 1 << 20


def with_reason(body: bytes) -> bytes:
    """``body`` with the reason after each bare mention of the error's type."""
    if _TYPE.encode() not in body:
        return body
    reason = json.dumps(f"{_TYPE}: {last_reason()}")[1:-1]
    text = body.decode()
    for bare in _BARE:
        text = text.replace(bare, bare.replace(f'{_TYPE}"', f'{reason}"'))
    return text.encode()


class ModelErrorText:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if scope["type"] != "http" or scope["method"] != "POST" or not _ROUTES.match(path):
            await self.app(scope, receive, send)
            return
        start: Message | None = None  # the held start of a JSON answer
        passed = False  # the answer goes out as it comes
        held: list[bytes] = []

        async def sending(message: Message) -> None:
            nonlocal start, passed
            if passed:
                await send(message)
                return
            if message["type"] == "http.response.start":
                kind = dict(message.get("headers", [])).get(b"content-type", b"")
                if kind.startswith(b"application/json"):
                    start = message
                else:  # a stream (A2A's carries the message already): as it is
                    passed = True
                    await send(message)
                return
            assert start is not None, "a body before its start"
            held.append(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if more and sum(map(len, held)) <= MAX_REWRITTEN:
                return
            body = b"".join(held) if more else with_reason(b"".join(held))
            headers = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
            if not more:
                headers.append((b"content-length", str(len(body)).encode()))
            passed = True
            await send({**start, "headers": headers})
            await send({"type": "http.response.body", "body": body, "more_body": more})

        await self.app(scope, receive, sending)
