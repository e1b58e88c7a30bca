"""Bad requests the platform's own routes would answer with 500, answered
first with the 4xx that says why (ASGI middleware, mounted by ``web/app.py``;
the server runs it after its authentication, so only a known caller's body is
read, and never past :data:`server.input_limits.MAX_BODY_BYTES`: 413).

* ``POST /store/items/search`` without ``namespace_prefix``: the platform
  reads the key unchecked (``KeyError``); 422 here.
* MCP ``tools/call`` (``POST /mcp``) whose arguments break the run input
  bounds: the platform's handler turns the run route's 413/415 into a 500; the
  same check (:func:`server.access.check_run_input`) answers 413/415 here.
  A user at the run cap gets no 429 there either (:func:`server.run_cap.no_early_429`):
  the run is created and ends at once saying why (its lease), which MCP reports.
* Either with a body nested too deeply to parse: 400.
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.core import InvalidInputError
from server.access import check_run_input, refusal_status
from server.input_limits import NestedTooDeepError, bounded_body, parse_json, replaying, too_large
from server.run_cap import no_early_429

_GUARDED = re.compile(r"^(/store/items/search|/mcp|/a2a/[^/]+)/?$")


def refusal(path: str, body: Any) -> tuple[int, str] | None:
    """``(status, reason)`` when the platform would fail on ``body`` sent to ``path``, else ``None``."""
    if not isinstance(body, dict):
        return None  # the route answers malformed bodies itself
    if path == "/store/items/search":
        if "namespace_prefix" not in body:
            return 422, "namespace_prefix is required: a list of namespace labels ([] searches all you may read)"
        return None
    params = body.get("params")
    try:
        if path == "/mcp" and body.get("method") == "tools/call" and isinstance(params, dict):
            check_run_input(params.get("arguments"))
    except InvalidInputError as exc:
        return refusal_status(exc), str(exc)
    return None


class PlatformGuards:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") if scope["type"] == "http" else ""
        if scope["type"] != "http" or scope["method"] != "POST" or not _GUARDED.match(path):
            await self.app(scope, receive, send)
            return
        body = await bounded_body(scope, receive)
        if body is None:
            await too_large(scope, receive, send)
            return
        try:
            refused = refusal(path, parse_json(body or b"null"))
        except NestedTooDeepError as exc:
            refused = 400, str(exc)
        except ValueError:
            refused = None  # not JSON: the route answers with its own error
        if refused is not None:
            status, reason = refused
            # Each route's own error shape: the platform's {"detail"}, MCP's {"error"}.
            await JSONResponse({"detail" if path == "/store/items/search" else "error": reason}, status)(
                scope, receive, send
            )
            return

        # The MCP handler's runs are bounded by their lease alone (no 429 it would turn into a 500).
        with no_early_429() if path == "/mcp" else contextlib.nullcontext():
            await self.app(scope, replaying(body, receive), send)
