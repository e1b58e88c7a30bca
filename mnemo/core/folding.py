"""A text as the personal-data finder reads it (:func:`fold`): how a piece is
written (a width, an invisible character, a numeral of another script, a
digit or separator spelled out) hides nothing, and each character of what is
read maps back to where it came from in the text as written. Rules:
``docs/security.md``; tests: ``tests/core/test_personal_data.py``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import NamedTuple

# Digits read out one by one, as a phone or card number is (no library gives
# their place in the text: text2num converts "fifty-five" but returns a new text).
_DIGIT_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine".split())}
_DIGIT_WORDS["oh"] = "0"
_DIGIT_WORD = re.compile(r"(?<![A-Za-z])(zero|oh|one|two|three|four|five|six|seven|eight|nine)(?![A-Za-z])", re.I)
# What unicodedata does not read as a digit: the ideographic zero (a number,
# not a CJK ideograph) and 两, the "two" of phone numbers read out.
_ZH_DIGITS = {"\u3007": 0.0, "两": 2.0}
# Separators spelled out, read as the sign they name: between digits ("650
# dash 253", "138杠0013"), and in an e-mail address ("bob-at-example-dot-com",
# "bob艾特example点com", "bob@example。com"); "bob at example dot com" is the
# e-mail pattern's. And a digit said twice or three times ("double oh seven").
_SPELLED = re.compile(
    r"(?<=\d)[^\S\n]*(?:(?<![A-Za-z])(?P<num>dash|hyphen|minus|dot|period|point|slash)(?![A-Za-z])|(?P<zh>杠|点))[^\S\n]*(?=\d)"
    r"|(?<=[A-Za-z0-9])(?P<sep>[-_])(?P<word>at|dot|period)(?P=sep)(?=[A-Za-z0-9])"
    r"|\s*(?P<at>艾特)\s*(?=[A-Za-z0-9])|(?<=[A-Za-z0-9])(?:\s*(?P<dot>点)\s*|(?P<stop>。))(?=(?-i:[a-z]))"
    r"|(?<![A-Za-z])(?P<times>double|triple)[\s-]*(?P<digit>\d)",
    re.I,
)
_SIGN = {"dash": "-", "hyphen": "-", "minus": "-", "slash": "/", "杠": "-", "at": "@", "艾特": "@"}


def _sign(m: re.Match[str]) -> str:
    """What a spelled separator names (dot, period, point, 点: "."), or a digit repeated."""
    if m["times"]:
        return m["digit"] * (2 if m["times"].lower() == "double" else 3)
    return _SIGN.get(next(w for w in m.groups() if w and w not in "-_").lower(), ".")


class Folded(NamedTuple):
    """A text as the finder reads it; its character ``i`` stands for
    ``original[starts[i]:ends[i]]``."""

    text: str
    starts: list[int]
    ends: list[int]
    original: str = ""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded ``text[start:end]``."""
        return self.starts[start], self.ends[end - 1]


def _fold_char(c: str) -> str:
    if unicodedata.category(c) == "Cf":  # zero-width space and joiners, soft hyphen, BOM
        return ""
    out = []
    for k in unicodedata.normalize("NFKC", c):  # full width, circled digits, every space
        value = _ZH_DIGITS.get(k, unicodedata.numeric(k, None) if "\u4e00" <= k <= "\u9fff" else None)
        if (digit := unicodedata.decimal(k, None)) is not None:  # digits of every script
            out.append(str(digit))
        elif value is not None and value < 10 and value == int(value):  # 〇 零 一 ... 九, 壹 ... 玖, 幺
            out.append(str(int(value)))
        elif unicodedata.category(k) == "Pd":  # every dash
            out.append("-")
        else:
            out.append(k)
    return "".join(out)


def _substitute(folded: Folded, pattern: re.Pattern[str], sign: Callable[[re.Match[str]], str]) -> Folded:
    """``folded`` with each match of ``pattern`` read as ``sign(match)``, each
    of its characters standing for the whole match as written."""
    chars, starts, ends, at = list(folded.text), folded.starts, folded.ends, 0
    out, out_starts, out_ends = [], [], []
    for m in pattern.finditer(folded.text):
        out += chars[at : m.start()]
        out_starts += starts[at : m.start()]
        out_ends += ends[at : m.start()]
        for k in sign(m):
            out.append(k)
            out_starts.append(starts[m.start()])
            out_ends.append(ends[m.end() - 1])
        at = m.end()
    return Folded("".join(out + chars[at:]), out_starts + starts[at:], out_ends + ends[at:], folded.original)


def fold(text: str) -> Folded:
    """``text`` as the finder reads it: invisible characters dropped, NFKC
    (widths, spaces), digits of every script and Chinese numerals as ASCII
    digits, every dash as ``-``, digits spelled out in English ("five", "oh")
    as digits, separators spelled out as their signs ("dash", "艾特"); each
    character mapped back to where it came from."""
    chars, starts, ends = [], [], []
    for i, c in enumerate(text):
        for k in _fold_char(c):
            chars.append(k)
            starts.append(i)
            ends.append(i + 1)
    folded = _substitute(
        Folded("".join(chars), starts, ends, text), _DIGIT_WORD, lambda m: _DIGIT_WORDS[m.group().lower()]
    )
    return _substitute(folded, _SPELLED, _sign)
