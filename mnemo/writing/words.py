"""The words of what the user said and of a value or a note compared to them: content words
(:func:`mnemo.core.content_tokens`), and, in a script with case, words whole (names: "José", "Максим")
and capitalised (:func:`names`). What :mod:`mnemo.writing.grounding` compares."""

from __future__ import annotations

import re
from collections.abc import Iterable

from mnemo.core import content_tokens

#: A run of letters, with the apostrophes and hyphens inside a name ("O'Neil", "Jean-Luc").
_LETTERS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
#: A possessive's ending, left out of a name compared whole ("José's").
_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)
#: Where a sentence (or a clause a note starts afresh) begins.
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def _cased_words(text: str) -> Iterable[tuple[int, str]]:
    """Each word of ``text`` in a script with case (Latin, Greek, Cyrillic ...: its capital
    tells a name), with where it starts; letters without case (Han, kana) split words."""
    for run in _LETTERS.finditer(text):
        start = None
        for i, ch in enumerate(f"{run[0]} "):
            if ch.lower() != ch.upper() or (start is not None and ch in "'’-"):
                start = i if start is None else start
            elif start is not None:
                yield run.start() + start, run[0][start:i]
                start = None


def word_tokens(word: str) -> frozenset[str]:
    """``word`` as the grounding compares it: its content words (:func:`content_tokens`,
    ASCII letters), or, with a letter outside ASCII, the whole word case-folded (without a
    possessive ``'s``: "josé" of "José's")."""
    if word.isascii():
        return content_tokens(word)
    return frozenset({_POSSESSIVE.sub("", word).casefold()})


def unicode_words(text: str) -> frozenset[str]:
    return frozenset().union(*(word_tokens(w) for _, w in _cased_words(text) if not w.isascii()))


def names(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """The tokens of ``text``'s capitalised words: those past a sentence's first word
    (names: "Suzhou", "March", "José"), and each sentence's first word when it is a
    content word (a name or not: "Max is ...", "Works at ...")."""
    inner: set[str] = set()
    opening: set[str] = set()
    for sentence in _SENTENCE_END.split(text):
        first = next((i for i, ch in enumerate(sentence) if ch.isalnum()), -1)
        for start, word in _cased_words(sentence):
            if word[0].isupper():
                (opening if start == first else inner).update(word_tokens(word))
    return frozenset(inner), frozenset(opening)


def named_words(text: str) -> frozenset[str]:
    """The tokens of ``text``'s capitalised words past each sentence's first:
    names, places, months ("Suzhou", "March"), not "The user ..."."""
    return names(text)[0]


def words_of(text: str) -> frozenset[str]:
    """The content words of ``text``, with its words outside ASCII whole ("josé", "максим": not every
    script has content tokens of its own): what :func:`mnemo.writing.grounding.said_words` holds, for a
    value compared to it."""
    return content_tokens(text) | unicode_words(text)
