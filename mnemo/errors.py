"""Errors raised by mnemo's memory API.

Every error a caller can cause carries a message meant to be shown to a human
(or to the model, when it comes back from a tool call) and says what to do.
"""


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


def check_storable_text(text: str, what: str) -> None:
    """Refuse text PostgreSQL cannot store on every backend alike, so a value
    accepted in tests is accepted in production."""
    if "\x00" in text:
        raise UnstorableValueError(f"{what} contains a NUL character (\\x00), which PostgreSQL cannot store")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UnstorableValueError(f"{what} is not valid Unicode ({exc.reason}: an unpaired surrogate?)") from None
