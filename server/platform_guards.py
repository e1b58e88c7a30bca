"""Bad requests the platform's own routes would answer with 500, answered
first with the 4xx that says why (ASGI middleware, mounted by ``web/app.py``).

* ``POST /store/items/search`` without ``namespace_prefix``: the platform
  reads the key unchecked (``KeyError``); 422 here.
* MCP ``tools/call`` (``POST /mcp``) whose arguments break the run input
  bounds: the platform's handler turns the run route's 413/415 into a 500; the
  same check (:func:`server.access.check_run_request`) answers 413/415 here, and
  403 for a ``params.context`` naming another user (413 past its bound).
  A user at the run cap gets no 429 there either (:func:`server.run_cap.no_early_429`):
  the run is created and ends at once saying why (its lease), which MCP reports.
* Either with a body nested too deeply to parse: 400.
"""

from __future__ import annotations

import contextlib
from typing import Any

from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mnemo.core import Caller, InvalidInputError, InvalidTokenError
from server.access import Forbidden, check_run_input, check_run_request, refusal_status
from server.credentials import caller_from_headers
from server.input_limits import NestedTooDeepError, parse_json, replaying
from server.run_cap import no_early_429

_GUARDED = ("/store/items/search", "/mcp")


def refusal(path: str, body: Any, caller: Caller | None = None) -> tuple[int, str] | None:
    """``(status, reason)`` when the platform would fail on ``body`` sent to ``path``
    by ``caller`` (``None``: no valid token, which the platform answers), else ``None``."""
    if not isinstance(body, dict):
        return None  # the route answers malformed bodies itself
    if path == "/store/items/search":
        if "namespace_prefix" not in body:
            return 422, "namespace_prefix is required: a list of namespace labels ([] searches all you may read)"
        return None
    if body.get("method") != "tools/call" or not isinstance(body.get("params"), dict):
        return None
    params = body["params"]
    try:
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
    try:
        return caller_from_headers(Headers(scope=scope))
    except InvalidTokenError:
        return None


class PlatformGuards:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "").rstrip("/") if scope["type"] == "http" else ""
        if scope["type"] != "http" or scope["method"] != "POST" or path not in _GUARDED:
            await self.app(scope, receive, send)
            return
        body = await Request(scope, receive).body()
        try:
            parsed = parse_json(body or b"null")
            refused = refusal(path, parsed, _caller(scope))
        except NestedTooDeepError as exc:
            refused = 400, str(exc)
        except ValueError:
            refused = None  # not JSON: the route answers with its own error
        if refused is not None:
            status, reason = refused
            # Each route's own error shape: the platform's {"detail"}, MCP's {"error"}.
            await JSONResponse({"error" if path == "/mcp" else "detail": reason}, status)(scope, receive, send)
            return

        # The MCP handler's runs are bounded by their lease alone (no 429 it would turn into a 500).
        with no_early_429() if path == "/mcp" else contextlib.nullcontext():
            await self.app(scope, replaying(body, receive), send)
