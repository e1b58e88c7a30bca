"""Who is calling a custom route of ``web/``.

Custom routes (``langgraph.json`` → ``http.app``) are not behind the
platform's authentication, so each one that touches a user's data checks the
token itself (``Authorization: Bearer`` or ``X-Api-Key``, read by
:mod:`server.credentials`), with the same verification as ``server.auth``
(:func:`mnemo.access.tokens.identity_from_authorization`).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from mnemo import User
from mnemo.access import Identity, identity_from_authorization, secret_from_env
from server.credentials import authorization_from_headers


def caller(request: Request, named_user_id: object = None) -> tuple[User, Identity]:
    """``(user, identity)`` from the request's token: a user acts for
    themselves (``named_user_id`` is ignored); an admin (an app backend) for
    the user it names.

    Raises:
        InvalidTokenError: no usable token (answer 401).
        MnemoError: an admin named no valid user (answer 400).
    """
    identity = identity_from_authorization(authorization_from_headers(request.headers), secret=secret_from_env())
    if identity.is_admin:
        return User.of(str(named_user_id or "")), identity
    return User.of(identity.user_id, authenticated=True), identity


async def json_object(request: Request) -> dict[str, Any] | None:
    """The request's body when it is a JSON object; ``None`` otherwise (the
    route answers 400 saying what to send)."""
    try:
        body = await request.json()
    except ValueError:
        return None
    return body if isinstance(body, dict) else None
