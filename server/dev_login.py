"""Development sign-in of the console: a user id in, a user token out.

Served at ``POST /ui/dev-token`` only when ``MNEMO_DEV_LOGIN=1``, and only to a
loopback, same-origin JSON request carrying the code ``./scripts/dev`` printed
at this start (``MNEMO_DEV_LOGIN_CODE``), so a page of another site or another
local account gets nothing; mints ``user`` tokens only, never ``admin`` ones.
Its body is the only one read without a token, bounded small before it is
read (:data:`server.body_bounds.DEV_TOKEN_BODY_BYTES`).
"""

from __future__ import annotations

import hmac
import ipaddress
from datetime import timedelta
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo.app import MnemoError, env, mint_token, secret_from_env, user_label
from server.input_limits import parse_json

ENABLE_ENV = "MNEMO_DEV_LOGIN"
CODE_ENV = "MNEMO_DEV_LOGIN_CODE"
TTL = timedelta(hours=8)
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def refusal(request: Request) -> str | None:
    """Why this request may not get a development token (``None``: it may)."""
    if not env.flag(ENABLE_ENV):
        return "Development sign-in is off (it is on only under ./scripts/dev with its local secret)"
    client = request.client.host if request.client else ""
    try:
        loopback = ipaddress.ip_address(client).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        return "Development sign-in answers loopback clients only"
    host = request.headers.get("host", "")
    if urlsplit(f"//{host}").hostname not in _LOOPBACK_NAMES:
        return "Development sign-in answers only to a loopback host name"
    if request.headers.get("origin") != f"{request.url.scheme}://{host}":
        return "Development sign-in answers only to this server's own pages (same origin)"
    if request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
        return "Development sign-in answers only to this server's own pages (same origin)"
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return "Send the user id as JSON"
    return None


async def dev_token(request: Request) -> JSONResponse:
    if (reason := refusal(request)) is not None:
        return JSONResponse({"error": reason}, status_code=403)
    try:
        body = parse_json(await request.body())  # too deeply nested: a ValueError (400), not a 500
        if not isinstance(body, dict):
            raise ValueError("Send the user id and the code as a JSON object")
        expected = env.raw(CODE_ENV)  # unset or empty: nobody signs in
        if not expected or not hmac.compare_digest(str(body.get("code") or "").encode(), expected.encode()):
            return JSONResponse(
                {"error": "Development sign-in needs this start's code: open the console URL ./scripts/dev printed"},
                status_code=403,
            )
        user_id = body.get("user_id")
        token = mint_token(user_id or "", secret=secret_from_env(), ttl=TTL)
        return JSONResponse({"token": token, "user_id": user_id, "label": user_label(user_id or "")})
    except (ValueError, MnemoError) as exc:
        return JSONResponse({"error": str(exc)}, status_code=400)
