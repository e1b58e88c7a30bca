"""How a note the writing reads in code quotes the user (:mod:`mnemo.writing.places`,
:mod:`mnemo.writing.until`, :mod:`mnemo.writing.remembered`, :mod:`mnemo.writing.contact`):
their words, in the form of the language they write, so the note is grounded by construction."""

from __future__ import annotations

import re
from collections.abc import Sequence

from mnemo.writing.extraction import MAX_NOTE_TEXT, writing_language

#: How the note quotes the user, by the language they write (:func:`writing_language`).
_SAID = {"zh": "用户说：“{}”", "ja": "ユーザーの言葉：「{}」"}
_SAID_ELSE = "The user said: “{}”"


#: Words that make a sentence about the user: "I", "my", "we", "nobody's home", "我", "家".
ABOUT_USER = re.compile(r"\b(?:i|i'm|i'll|i've|me|my|we|we're|our|us|nobody|no\s+one)\b|我|家", re.IGNORECASE)


def quoting(texts: Sequence[str]) -> str:
    """How a note quotes the user, in the language their ``texts`` are written in: a ``{}`` for the words."""
    return _SAID.get(writing_language(texts) or "", _SAID_ELSE)


def quoted(form: str, words: str) -> str:
    """The note ``form`` (of :func:`quoting`) quoting ``words``, cut to fit a note."""
    return form.format(words[: MAX_NOTE_TEXT - len(form) + 2])
