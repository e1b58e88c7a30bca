"""Custom routes mounted into the LangGraph server (``langgraph.json`` → ``http.app``).

``/ui`` (the console), ``/ui/admin`` (proposals and instructions, for admin tokens), ``/ui/common.js``,
``/ui/dev-token``, ``/ui/label``, ``POST /feedback``, the ``/memory`` routes
(:mod:`web.memory`, :mod:`web.memory_api`) and ``/memory/operator/<name>`` (:mod:`web.operator`);
each checks the bearer token itself. Any route whose store is down answers 503.
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

from mnemo import MnemoError, StoreOperationError, StoreUnavailableError, user_label
from mnemo.access import InvalidTokenError
from mnemo.kinds import DEFAULT_ASSISTANT, arecord_episode, build_episode
from server.access import OWNER
from server.dev_login import dev_token
from server.input_limits import BoundedStateUpdates
from server.platform_guards import PlatformGuards
from web import memory
from web.caller import caller, json_object
from web.memory import export_memory, forget_memory, unavailable
from web.memory_api import ROUTES as MEMORY_ROUTES
from web.operator import operator

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


async def feedback(request: Request) -> JSONResponse:
    from langchain_core.messages import convert_to_messages
    from langgraph_sdk import get_client

    body = await json_object(request)
    if body is None:
        return JSONResponse({"error": "send a JSON object: {thread_id, user_id, outcome}"}, status_code=400)
    outcome = body.get("outcome", "resolved")
    thread_id = str(body.get("thread_id") or "")
    if outcome not in ("resolved", "unresolved") or not thread_id:
        return JSONResponse(
            {"error": "thread_id is required and outcome is 'resolved' or 'unresolved'"}, status_code=400
        )
    try:
        user, who = caller(request, body.get("user_id"))
    except InvalidTokenError as exc:
        return JSONResponse({"error": str(exc)}, status_code=401)
    except MnemoError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    # In-process, the server's own API answers without auth: the owner check
    # below is this route's, and a thread of someone else is "not found".
    client = get_client()
    try:
        thread = await client.threads.get(thread_id)
        state = await client.threads.get_state(thread_id)
    except Exception:
        return JSONResponse({"error": f"no thread {thread_id!r}"}, status_code=404)
    owner = (thread.get("metadata") or {}).get(OWNER)
    values = state["values"] if isinstance(state["values"], dict) else {}
    if values.get("owner") != user.label or (not who.admin and owner != user.id):
        return JSONResponse({"error": f"no thread {thread_id!r}"}, status_code=404)
    episode = build_episode(
        convert_to_messages(values.get("messages") or []),
        assistant_id=str((thread.get("metadata") or {}).get("assistant_id") or DEFAULT_ASSISTANT),
        thread_id=thread_id,
        outcome=outcome,
        source="feedback_route",
    )
    if episode is None:
        return JSONResponse({"error": "this thread has no answered request to keep"}, status_code=409)
    # Written through mnemo on the server's own store, as every /memory route writes.
    await arecord_episode(await memory._store(), user, episode)
    return JSONResponse({"episode": episode})


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
        *(Route(path, endpoint, methods=methods) for path, endpoint, methods in MEMORY_ROUTES),
        Route("/feedback", feedback, methods=["POST"]),
    ],
    # The server runs a custom app's middleware before all of its own routes.
    middleware=[Middleware(BoundedStateUpdates), Middleware(PlatformGuards)],
    # This app is the server's root: the platform's own routes (/store/...) answer
    # 503 too when the store's database is down, within the pool's timeout.
    exception_handlers={
        StoreUnavailableError: lambda request, exc: unavailable(exc),
        StoreOperationError: lambda request, exc: unavailable(exc),  # up, but failed this call
    },
)
