"""The memory an application writes: notes and profile over REST, and the search that explains a prompt.

``POST /memory/notes``, ``GET|PATCH /memory/notes/{id}``, ``POST /memory/notes/{id}/invalidate``,
``PATCH /memory/profile``, ``GET /memory/search``. Each goes through mnemo's own write path
(dedupe, the note index and sparse vectors, expiry), its writes one audited batch on the
server's own store (:func:`web.server_store.get`: one transaction on PostgreSQL), its audit records
naming the route and the caller. A user token acts on its own memory, an admin token on the
``user_id`` it names (:func:`web.caller.caller`). A bad body is a 4xx naming the field, with
nothing written; a failed store call is 503 with ``Retry-After``, nothing of the request written.
The routes and their precedence: docs/memory.md.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo.app import (
    PROFILE_FIELDS,
    InvalidInputError,
    InvalidTokenError,
    MnemoError,
    NoteLimitError,
    Origin,
    User,
    aexplain,
    aget_note,
    aget_profile,
    aremember,
    arevise,
    aupdate_profile,
    check_message,
    expiry_from,
    normalize_field,
    resolve_user,
    validate_note,
    validate_refers_to,
)
from web import server_store
from web.caller import BodyError, json_body, route_origin, verified_caller
from web.failures import refusal


class FieldError(InvalidInputError):
    """A field of the request that cannot be taken: 400 (or ``status``) naming it."""

    def __init__(self, field: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.field, self.status = field, status


def _fields(body: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for name in body:
        if name not in allowed:
            raise FieldError(name, f"unknown field {name!r}; this route takes {', '.join(allowed)}")


def _text(body: Mapping[str, Any], name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise FieldError(name, f"{name} is required")
        return None
    if not isinstance(value, str):
        raise FieldError(name, f"{name} is a string, got {type(value).__name__}")
    return value


Handler = Callable[[Request, User, Origin, dict[str, Any]], Awaitable[JSONResponse]]


def memory_route(route: str, handler: Handler, *, body: bool = True) -> Callable[[Request], Awaitable[JSONResponse]]:
    """The endpoint around ``handler``: the caller checked, then the body read
    (bounded by :mod:`server.body_bounds`), each failure answered the same way on every route."""

    async def endpoint(request: Request) -> JSONResponse:
        try:
            who = verified_caller(request)
            data = await json_body(request) if body else {}
            named = data.pop("user_id", None) if body else request.query_params.get("user_id")
            user = resolve_user(who, named)
            return await handler(request, user, route_origin(who, route), data)
        except BodyError as exc:
            return JSONResponse({"error": str(exc), "field": "body"}, status_code=exc.status)
        except InvalidTokenError as exc:
            return JSONResponse({"error": str(exc)}, status_code=401)
        except FieldError as exc:
            return JSONResponse({"error": str(exc), "field": exc.field}, status_code=exc.status)
        except MnemoError as exc:  # a failed store call is 503: the write was one batch, nothing of it stayed
            return refusal(exc)

    return endpoint


# ------------------------------------------------------------------ notes

_NOTE_FIELDS = ("text", "expires_at", "refers_to", "user_id")


def _expiry(value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return expiry_from(until=value)
    except InvalidInputError as exc:
        raise FieldError("expires_at", str(exc)) from None


def _checked(field: str, check: Callable[[Any], Any], value: Any) -> Any:
    try:
        return check(value)
    except InvalidInputError as exc:
        raise FieldError(field, str(exc)) from None


async def add_note(request: Request, user: User, origin: Origin, body: dict[str, Any]) -> JSONResponse:
    _fields(body, _NOTE_FIELDS)
    text = _checked("text", validate_note, _text(body, "text", required=True))
    refers_to = _checked("refers_to", validate_refers_to, _text(body, "refers_to"))
    expires_at = _expiry(_text(body, "expires_at"))
    try:
        result = await aremember(
            await server_store.get(),
            user,
            text,
            source="app",
            origin=origin,
            expires_at=expires_at,
            refers_to=refers_to,
        )
    except NoteLimitError as exc:
        raise FieldError("text", str(exc), status=409) from None
    return JSONResponse(dict(result), status_code=201 if result["status"] == "stored" else 200)


async def get_note(request: Request, user: User, origin: Origin, body: dict[str, Any]) -> JSONResponse:
    note_id = request.path_params["note_id"]
    found = await aget_note(await server_store.get(), user, note_id)
    if found is None:
        return JSONResponse({"error": f"no note {note_id!r}", "field": "note_id"}, status_code=404)
    note, invalidated = found
    return JSONResponse({"note": note, "invalidated": invalidated})


async def _revise(request: Request, user: User, origin: Origin, text: str | None) -> JSONResponse:
    note_id = request.path_params["note_id"]
    note = await arevise(await server_store.get(), user, note_id, text=text, origin=origin, source="app")
    if note is None:
        return JSONResponse({"error": f"no note {note_id!r} in recall", "field": "note_id"}, status_code=404)
    return JSONResponse({"note": note, "invalidated": text is None})


async def patch_note(request: Request, user: User, origin: Origin, body: dict[str, Any]) -> JSONResponse:
    _fields(body, ("text", "user_id"))
    return await _revise(request, user, origin, _checked("text", validate_note, _text(body, "text", required=True)))


async def invalidate_note(request: Request, user: User, origin: Origin, body: dict[str, Any]) -> JSONResponse:
    _fields(body, ("user_id",))
    return await _revise(request, user, origin, None)


# ------------------------------------------------------------------ profile


async def patch_profile(request: Request, user: User, origin: Origin, body: dict[str, Any]) -> JSONResponse:
    """A merge patch of the profile: each field given is set (``null`` deletes it),
    the others are left alone; the values' source is ``app``."""
    _fields(body, (*PROFILE_FIELDS, "user_id"))
    if not body:
        raise FieldError("body", f"name at least one profile field: {', '.join(PROFILE_FIELDS)}")
    changes: dict[str, Any] = {}
    for field, value in body.items():
        normalized = _checked(field, lambda v, f=field: normalize_field(f, v), value)  # type: ignore[misc]
        if value is not None and normalized is None:
            raise FieldError(field, f"{field} {value!r} says nothing; send null to delete the field")
        changes[field] = value
    forget = [f for f, v in changes.items() if v is None]
    store = await server_store.get()
    diff = await aupdate_profile(
        store, user, {f: v for f, v in changes.items() if v is not None}, forget=forget, source="app", origin=origin
    )
    return JSONResponse({"changes": diff, "profile": await aget_profile(store, user)})


# ------------------------------------------------------------------ search


async def search(request: Request, user: User, origin: Origin, body: dict[str, Any]) -> JSONResponse:
    """What ``load_memory`` would put in the prompt for the message ``q``."""
    unknown = [k for k in request.query_params if k not in ("q", "user_id")]
    if unknown:
        raise FieldError(unknown[0], f"unknown parameter {unknown[0]!r}; this route takes q, user_id")
    query = request.query_params.get("q", "")
    _checked("q", check_message, query)  # the chat path's bound: q stands for a user's message
    return JSONResponse(dict(await aexplain(await server_store.get(), user, query)))


ROUTES: list[tuple[str, Callable[[Request], Awaitable[JSONResponse]], list[str]]] = [
    ("/memory/notes", memory_route("POST /memory/notes", add_note), ["POST"]),
    ("/memory/notes/{note_id}", memory_route("GET /memory/notes/{id}", get_note, body=False), ["GET"]),
    ("/memory/notes/{note_id}", memory_route("PATCH /memory/notes/{id}", patch_note), ["PATCH"]),
    (
        "/memory/notes/{note_id}/invalidate",
        memory_route("POST /memory/notes/{id}/invalidate", invalidate_note),
        ["POST"],
    ),
    ("/memory/profile", memory_route("PATCH /memory/profile", patch_profile), ["PATCH"]),
    ("/memory/search", memory_route("GET /memory/search", search, body=False), ["GET"]),
]
"""``(path, endpoint, methods)`` of each route, mounted by :mod:`web.app`."""
