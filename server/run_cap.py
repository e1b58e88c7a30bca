"""One user's runs never take every worker: at most :func:`max_runs_per_user`
of a user's runs at once. Admins (app backends acting for many users) are not capped.

The bound is the run lease of :mod:`server.run_lease`, taken when a run enters
the graph, whatever created it. This module also answers early: a run created
while the user's threads are busy is refused with 429 and ``Retry-After``
(``server/auth.py``, ``create_run``), counted by :func:`abusy_threads`, which is
not atomic (two runs created at once may both pass it; the lease holds them).
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
