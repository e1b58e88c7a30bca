"""Every error mnemo raises on purpose, in one tree under :class:`MnemoError`.

Every error a caller can cause carries a message meant to be shown to a human
(or to the model, when it comes back from a tool call) and says what to do.

::

    MnemoError
    ├── MissingUserError        no user id for the run
    ├── InvalidInputError       (also a ValueError) refused before any write
    │   ├── UnstorableValueError  a value PostgreSQL cannot store
    │   ├── NoteLimitError        the user is at the note cap
    │   ├── MessageTooLongError   a user message past the size limit (mnemo.core.limits)
    │   ├── UnsupportedContentError  a message part that is not text
    │   ├── ClientWriteError      a state write only the graph makes (nodes.client_writes)
    │   └── ValueTooLargeError    metadata, context or an item past its size bound
    ├── IndexMissingError       semantic search on a store without an index
    ├── DimsMismatchError       embedder and store ``dims`` disagree (startup)
    ├── StoreClosedError        a store used after its ``async with`` block
    ├── StoreUnavailableError   the store's database cannot be reached now (HTTP 503)
    ├── StoreOperationError     the database is up but failed this call (a timeout, a full disk...; HTTP 503)
    ├── PartialWriteError       a write in several store calls stopped midway: says what was written
    ├── ListingChangedError     a namespace kept changing while it was paged through
    ├── EmbeddedPostgresError   (also a RuntimeError) the embedded server failed
    ├── ModelUnavailableError   (also a RuntimeError) the chat model cannot be used as configured
    ├── ForeignThreadError      a thread of another user named by a run
    ├── InvalidTokenError       no usable bearer token, or an identity mnemo did not issue
    └── SecretError             no usable signing secret
"""

from typing import Any


class MnemoError(Exception):
    """Base class of every error mnemo raises on purpose."""


class MissingUserError(MnemoError):
    """The run carries no user id: there is no shared default user to fall back to."""


class InvalidInputError(MnemoError, ValueError):
    """A value was rejected before anything was written (too long, empty, wrong type)."""


class UnstorableValueError(InvalidInputError):
    """A value PostgreSQL cannot store (``jsonb``/``text``), refused on every
    backend before anything is written: NUL characters, unpaired surrogates,
    NaN/Infinity, non-string keys, non-JSON types."""


class NoteLimitError(InvalidInputError):
    """The user already keeps as many notes as mnemo allows (``mnemo.notes.model.MAX_NOTES_PER_USER``)."""


class MessageTooLongError(InvalidInputError):
    """A user message longer than ``mnemo.core.limits.MAX_MESSAGE_CHARS``: refused before any work."""


class UnsupportedContentError(InvalidInputError):
    """A message content block mnemo's agent does not read (an image, a file):
    refused before any work rather than sent to the model unseen by memory."""


class ClientWriteError(InvalidInputError):
    """A client asked to write what only mnemo's graph writes: a message of a
    role other than the user's (system, assistant, tool), a state key other
    than ``messages``, a ``goto`` / ``resume`` / ``as_node`` (HTTP 422)."""


class ValueTooLargeError(InvalidInputError):
    """Thread or run metadata, a run's context or a store item past its size
    bound (``mnemo.core.limits``; HTTP 413)."""


class IndexMissingError(MnemoError):
    """Semantic search was asked of a store that has no vector index.

    The store would silently ignore the query and list items instead; mnemo
    refuses. Configure ``store.index`` (see ``langgraph.json``).
    """


class DimsMismatchError(MnemoError):
    """The embedding model and the store's ``dims`` disagree (refused at startup)."""


class StoreClosedError(MnemoError):
    """A store was used after the ``async with`` block that opened it ended."""


class StoreUnavailableError(MnemoError):
    """The store's database cannot be reached now (PostgreSQL down, restarting
    or unreachable): the operation was not done. Raised within a bounded time
    (``mnemo.stores.postgres_setup``); try again shortly (HTTP 503)."""


class StoreOperationError(MnemoError):
    """PostgreSQL is reachable but did not complete this call: a lock or
    statement timeout, a full disk, too many connections, or a conflict
    between transactions (deadlock, serialization failure) still there after
    its retries (``mnemo.stores.postgres_errors``). The message names what
    happened; the store is not marked down (HTTP 503, try again)."""


class PartialWriteError(MnemoError):
    """A write made in several store calls (:func:`mnemo.notes.bulk.aremember_bulk`)
    stopped at one of them: ``written`` inputs, the first ones, are written
    (``results`` says how), none after them. The store's error is the
    ``__cause__``. Calling again with the same inputs writes only the rest."""

    def __init__(self, message: str, *, written: int, results: list[Any]) -> None:
        super().__init__(message)
        self.written = written
        self.results = results


class ListingChangedError(MnemoError):
    """A namespace changed between the pages of every attempt to list it
    (:func:`mnemo.core.reads.alist_rest`): a listing that may miss items is
    never returned. Try again once the writes have settled."""


class EmbeddedPostgresError(MnemoError, RuntimeError):
    """The embedded PostgreSQL could not be started or prepared."""


class ModelUnavailableError(MnemoError, RuntimeError):
    """The configured chat model cannot be used: no credentials, a key the
    server refuses, a server nobody answers, a model name it does not know, or
    a provider package that is not installed (:mod:`mnemo.models.unavailable`).
    The message says which and what to set; it never carries a key. A
    ``RuntimeError`` so that the server shows its message to every client."""


class ForeignThreadError(MnemoError):
    """The run's user is not the user the thread belongs to: its messages are
    never read into this user's memory (a thread belongs to one user)."""


class InvalidTokenError(MnemoError):
    """The bearer token is missing, malformed, expired, wrongly signed or
    carries claims mnemo does not accept. The message says which (HTTP 401)."""


class SecretError(MnemoError):
    """No usable signing secret is configured."""
