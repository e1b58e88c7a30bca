"""What a PostgreSQL error means for a store call: an outage, a conflict to run again, or a failed call.

Only a connection that failed, was lost or refused is an outage. A deadlock or a
serialization failure is PostgreSQL aborting one of two concurrent transactions,
and a lock timeout one waiting on another's locks: the call is run again
(bounded in attempts and in time, jittered). Anything else (a statement
timeout, a full disk, too many connections...) is named as it is.
Rationale: ``docs/postgres.md``.
"""

from __future__ import annotations

import random

import psycopg
from psycopg import errors

#: Attempts in all (the first included) of a call that hit a conflict.
CONFLICT_ATTEMPTS = 4
#: Upper bound of the first random pause, in seconds; doubled at each attempt
#: (at most ~0.35 s of waiting over all attempts).
CONFLICT_BASE_DELAY_S = 0.05

#: Seconds from a call's first conflict after which it is no longer run again
#: (the pool's ``statement_timeout``: a call goes on waiting for others' locks
#: about as long as one statement may run; a lock held for good (5 s a wait) is
#: waited for three times). From the first conflict, not the call's start: a
#: call may first wait for a pooled connection (up to the pool's 30 s) under load.
CONFLICT_RETRY_WITHIN_S = 10.0  # postgres_setup.STATEMENT_TIMEOUT_S (which imports this module)

#: Errors PostgreSQL raises to resolve a conflict between transactions (a
#: deadlock, a serialization failure, a lock wait past ``lock_timeout``); running
#: the call again is safe (every store op is idempotent: a put writes a whole
#: value, a delete deletes, reads read).
CONFLICTS: tuple[type[psycopg.Error], ...] = (
    errors.DeadlockDetected,
    errors.SerializationFailure,
    errors.LockNotAvailable,
)

#: SQLSTATEs of a connection that failed or was refused: class 08, and the
#: server shutting down (57P01 admin, 57P02 crash) or still starting (57P03).
_CONNECTION_STATES = ("57P01", "57P02", "57P03")


def is_conflict(exc: BaseException) -> bool:
    """Whether ``exc`` is a deadlock, a serialization failure or a lock timeout."""
    return isinstance(exc, CONFLICTS)


def is_connection_failure(exc: BaseException) -> bool:
    """Whether ``exc`` says PostgreSQL cannot be reached: an error of the
    connection itself (libpq's, with no SQLSTATE, such as a refused or lost
    connection, or no pooled connection in time), class 08, or a server
    shutting down or starting."""
    if not isinstance(exc, psycopg.OperationalError):
        return False
    state = exc.sqlstate
    return state is None or state.startswith("08") or state in _CONNECTION_STATES


def conflict_pause(attempt: int) -> float:
    """Seconds to wait before running a conflicted call again (``attempt`` from 0)."""
    return random.uniform(0, CONFLICT_BASE_DELAY_S * 2**attempt)


def describe(exc: psycopg.Error) -> str:
    """What PostgreSQL said, with the error's name and SQLSTATE."""
    said = (exc.diag.message_primary or str(exc) or "no message").strip().splitlines()[0]
    return f"{said} ({type(exc).__name__}, SQLSTATE {exc.sqlstate})"


def failure_message(exc: psycopg.Error, *, attempts: int = 1) -> str:
    """The message of a call PostgreSQL failed while reachable."""
    tried = f" after {attempts} attempts" if attempts > 1 else ""
    return f"PostgreSQL is up but failed this store call{tried}: {describe(exc)}; try again"
