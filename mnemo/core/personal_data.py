"""Personal data in text: e-mail addresses, phone numbers, card and other long numbers, one finder.

What a shared text must not carry (a promoted episode is scrubbed, a shared
instruction refused). Phone numbers are found by ``phonenumbers`` (libphonenumber's
formats of every country); what it cannot know (order, account, card numbers, any
run of five digits or more) by a pattern. Amounts ("€35.50", "1,299"), dates and
short numbers ("2 items", "12 May", "2026-05-12") are kept. Rules: ``docs/security.md``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import phonenumbers

#: Regions whose national formats (no ``+``) are tried; a number written with
#: ``+`` is found whichever region is tried. A user's profile says little about
#: where their number is from, so: mnemo's languages' main regions and the
#: largest others. A national number of another region is still a digit run.
PHONE_REGIONS = ("CN", "US", "GB", "IN", "AU", "FR", "DE")

#: Digits a run needs to be an identifier (an order, account or card number).
MIN_NUMBER_DIGITS = 5

# ASCII only: \w would take the Chinese words before an address ("邮箱是a@b.cn").
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
# Digit groups joined by at most two of " -()/", never starting or ending
# inside an amount or a decimal ("35.50", "1,299": a "." or "," next to a digit).
_NUMBER = re.compile(r"(?<![\d.,])[#+]?\(?\d(?:[ \-()/]{0,2}\d)*(?!\d|[.,]\d)")
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")

#: Kind -> the placeholder a scrubbed text shows; on one span, the first kind wins.
PLACEHOLDERS = {"email": "[email]", "card": "[card]", "phone": "[phone]", "number": "[number]"}
_RANK = {kind: i for i, kind in enumerate(PLACEHOLDERS)}


class Found(NamedTuple):
    start: int
    end: int
    kind: str
    text: str


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _candidates(text: str) -> Iterator[Found]:
    for m in _EMAIL.finditer(text):
        yield Found(m.start(), m.end(), "email", m.group())
    for region in PHONE_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            yield Found(match.start, match.end, "phone", match.raw_string)
    for m in _NUMBER.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if len(digits) < MIN_NUMBER_DIGITS or _ISO_DATE.fullmatch(m.group()):
            continue
        kind = "card" if 13 <= len(digits) <= 19 and _luhn(digits) and not m.group().startswith("+") else "number"
        yield Found(m.start(), m.end(), kind, m.group())


def find_personal_data(text: str) -> list[Found]:
    """Every piece of personal data in ``text``, in order, none overlapping
    (of overlapping finds the one that starts first, then the longest, then
    by kind in the order of :data:`PLACEHOLDERS`)."""
    found: list[Found] = []
    for f in sorted(_candidates(text), key=lambda f: (f.start, f.start - f.end, _RANK[f.kind])):
        if not found or f.start >= found[-1].end:
            found.append(f)
    return found


def personal_words(words: Iterable[str | None]) -> list[str]:
    """The words that identify a user (id, name, city...) worth looking for:
    stripped, two characters or more, each once, in the order given."""
    return list(dict.fromkeys(w.strip() for w in words if w and len(w.strip()) >= 2))


def scrub_personal_data(text: str, personal: Iterable[str | None] = ()) -> str:
    """``text`` with its personal data (:func:`find_personal_data`) replaced by
    placeholders, then each of the ``personal`` words (any case, the longest
    first) by ``[redacted]``."""
    out, at = [], 0
    for f in find_personal_data(text):
        out += [text[at : f.start], PLACEHOLDERS[f.kind]]
        at = f.end
    text = "".join([*out, text[at:]])
    for word in sorted(personal_words(personal), key=len, reverse=True):
        text = re.sub(re.escape(word), "[redacted]", text, flags=re.IGNORECASE)
    return text
