"""Custom routes mounted into the LangGraph server (``langgraph.json`` → ``http.app``).

``/ui`` serves a single-page chat client that talks to the server's own REST API
(threads, runs, store) from the browser: no build step, no extra service.
``/ui/label`` tells the page which namespace label holds a user id, because
ids that are not valid labels (e-mails, Chinese) are mapped by mnemo.
``/ui/dev-token`` is the development sign-in (:mod:`server.dev_login`); the
page sends the token it gets, or one pasted by the user, as ``Bearer``.

The page shows the user's profile and notes next to the chat and lets the
user forget any of them: the memory is the user's to see and to delete.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import Route

from mnemo import MnemoError, user_label
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


app = Starlette(routes=[Route("/ui", page), Route("/ui/label", label),
                        Route("/ui/dev-token", dev_token, methods=["POST"])])
