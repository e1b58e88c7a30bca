"""One user's runs never take every worker: at most :func:`max_runs_per_user`
of a user's runs at once. Admins (app backends acting for many users) are not capped.

The bound is the run lease of :mod:`server.run_lease`, taken when a run enters
the graph, whatever created it. This module also answers early: a run created
while the user's threads are busy is refused with 429 and ``Retry-After``
(``server/auth.py``, ``create_run``), counted by :func:`abusy_threads`, which is
not atomic (two runs created at once may both pass it; the lease holds them).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

from mnemo.app import Caller, env
from server.access import OWNER

#: Environment variable that sets the cap (default :data:`DEFAULT_MAX_RUNS_PER_USER`).
MAX_RUNS_ENV = "MNEMO_MAX_RUNS_PER_USER"
DEFAULT_MAX_RUNS_PER_USER = int(env.SETTINGS[MAX_RUNS_ENV].default)
#: Seconds a refused client is told to wait (``Retry-After``).
RETRY_AFTER_S = 5
#: Set while a request whose route cannot carry a 429 (it answers 500) creates runs.
_NO_EARLY_429: ContextVar[bool] = ContextVar("mnemo_no_early_429", default=False)


def max_runs_per_user() -> int:
    """The cap from ``MNEMO_MAX_RUNS_PER_USER`` (1-100; unset or unreadable: the default)."""
    return env.bounded_int(MAX_RUNS_ENV, 1, 100)


async def abusy_threads(owner: str, *, limit: int) -> int:
    """How many of ``owner``'s threads have a run in progress (at most ``limit``),
    asked of the server itself (the in-process client: no HTTP, no auth)."""
    from langgraph_sdk import get_client

    return len(await get_client().threads.search(metadata={OWNER: owner}, status="busy", limit=limit))


def refusal(cap: int) -> str:
    """What a user over the cap is told (the 429 and a run ended by its lease alike)."""
    return f"{cap} of your runs are in progress; start the next one when one has finished"


@contextlib.contextmanager
def no_early_429() -> Iterator[None]:
    """Within: :func:`aat_cap` answers nothing; the runs created are bounded by
    their lease alone. For platform routes that turn the run route's 429 into
    a 500 or an unexplained error (MCP ``tools/call``, A2A: ``server/platform_guards.py``)."""
    token = _NO_EARLY_429.set(True)
    try:
        yield
    finally:
        _NO_EARLY_429.reset(token)


async def aat_cap(caller: Caller) -> str | None:
    """Why ``caller`` may start no run now (as many of their threads are busy
    as the cap allows), else ``None``; admins are never capped."""
    if caller.admin or _NO_EARLY_429.get():
        return None
    cap = max_runs_per_user()
    return refusal(cap) if await abusy_threads(caller.user_id, limit=cap) >= cap else None
