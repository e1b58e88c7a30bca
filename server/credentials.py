"""Where a request's token is read from, for the API and the custom routes alike:
``Authorization: Bearer <token>`` or ``X-Api-Key: <token>`` (the SDKs' ``apiKey``),
the same JWT with the same checks; when both are sent, ``Authorization`` decides
(an unusable one is refused, never skipped for the key).
"""

from __future__ import annotations

from collections.abc import Mapping

from mnemo.app import Caller, caller_from_authorization, secret_from_env

API_KEY_HEADER = "x-api-key"


def _header(headers: Mapping[str, str] | Mapping[bytes, bytes], name: str) -> str | None:
    # The platform's auth handler gets the raw ASGI headers (bytes); Starlette's
    # ``Request.headers`` are str. Names compare case-insensitively.
    for key, value in headers.items():
        if (key.decode("latin-1") if isinstance(key, bytes) else key).lower() == name:
            return value.decode("latin-1") if isinstance(value, bytes) else value
    return None


def authorization_from_headers(headers: Mapping[str, str] | Mapping[bytes, bytes]) -> str | None:
    """The request's credentials as an ``Authorization`` value for
    :func:`mnemo.access.tokens.caller_from_authorization`: the
    ``Authorization`` header when sent, else ``Bearer <X-Api-Key>``, else ``None``."""
    authorization = _header(headers, "authorization")
    if authorization is not None and authorization.strip():
        return authorization
    api_key = _header(headers, API_KEY_HEADER)
    if api_key is not None and api_key.strip():
        return f"Bearer {api_key.strip()}"
    return authorization


def caller_from_headers(headers: Mapping[str, str] | Mapping[bytes, bytes]) -> Caller:
    """The verified caller of a request with these headers: the one credential
    reader of the API (``server/auth.py``), the custom routes (``web/caller.py``)
    and the request guards (``server/platform_guards.py``).

    Raises:
        mnemo.access.InvalidTokenError: no usable token (answer 401).
    """
    return caller_from_authorization(authorization_from_headers(headers), secret=secret_from_env())
