"""Custom routes mounted into the LangGraph server (``langgraph.json`` → ``http.app``).

``/ui`` serves a single-page chat client that talks to the server's own REST API
(threads, runs, store) from the browser: no build step, no extra service.
``/ui/label`` tells the page which namespace label holds a user id, because
ids that are not valid labels (e-mails, Chinese) are mapped by mnemo.

The page shows the user's profile and notes next to the chat and lets the
user forget any of them: the memory is the user's to see and to delete.

``POST /feedback`` lets a UI or a backend close a case: ``{"thread_id": ...,
"user_id": ..., "outcome": "resolved" | "unresolved"}`` stores the thread's
current case as an episode of that user (``mnemo.episodes``); only resolved
ones are ever shown as examples. The same case recorded by the
``mark_resolved`` tool and by this route is kept once. When the server
authenticates callers, the authenticated identity is the user and
``user_id`` is ignored.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from mnemo import MnemoError, User, user_label
from mnemo.episodes import EPISODES, build_episode

_PAGE = Path(__file__).with_name("index.html")


async def page(request: Request) -> HTMLResponse:
    # Read per request, off the event loop (the server flags blocking I/O).
    return HTMLResponse(await asyncio.to_thread(_PAGE.read_text, "utf-8"))


async def label(request: Request) -> JSONResponse:
    try:
        return JSONResponse({"label": user_label(request.query_params.get("user_id", ""))})
    except MnemoError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)


def _caller(request: Request, body: dict) -> User:
    """The authenticated identity when the server has one, else the body's ``user_id``."""
    user = request.scope.get("user")
    if user is not None and getattr(user, "is_authenticated", False) and getattr(user, "identity", ""):
        return User.of(user.identity, authenticated=True)
    return User.of(str(body.get("user_id") or ""))


async def feedback(request: Request) -> JSONResponse:
    from langchain_core.messages import convert_to_messages
    from langgraph_sdk import get_client

    try:
        body = await request.json()
        if not isinstance(body, dict):
            raise ValueError
    except ValueError:
        return JSONResponse({"error": "send a JSON object: {thread_id, user_id, outcome}"}, status_code=400)
    outcome = body.get("outcome", "resolved")
    thread_id = str(body.get("thread_id") or "")
    if outcome not in ("resolved", "unresolved") or not thread_id:
        return JSONResponse({"error": "thread_id is required and outcome is 'resolved' or 'unresolved'"},
                            status_code=400)
    try:
        user = _caller(request, body)
    except MnemoError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
    client = get_client()  # in-process: the server's own API
    try:
        thread = await client.threads.get(thread_id)
        state = await client.threads.get_state(thread_id)
    except Exception:
        return JSONResponse({"error": f"no thread {thread_id!r}"}, status_code=404)
    episode = build_episode(
        convert_to_messages((state.get("values") or {}).get("messages") or []),
        assistant_id=str((thread.get("metadata") or {}).get("assistant_id") or "agent"),
        thread_id=thread_id, outcome=outcome, source="feedback_route")
    if episode is None:
        return JSONResponse({"error": "this thread has no answered request to keep"}, status_code=409)
    await client.store.put_item(list(user.namespace(EPISODES)), episode["id"], dict(episode), index=["text"])
    return JSONResponse({"episode": episode})


app = Starlette(routes=[Route("/ui", page), Route("/ui/label", label),
                        Route("/feedback", feedback, methods=["POST"])])
