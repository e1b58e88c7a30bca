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
