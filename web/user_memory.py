"""The user's own memory: ``GET /memory/export`` and ``POST /memory/forget``,
for the console (the user signed in) and app backends (an admin naming the user).

Through mnemo's own functions, so a forget is audited. The user comes from the
token checked here, never from the request.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo.app import MnemoError, aexport_user, aforget, aupdate_profile, resolve_user
from web import server_store
from web.caller import BodyError, caller, json_body, route_origin, verified_caller
from web.failures import refusal


async def export_memory(request: Request) -> JSONResponse:
    try:
        user, _ = caller(request, request.query_params.get("user_id"))
        document = await aexport_user(await server_store.get(), user)
    except MnemoError as exc:
        return refusal(exc)
    return JSONResponse(
        document,
        headers={"content-disposition": f'attachment; filename="mnemo-export-{user.label}.json"'},
    )


async def forget_memory(request: Request) -> JSONResponse:
    try:
        who = verified_caller(request)  # the caller first: nothing of an unknown one's body is read
        body = await json_body(request)
    except BodyError as exc:
        return JSONResponse({"error": f"send a JSON object: {{kind: 'profile' | 'note', key}} ({exc})"}, exc.status)
    except MnemoError as exc:
        return refusal(exc)
    kind, key = body.get("kind"), body.get("key")
    if kind not in ("profile", "note") or not isinstance(key, str) or not key:
        return JSONResponse({"error": "kind is 'profile' or 'note' and key is a non-empty string"}, status_code=400)
    try:
        user = resolve_user(who, body.get("user_id"))
        origin = route_origin(who, "POST /memory/forget")
        store = await server_store.get()
        if kind == "profile":
            changes = await aupdate_profile(store, user, {}, forget=[key], origin=origin)
            forgotten: list[Any] = [c["field"] for c in changes]
        else:
            forgotten = [n["id"] for n in await aforget(store, user, note_id=key, origin=origin)]
    except MnemoError as exc:
        return refusal(exc)
    if not forgotten:
        return JSONResponse({"error": f"no {kind} {key!r} to forget"}, status_code=404)
    return JSONResponse({"forgotten": forgotten, "kind": kind})
