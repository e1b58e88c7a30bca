"""The signed-in user's memory, for the console and for app backends.

``GET /memory/export`` and ``POST /memory/forget``, through mnemo's own functions, so
a forget is audited. The user comes from the token checked here, never from the request.
"""

from __future__ import annotations

from typing import Any

from langgraph.store.base import BaseStore
from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo import ListingChangedError, MnemoError, StoreOperationError, StoreUnavailableError
from mnemo.access import InvalidTokenError
from mnemo.audit import Origin
from mnemo.core import Caller
from web.caller import caller, json_object


async def _store() -> BaseStore:
    """The server's own store, as its store API routes and a run's nodes have it
    (behind :mod:`mnemo.stores.guard`): one mnemo write is one ``abatch`` (one
    transaction on PostgreSQL), all or nothing. The route checked the caller.

    Private API of langgraph-api 0.16.7 (guarded by
    tests/project/test_upstream_private_api.py): ``langgraph_api.store.get_store`` is
    what the server's own routes call. Not ``langgraph.config.get_store()``: in
    a custom route it gave a store created before the server configured its
    index (a store the runs never read)."""
    from langgraph_api.store import get_store

    from mnemo.stores import guarded

    return guarded(await get_store())


def route_origin(who: Caller, route: str) -> Origin:
    """The audit's who on a custom route: the admin (an app backend) or the user
    themselves (the console, their own app), by id, and the route."""
    return Origin(source="admin" if who.admin else "user_said", actor=who.user_id, route=route)


def unavailable(exc: Exception) -> JSONResponse:
    """503 with ``Retry-After``: nothing was done, try again shortly."""
    return JSONResponse({"error": str(exc)}, status_code=503, headers={"retry-after": "5"})


def refusal(exc: Exception) -> JSONResponse:
    if isinstance(exc, ListingChangedError | StoreUnavailableError | StoreOperationError):
        # Not the caller's fault: writes kept moving the listing, or the
        # database is down or failed the call (a timeout...); a retry later succeeds.
        return unavailable(exc)
    status = 401 if isinstance(exc, InvalidTokenError) else 400
    return JSONResponse({"error": str(exc)}, status_code=status)


async def export_memory(request: Request) -> JSONResponse:
    from mnemo.access import aexport_user

    try:
        user, _ = caller(request, request.query_params.get("user_id"))
        document = await aexport_user(await _store(), user)
    except MnemoError as exc:
        return refusal(exc)
    return JSONResponse(
        document,
        headers={"content-disposition": f'attachment; filename="mnemo-export-{user.label}.json"'},
    )


async def forget_memory(request: Request) -> JSONResponse:
    from mnemo.kinds import aupdate_profile
    from mnemo.notes import aforget

    body = await json_object(request)
    if body is None:
        return JSONResponse({"error": "send a JSON object: {kind: 'profile' | 'note', key}"}, status_code=400)
    kind, key = body.get("kind"), body.get("key")
    if kind not in ("profile", "note") or not isinstance(key, str) or not key:
        return JSONResponse({"error": "kind is 'profile' or 'note' and key is a non-empty string"}, status_code=400)
    try:
        user, who = caller(request, body.get("user_id"))
        origin = route_origin(who, "POST /memory/forget")
        store = await _store()
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
