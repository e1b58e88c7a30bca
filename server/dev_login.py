"""Development sign-in of the console: a user id in, a user token out.

Served at ``POST /ui/dev-token`` by ``web/app.py`` (custom routes are not
behind the platform's authentication), and only when ``MNEMO_DEV_LOGIN=1``,
which ``./scripts/dev`` sets when it runs on its own development secret. Anyone
who can run a process on the machine can read that secret anyway; what this
endpoint must not do is hand a token to a web page of another site open in the
developer's browser. So it answers only when

* the connection comes from a loopback address,
* the ``Host`` is a loopback name (a DNS-rebinding page has its own host name),
* the ``Origin`` is this server's own origin (browsers always send it on a
  cross-origin POST, and a page cannot forge it) and ``Sec-Fetch-Site``, when
  sent, is ``same-origin``,
* the body is JSON (a cross-site form cannot send that without a preflight,
  which the CORS configuration refuses),
* the body carries the code ``./scripts/dev`` printed at this start
  (``MNEMO_DEV_LOGIN_CODE``): another local account, or a program that
  cannot read the terminal, gets no token.

It mints ``user`` tokens only, never ``admin`` ones.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from datetime import timedelta
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse

from mnemo import MnemoError, user_label
from mnemo.access import mint_token, secret_from_env

ENABLE_ENV = "MNEMO_DEV_LOGIN"
CODE_ENV = "MNEMO_DEV_LOGIN_CODE"
TTL = timedelta(hours=8)
_LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def refusal(request: Request) -> str | None:
    """Why this request may not get a development token (``None``: it may)."""
    if os.environ.get(ENABLE_ENV) != "1":
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
        body = await request.json()
        if not isinstance(body, dict):
            raise ValueError("Send the user id and the code as a JSON object")
        expected = os.environ.get(CODE_ENV, "")
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
