"""The server's trust boundary: ``langgraph.json`` → ``auth.path``.

:func:`authenticate` verifies the JWT of ``Authorization: Bearer`` or ``X-Api-Key``
(:mod:`server.credentials`) on every API request;
the ``@auth.on`` handlers scope each resource to its owner (:mod:`server.access`) and
refuse anything without a handler. The server does not start without ``MNEMO_JWT_SECRET``.
"""

from __future__ import annotations

from typing import Any, cast

from langgraph_sdk import Auth

from mnemo.app import Caller, InvalidInputError, InvalidTokenError, secret_from_env
from server.access import (
    PLATFORM_A2A,
    Forbidden,
    StoreAction,
    authorize_assistants,
    authorize_store,
    check_item_size,
    check_run_request,
    check_sizes,
    owner_filter,
    refusal_status,
    request_caller,
    stamp_owner,
)
from server.credentials import caller_from_headers
from server.run_cap import RETRY_AFTER_S, aat_cap

secret_from_env()  # fail at start-up, not at the first request

auth = Auth()


def _unauthorized(detail: str) -> Auth.exceptions.HTTPException:
    # The platform answers {"detail": ...} with this status (it keeps no headers).
    return Auth.exceptions.HTTPException(status_code=401, detail=detail)


async def authenticate(headers: dict[bytes, bytes]) -> dict[str, Any]:
    try:
        caller = caller_from_headers(headers)
    except InvalidTokenError as exc:
        raise _unauthorized(str(exc)) from None
    return {"identity": caller.user_id, "role": caller.role, "permissions": [f"role:{caller.role}"]}


def _caller(ctx: Auth.types.AuthContext) -> Caller:
    try:
        return request_caller(ctx.user)
    except Forbidden as exc:
        raise _forbidden(exc) from None


def _forbidden(exc: Forbidden) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=403, detail=str(exc))


def _refused(exc: InvalidInputError) -> Auth.exceptions.HTTPException:
    return Auth.exceptions.HTTPException(status_code=refusal_status(exc), detail=str(exc))


async def deny_by_default(ctx: Auth.types.AuthContext, value: dict) -> bool:
    """Resources without a handler below (future platform routes) are refused."""
    return False


async def on_threads(ctx: Auth.types.AuthContext, value: dict) -> Auth.types.FilterType | None:
    """Threads and their runs: stamped with the owner, filtered by it.

    ``create_run`` also refuses a user's run that names another user; the
    returned filter makes the platform refuse a run on another user's thread.
    """
    caller = _caller(ctx)
    if ctx.action in ("create", "update", "create_run"):
        stamp_owner(caller, value)
        try:
            check_sizes(value.get("metadata"))
        except InvalidInputError as exc:
            raise _refused(exc) from None
    if ctx.action == "create_run":
        kwargs = value.get("kwargs") or {}
        try:
            check_run_request(
                caller, kwargs.get("context"), kwargs.get("input"), kwargs.get("command"), a2a=PLATFORM_A2A.get()
            )
        except Forbidden as exc:
            raise _forbidden(exc) from None
        except InvalidInputError as exc:
            raise _refused(exc) from None
        if (busy := await aat_cap(caller)) is not None:
            retry = {"Retry-After": str(RETRY_AFTER_S)}
            raise Auth.exceptions.HTTPException(status_code=429, detail=busy, headers=retry)
    return owner_filter(caller)


#: Why a cron is refused (403): the platform fires it under the bare user id of its
#: creator, with no mnemo token or role, so it could never run as that user.
CRONS_REFUSED = (
    "mnemo does not run crons: a cron fires without its creator's token, so it cannot run as you "
    "under your bounds; schedule runs from your app (POST /threads/{id}/runs) instead"
)


async def on_crons(ctx: Auth.types.AuthContext, value: dict) -> Auth.types.FilterType | None:
    """Crons are refused when created or changed (:data:`CRONS_REFUSED`); listing
    and deleting old ones stay, scoped like threads."""
    caller = _caller(ctx)
    if ctx.action in ("create", "update"):
        raise Auth.exceptions.HTTPException(status_code=403, detail=CRONS_REFUSED)
    return owner_filter(caller)


async def on_assistants(ctx: Auth.types.AuthContext, value: dict) -> None:
    try:
        authorize_assistants(_caller(ctx), ctx.action)
    except Forbidden as exc:
        raise _forbidden(exc) from None


async def on_store(ctx: Auth.types.AuthContext, value: dict) -> None:
    """The platform uses ``value["namespace"]`` after this handler: a user's
    empty search prefix is narrowed here to their own label."""
    try:
        # Registered for the store alone, so the action is a store action.
        namespace = authorize_store(_caller(ctx), cast(StoreAction, ctx.action), value.get("namespace"))
    except Forbidden as exc:
        raise _forbidden(exc) from None
    if ctx.action == "put":
        try:
            check_item_size(value.get("value"))
        except InvalidInputError as exc:
            raise _refused(exc) from None
    if namespace or value.get("namespace") is not None:  # an admin's unfiltered listing stays None
        value["namespace"] = namespace


# Registered by calls rather than decorators: the same handlers, which
# scripts/mutation can mutate (mutmut skips decorated functions).
auth.authenticate(authenticate)
auth.on(deny_by_default)
auth.on.threads(on_threads)
auth.on.crons(on_crons)
auth.on.assistants(on_assistants)
auth.on.store(on_store)
