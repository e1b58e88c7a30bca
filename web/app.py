"""Custom routes mounted into the LangGraph server (``langgraph.json`` → ``http.app``).

``/ui`` serves a single-page chat client that talks to the server's own REST API
(threads, runs, store) from the browser: no build step, no extra service.
``/ui/label`` tells the page which namespace label holds a user id, because
ids that are not valid labels (e-mails, Chinese) are mapped by mnemo.
``/ui/dev-token`` is the development sign-in (:mod:`server.dev_login`); the
page sends the token it gets, or one pasted by the user, as ``Bearer``.

The page shows the user's profile and notes next to the chat and lets the
user forget any of them: the memory is the user's to see and to delete.

``POST /feedback`` lets a UI or a backend close a case: ``{"thread_id": ...,
"user_id": ..., "outcome": "resolved" | "unresolved"}`` stores the thread's
current case as an episode of that user (``mnemo.episodes``); only resolved
ones are ever shown as examples. The same case recorded by the
``mark_resolved`` tool and by this route is kept once. It needs a bearer
token: a user's closes their own threads only (``user_id`` is ignored); an
admin's (an app backend) acts for the ``user_id`` it names, on that user's
threads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from mnemo import MnemoError, User, user_label
from mnemo.episodes import EPISODES, build_episode
from mnemo.tokens import InvalidTokenError, identity_from_authorization, secret_from_env
from server.access import OWNER
from server.dev_login import dev_token

_PAGE = Path(__file__).with_name("index.html")


async def page(request: Request) -> HTMLResponse:
    # Read per request, off the event loop (the server flags blocking I/O).
    return HTMLResponse(await asyncio.to_thread(_PAGE.read_text, "utf-8"))


async def label(request: Request) -> JSONResponse:
    try:
        return JSONResponse({"label": user_label(request.query_params.get("user_id", ""))})
    except MnemoError as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)


def _caller(request: Request, body: dict) -> tuple[User, bool]:
    """``(user, is_admin)`` from the request's bearer token. Custom routes are
    not behind the platform's authentication, so this route checks the token
    itself, as ``server.auth`` does: a user acts for themselves; an admin (an
    app backend) for the ``user_id`` it names.

    Raises:
        InvalidTokenError: no usable token (401).
        MnemoError: an admin named no valid user (400).
    """
    identity = identity_from_authorization(request.headers.get("authorization"), secret=secret_from_env())
    if identity.is_admin:
        return User.of(str(body.get("user_id") or "")), True
    return User.of(identity.user_id, authenticated=True), False


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
        return JSONResponse(
            {"error": "thread_id is required and outcome is 'resolved' or 'unresolved'"}, status_code=400
        )
    try:
        user, admin = _caller(request, body)
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
    values = cast(dict[str, Any], state.get("values") or {})
    owner = (thread.get("metadata") or {}).get(OWNER)
    if values.get("owner") != user.label or (not admin and owner != user.id):
        return JSONResponse({"error": f"no thread {thread_id!r}"}, status_code=404)
    episode = build_episode(
        convert_to_messages(values.get("messages") or []),
        assistant_id=str((thread.get("metadata") or {}).get("assistant_id") or "agent"),
        thread_id=thread_id,
        outcome=outcome,
        source="feedback_route",
    )
    if episode is None:
        return JSONResponse({"error": "this thread has no answered request to keep"}, status_code=409)
    await client.store.put_item(list(user.namespace(EPISODES)), episode["id"], dict(episode), index=["text"])
    return JSONResponse({"episode": episode})


app = Starlette(
    routes=[
        Route("/ui", page),
        Route("/ui/label", label),
        Route("/ui/dev-token", dev_token, methods=["POST"]),
        Route("/feedback", feedback, methods=["POST"]),
    ]
)
