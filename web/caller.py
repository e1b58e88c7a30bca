"""Who is calling a custom route of ``web/``.

Custom routes (``langgraph.json`` → ``http.app``) are not behind the
platform's authentication, so each one that touches a user's data checks the
token itself (``Authorization: Bearer`` or ``X-Api-Key``, read by
:mod:`server.credentials`), with the same verification as ``server.auth``
(:func:`mnemo.access.tokens.caller_from_authorization`).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from mnemo.app import Caller, Origin, User, resolve_user
from server.credentials import caller_from_headers
from server.input_limits import NestedTooDeepError, parse_json


def verified_caller(request: Request) -> Caller:
    """The caller whose token the request carries, read the one way every
    route reads it (:func:`server.credentials.caller_from_headers`).

    Raises:
        InvalidTokenError: no usable token (answer 401).
    """
    return caller_from_headers(request.headers)


def caller(request: Request, named_user_id: object = None) -> tuple[User, Caller]:
    """``(user, caller)`` from the request's token (``Authorization: Bearer``
    or ``X-Api-Key``): whose memory the caller reaches
    (:func:`mnemo.app.resolve_user`: a user their own, whatever ``named_user_id``
    says; an admin, an app backend, the user it names).

    Raises:
        InvalidTokenError: no usable token (answer 401).
        MnemoError: an admin named no valid user (answer 400).
    """
    who = verified_caller(request)
    return resolve_user(who, named_user_id), who


def route_origin(who: Caller, route: str) -> Origin:
    """The audit's who on a custom route: the admin (an app backend) or the user
    themselves (the console, their own app), by id, and the route."""
    return Origin(source="admin" if who.admin else "user_said", actor=who.user_id, route=route)


class BodyError(Exception):
    """A request body the route cannot take: ``status`` (400) and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object body (an empty body is ``{}``), as
    :mod:`server.body_bounds` bounded it for its route before any route read it.

    Raises:
        BodyError: 400 when not a JSON object.
    """
    raw = await request.body()
    if not raw.strip():
        return {}
    try:
        body = parse_json(raw)
    except NestedTooDeepError as exc:
        raise BodyError(400, str(exc)) from None
    except ValueError:
        raise BodyError(400, "the body is not JSON: send a JSON object") from None
    if not isinstance(body, dict):
        raise BodyError(400, f"send a JSON object, not a JSON {type(body).__name__}")
    return body
