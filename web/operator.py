"""``POST /memory/operator/<name>``: an admin runs one operator command
(:mod:`mnemo.operator`) on the server's own store.

This is how ``python -m mnemo <command> --url`` reaches the memory of a
running server: the store REST API refuses raw writes of memory
(:mod:`server.access`), so the operation runs here, through mnemo's
functions and their audit trail, on the server's own store (each write one
batch: :func:`web.server_store.get`), with the same code as on PostgreSQL. The
body is the command's parameters by name (``{"user_id": ..., ...}``); the
answer is the operation's document (400 with ``{"error": ...}`` when it
refused). Admin tokens only (403 otherwise); like every custom route it
checks the bearer token itself (:mod:`web.caller`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo.app import OPERATIONS, MnemoError, Target
from web import server_store
from web.caller import BodyError, json_body, verified_caller
from web.failures import refusal


async def operator(request: Request) -> JSONResponse:
    from langgraph_sdk import get_client

    try:
        who = verified_caller(request)
    except MnemoError as exc:
        return refusal(exc)
    if not who.admin:
        return JSONResponse({"error": "operator commands need an admin token"}, status_code=403)
    run = OPERATIONS.get(request.path_params["name"])
    if run is None:
        return JSONResponse({"error": f"no operator command {request.path_params['name']!r}"}, status_code=404)
    try:
        params = await json_body(request)
    except BodyError as exc:
        return JSONResponse({"error": f"send the command's parameters as a JSON object: {exc}"}, status_code=exc.status)
    client = get_client()  # in-process: the server's own API (threads), no auth in between
    try:
        route = f"POST /memory/operator/{request.path_params['name']}"
        document = await run(
            Target(store=await server_store.get(), client=client, actor=who.user_id, route=route), params
        )
    except MnemoError as exc:
        return refusal(exc)
    return JSONResponse(document)
