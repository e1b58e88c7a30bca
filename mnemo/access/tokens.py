"""Bearer tokens: who is calling mnemo's server, as HS256 JWTs (PyJWT).

Claims ``sub`` (user id), ``role`` (``user`` / ``admin``), ``exp`` (required), ``iat``;
the secret is at least :data:`MIN_SECRET_LENGTH` characters and never committed
(:func:`ensure_dev_secret` keeps a development one under ``.mnemo/``). An admin reads
any namespace and runs the operator commands; it writes memory through mnemo like everyone.
"""

from __future__ import annotations

import os
import re
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypedDict

import jwt

from mnemo.core import ROLES, Caller, InvalidTokenError, Role, SecretError, env, user_label

ALGORITHM = "HS256"
SECRET_ENV = "MNEMO_JWT_SECRET"
MIN_SECRET_LENGTH = 32
#: Where ``./scripts/dev`` keeps the development secret (relative to the project).
DEV_SECRET_PATH = Path(".mnemo") / "jwt-secret"
DEFAULT_TTL = timedelta(hours=12)
#: Clock skew tolerated between the minting and the verifying machine.
LEEWAY = timedelta(seconds=10)


class Claims(TypedDict):
    """The payload of a mnemo token."""

    sub: str
    role: Role
    iat: int
    exp: int


def check_secret(secret: str | None) -> str:
    """Return ``secret`` if it can sign tokens, else raise :class:`SecretError`."""
    if not secret:
        raise SecretError(
            f"{SECRET_ENV} is not set: the server refuses to start without it (every request must carry "
            "a signed token). For development, start with ./scripts/dev, which creates a local secret "
            f"in {DEV_SECRET_PATH}."
        )
    if len(secret) < MIN_SECRET_LENGTH:
        raise SecretError(f"{SECRET_ENV} is too short: use at least {MIN_SECRET_LENGTH} random characters")
    return secret


def secret_from_env() -> str:
    """The configured secret (``MNEMO_JWT_SECRET``), checked."""
    return check_secret(env.raw(SECRET_ENV))


def ensure_dev_secret(path: Path = DEV_SECRET_PATH) -> str:
    """The development secret in ``path``, created (random, owner-only) on first use."""
    if path.exists():
        return check_secret(path.read_text("utf-8").strip())
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secret + "\n")
    return secret


def mint_token(
    user_id: str,
    *,
    secret: str,
    role: Role = "user",
    ttl: timedelta = DEFAULT_TTL,
    now: datetime | None = None,
) -> str:
    """A signed token for ``user_id``, valid for ``ttl``.

    Raises:
        MissingUserError: ``user_id`` is empty.
        ValueError: unknown ``role``.
        SecretError: ``secret`` is unusable.
    """
    user_label(user_id)  # same refusal of empty ids as everywhere else
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, not {role!r}")
    issued = now or datetime.now(UTC)
    claims = Claims(sub=user_id, role=role, iat=int(issued.timestamp()), exp=int((issued + ttl).timestamp()))
    return jwt.encode(dict(claims), check_secret(secret), algorithm=ALGORITHM)


def verify_token(token: str, *, secret: str) -> Caller:
    """The caller a token names, once its signature, expiry and claims check out.

    Only HS256 is accepted (``alg: none`` and every other algorithm are
    refused by PyJWT's allow-list).

    Raises:
        InvalidTokenError: with a message fit for a 401 response.
    """
    try:
        claims = jwt.decode(
            token,
            check_secret(secret),
            algorithms=[ALGORITHM],
            options={"require": ["sub", "exp"]},
            leeway=LEEWAY,
        )
    except jwt.ExpiredSignatureError:
        raise InvalidTokenError("Token expired: mint a new one") from None
    except jwt.InvalidSignatureError:
        raise InvalidTokenError("Token signature does not match this server's secret") from None
    except jwt.MissingRequiredClaimError as exc:
        raise InvalidTokenError(f"Token lacks the {exc.claim!r} claim") from None
    except jwt.InvalidTokenError as exc:  # DecodeError, bad sub/iat/nbf types, wrong algorithm...
        raise InvalidTokenError(f"Malformed token: {exc}") from None
    sub, role = claims.get("sub"), claims.get("role", "user")
    if not isinstance(sub, str) or not sub.strip():
        raise InvalidTokenError("Token 'sub' (the user id) is empty")
    if role not in ROLES:
        raise InvalidTokenError(f"Token 'role' must be one of {ROLES}, not {role!r}")
    return Caller(user_id=sub, role=role)


_TTL = re.compile(r"(\d+)\s*([smhd]?)")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_ttl(text: str) -> timedelta:
    """``"90"`` (seconds), ``"30m"``, ``"12h"`` or ``"7d"`` as a positive duration."""
    match = _TTL.fullmatch(text.strip().lower())
    if match is None or int(match.group(1)) <= 0:
        raise ValueError(f"invalid ttl {text!r}: use e.g. 3600, 30m, 12h or 7d")
    return timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])


#: What a caller without a usable header is told to do.
BEARER_HINT = (
    "send 'Authorization: Bearer <token>' or 'X-Api-Key: <token>' (mint one with: python -m mnemo token <user_id>)"
)


def caller_from_authorization(authorization: str | None, *, secret: str) -> Caller:
    """The caller an ``Authorization`` header names (``Bearer <token>``).

    Raises:
        InvalidTokenError: no header, another scheme, or a token that does not
            verify; the message says which and what to send.
    """
    if not authorization or not authorization.strip():
        raise InvalidTokenError(f"Missing credentials: {BEARER_HINT}")
    scheme, _, token = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidTokenError(f"Malformed Authorization header: {BEARER_HINT}")
    return verify_token(token.strip(), secret=secret)
