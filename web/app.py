"""Custom routes mounted into the LangGraph server (``langgraph.json`` → ``http.app``).

``/ui`` (the console), ``/ui/admin`` (proposals and instructions, for admin tokens), ``/ui/common.js``,
``/ui/dev-token``, ``/ui/label``, ``POST /feedback`` (:mod:`web.feedback`), the ``/memory`` routes
(:mod:`web.user_memory`, :mod:`web.app_memory`) and ``/memory/operator/<name>`` (:mod:`web.operator`);
each checks the bearer token itself. Every route's body, the platform's too, is bounded
before it is read (:mod:`server.body_bounds`). Any route whose store is down answers 503.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from mnemo.app import MnemoError, StoreOperationError, StoreUnavailableError, user_label
from server.body_bounds import BodyBounds
from server.dev_login import dev_token
from server.input_limits import BoundedStateUpdates
from server.model_errors import ModelErrorText
from server.platform_guards import PlatformGuards
from web.app_memory import ROUTES as APP_MEMORY_ROUTES
from web.failures import unavailable
from web.feedback import feedback
from web.operator import operator
from web.user_memory import export_memory, forget_memory

_HERE = Path(__file__).parent


def web_file(name: str, media_type: str = "text/html") -> Callable[[Request], Awaitable[Response]]:
    """A route serving ``web/<name>``; the pages hold no data (each call they make checks its token)."""

    async def serve(request: Request) -> Response:
        # Read per request, off the event loop (the server flags blocking I/O).
        return Response(await asyncio.to_thread((_HERE / name).read_text, "utf-8"), media_type=media_type)

    return serve


async def label(request: Request) -> JSONResponse:
    try:
        return JSONResponse({"label": user_label(request.query_params.get("user_id", ""))})
    except MnemoError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)


app = Starlette(
    routes=[
        Route("/ui", web_file("index.html")),
        Route("/ui/admin", web_file("admin.html")),
        Route("/ui/common.js", web_file("common.js", "text/javascript")),
        Route("/ui/label", label),
        Route("/ui/dev-token", dev_token, methods=["POST"]),
        Route("/memory/export", export_memory),
        Route("/memory/forget", forget_memory, methods=["POST"]),
        Route("/memory/operator/{name}", operator, methods=["POST"]),
        *(Route(path, endpoint, methods=methods) for path, endpoint, methods in APP_MEMORY_ROUTES),
        Route("/feedback", feedback, methods=["POST"]),
    ],
    # The server applies a custom app's middleware to each of its routes, its own
    # (after its authentication: middleware_order auth_first) and these: BodyBounds
    # first, so no body is read before its caller is known, nor past its bound.
    middleware=[
        Middleware(BodyBounds),
        Middleware(BoundedStateUpdates),
        Middleware(PlatformGuards),
        Middleware(ModelErrorText),
    ],
    # This app is the server's root: the platform's own routes (/store/...) answer
    # 503 too when the store's database is down, within the pool's timeout.
    exception_handlers={
        StoreUnavailableError: lambda request, exc: unavailable(exc),
        StoreOperationError: lambda request, exc: unavailable(exc),  # up, but failed this call
    },
)
