"""Whether an extracted value is the user's own: supported by the words of the
user messages it was extracted from.

A model can fill the extraction's schema with what the user never said: the
ids of the notes it was shown (``"n1"``), its prompt's example ("I'm in
Suzhou."), a note it was shown, copied back. Measured with a small model on
llama.cpp's server (docs/bench.md, the real-model check), every turn did.
The schema cannot catch it (the values have the right shape), so the write
does: a note is kept only when at least half of its content words are the
user's and every name in it (a capitalised word past a sentence's start: a
place, a person, a month) was said (:func:`supported`; one shared word let
the prompt's "I moved to Suzhou last March" through on "moved", issue 42), a
revision that drops a note only when the note shares a word with what the
user said, a profile field of the user's own words (:data:`mnemo.kinds.SAID_FIELDS`)
only when every word of it is there. Content words are
:func:`mnemo.core.content_tokens` (function words out, five-letter stems,
whole numbers, CJK characters), so a third-person restatement ("The user is
allergic to peanuts." of "I'm allergic to peanuts") is grounded while a value
in other words than the user's (a translated city) is not: the cost of never
storing what the user did not say (docs/memory.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from mnemo.core import content_tokens

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Causes already logged at WARNING (later ones at INFO): a small model drops
#: values every turn, and one warning says what to do about it.
_warned: set[str] = set()


def said_words(texts: Iterable[str]) -> frozenset[str]:
    """The content words of the user's messages ``texts``."""
    return frozenset().union(*(content_tokens(t) for t in texts))


def shares_a_word(text: str, said: frozenset[str]) -> bool:
    """Whether ``text`` (a note) has a content word of ``said``."""
    return not content_tokens(text).isdisjoint(said)


#: A word of Latin letters as written (its capital tells a name).
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
#: Where a sentence (or a clause a note starts afresh) begins.
_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


def named_words(text: str) -> frozenset[str]:
    """The content words of ``text``'s capitalised words past each sentence's
    first: names, places, months ("Suzhou", "March"), not "The user ..."."""
    found: set[str] = set()
    for sentence in _SENTENCE_END.split(text):
        for word in _LATIN_WORD.findall(sentence)[1:]:
            if word[0].isupper():
                found |= content_tokens(word)
    return frozenset(found)


def supported(text: str, said: frozenset[str]) -> bool:
    """Whether the user's words ``said`` support ``text`` (a note): at least half
    of its content words (one at least) and every one of its :func:`named_words`
    are the user's. Words are compared case-folded; CJK text by character."""
    words = content_tokens(text)
    shared = words & said
    return bool(shared) and 2 * len(shared) >= len(words) and named_words(text) <= said


#: What a model appends to a Chinese place name the user said bare ("杭州" -> "杭州市"):
#: city, province, district, county. Not words of their own in a value that has others.
_PLACE_SUFFIXES = frozenset("市省区县")


def all_words_said(text: str, said: frozenset[str]) -> bool:
    """Whether every content word of ``text`` (a name, a city) is in ``said``;
    a value with no content word is not. A Chinese place's suffix (市, 省, 区,
    县) after a place the user said needs not be said."""
    words = content_tokens(text)
    if text.rstrip()[-1:] in _PLACE_SUFFIXES and len(words) > 1:
        words -= {text.rstrip()[-1]}
    return bool(words) and words <= said


def grounded(what: str, items: Iterable[T], supported: Callable[[T], bool], shown: Callable[[T], str]) -> list[T]:
    """The ``items`` the user's words ``supported``; the others are dropped and
    logged (as ``shown``) under ``what``: at WARNING once per ``what``, at INFO after."""
    kept: list[T] = []
    dropped: list[str] = []
    for item in items:
        if supported(item):
            kept.append(item)
        else:
            dropped.append(shown(item))
    if dropped:
        _log_dropped(what, dropped)
    return kept


def _log_dropped(what: str, values: list[str]) -> None:
    level = logging.INFO if what in _warned else logging.WARNING
    _warned.add(what)
    logger.log(
        level,
        "memory extraction: %d %s not stored, not supported by what the user said (%s); the model may be "
        "copying its prompt or the note ids it was shown: run `python -m mnemo doctor` and see docs/models.md",
        len(values),
        what,
        "; ".join(repr(v[:60]) for v in values[:3]),
    )
