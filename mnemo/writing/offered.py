"""A note a model offers (``remember_note``) is held to the extractor's rule (:func:`refuse_unsaid`)."""

from __future__ import annotations

from collections.abc import Iterable

from mnemo.core import InvalidInputError
from mnemo.writing.grounding import is_question, said_words, supported, supposed_words
from mnemo.writing.withheld import withheld, withholds


def refuse_unsaid(text: str, said: Iterable[str]) -> None:
    """Raise :class:`InvalidInputError` unless the user's messages ``said``
    support ``text`` as a note (:func:`mnemo.writing.grounding.supported`), it states,
    not asks, and it holds no code the user asked not to keep ("大门密码是4827#，不过这个
    你别记哈": :mod:`mnemo.writing.withheld`, as the writing's own notes)."""
    said = list(said)
    if is_question(text):
        raise InvalidInputError("not remembered: a question states no fact; keep what the user stated about themselves")
    if withholds(text, withheld(said)):
        raise InvalidInputError("not remembered: the user asked not to keep this; do not remember it")
    if not supported(text, said_words(said), supposed_words(said)):
        raise InvalidInputError(
            "not remembered: the user's messages do not say this; write the fact in the user's own words "
            "and language (e.g. their sentence, in third person)"
        )
