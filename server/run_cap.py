"""One user's runs never take every worker: at most :func:`max_runs_per_user`
of a user's threads run at once; the next run of that user is refused with 429
and ``Retry-After`` (``server/auth.py``, ``create_run``). Admins (app backends
acting for many users) are not capped. Checked when a run is created, so two
runs created at the very same moment may both pass: a bound, not a lock.
"""

from __future__ import annotations

import os

from server.access import OWNER

#: Environment variable that sets the cap (default :data:`DEFAULT_MAX_RUNS_PER_USER`).
MAX_RUNS_ENV = "MNEMO_MAX_RUNS_PER_USER"
DEFAULT_MAX_RUNS_PER_USER = 3
#: Seconds a refused client is told to wait (``Retry-After``).
RETRY_AFTER_S = 5


def max_runs_per_user() -> int:
    """The cap from ``MNEMO_MAX_RUNS_PER_USER`` (1-100; unset or unreadable: the default)."""
    try:
        return min(max(int(os.environ.get(MAX_RUNS_ENV, DEFAULT_MAX_RUNS_PER_USER)), 1), 100)
    except ValueError:
        return DEFAULT_MAX_RUNS_PER_USER


async def abusy_threads(owner: str, *, limit: int) -> int:
    """How many of ``owner``'s threads have a run in progress (at most ``limit``),
    asked of the server itself (the in-process client: no HTTP, no auth)."""
    from langgraph_sdk import get_client

    return len(await get_client().threads.search(metadata={OWNER: owner}, status="busy", limit=limit))
