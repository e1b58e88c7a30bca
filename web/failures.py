"""How a custom route answers a failure: :func:`refusal` for what mnemo refused
(400, 401 for a token), :func:`unavailable` when the store cannot serve (503)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from mnemo.app import InvalidTokenError, ListingChangedError, StoreOperationError, StoreUnavailableError


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
