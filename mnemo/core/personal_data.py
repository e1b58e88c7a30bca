"""Personal data in text: e-mail addresses, phone, card and other long numbers,
street addresses, one finder.

What a shared text must not carry (a promoted episode is scrubbed, a shared
instruction refused). The text is folded first (:mod:`mnemo.core.folding`), so that a
separator, a width, an invisible character or a numeral of another script
hides nothing; then phone numbers are found by ``phonenumbers``
(libphonenumber's formats of every country), and what it cannot know (e-mail
addresses, also written out; cards and other runs of five digits or more,
joined across any non-letters; street addresses) by patterns. Amounts
("€35.50", "1,299"), dates, times, versions and short numbers ("2 items",
"12 May", "2026-05-12", "10:30", "10.15.7") are kept.
Rules, and why some of it is written here: ``docs/security.md``.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from typing import NamedTuple

import phonenumbers

from mnemo.core.folding import Folded, fold

#: Regions whose national formats (no ``+``) are tried; a number written with
#: ``+`` is found whichever region is tried. A user's profile says little about
#: where their number is from, so: mnemo's languages' main regions and the
#: largest others. A national number of another region is still a digit run.
PHONE_REGIONS = ("CN", "US", "GB", "IN", "AU", "FR", "DE")

#: Digits a run needs to be an identifier (an order, account or card number).
MIN_NUMBER_DIGITS = 5

#: Kind -> the placeholder a scrubbed text shows; on one span, the first kind wins.
PLACEHOLDERS = {"email": "[email]", "card": "[card]", "phone": "[phone]", "address": "[address]", "number": "[number]"}
_RANK = {kind: i for i, kind in enumerate(PLACEHOLDERS)}


class Found(NamedTuple):
    start: int
    end: int
    kind: str
    text: str


# E-mail addresses, also written out: "bob at example dot com", "bob[at]x(dot)cn",
# "bob @ example . com" (no library finds these; email-validator checks one address).
# A dot between spaces only before a lower-case label: "at home. Then" is a sentence.
_AT = r"\s*@\s*|\s*[\[({<]\s*(?:at|@)\s*[\])}>]\s*|\s+at\s+"
_DOT = r"\s+\.\s+(?=(?-i:[a-z0-9]))|\.|\s*[\[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+(?:dot|period|point)\s+"
# ASCII only: \w would take the Chinese words before an address ("邮箱是a@b.cn").
_EMAIL = re.compile(
    rf"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+(?P<at>{_AT})[A-Za-z0-9-]+(?:(?:{_DOT})[A-Za-z0-9-]+)*(?:{_DOT})[A-Za-z]{{2,24}}(?![A-Za-z0-9])",
    re.I,
)
_WRITTEN_OUT = re.compile(r"[\[({<]|(?<![A-Za-z])(?:dot|period|point)(?![A-Za-z])", re.I)

# Digit groups joined without a space ("4111.1111", "4111,1111", "2026-05-12", "10:30"),
# each kept as a whole or not. Groups not kept join into one number across any
# run of non-letters (deny by default) but for what ends one (_ENDS): a list
# (", " or "; " with a space, "、"), a currency sign or "%" (amounts side by side),
# two line breaks, or one before a list item ("2026:\n1. Restart").
_ATOM = re.compile(r"\d+(?:[-./·・_,:]\d+)*")
_ENDS = re.compile(r"[,;]\s|[、%‰]")
_LIST_ITEM = re.compile(r"\d{1,2}[.)](?:\s|$)")
# Kept groups, which also end a number: amounts and decimals, dates, times, versions.
_AMOUNT = re.compile(
    r"(?P<whole>\d{1,3}(?:,\d{3})+|\d{1,3}(?:\.\d{3})+)(?:[.,](?P<part>\d+))?|(?P<w>\d+)[.,](?P<p>\d+)"
)
_DATE = re.compile(r"(\d{4})([-./])(\d{1,2})\2(\d{1,2})|(\d{1,2})([-./])(\d{1,2})\6(?:\d{4}|\d{2})")
_TIME = re.compile(r"(?:[01]?\d|2[0-4]):[0-5]\d(?::[0-5]\d)?")
_VERSION = re.compile(r"\d{1,3}(?:\.\d{1,3}){1,3}")  # nine digits at most: "138.001.380.00" is a phone
# A card of four-digit groups (the last of one to four) with up to five other
# characters between them on one line, where a number ends otherwise ("4111,
# 1111, 1111, 1111", "4111 x 1111 $ 1111 & 1111"); years all are a list.
_CARD_GAP = re.compile(r"[^\d\n]{1,5}")
_YEAR = re.compile(r"(?:19|20)\d\d")

# Street addresses: a house number, up to four capitalised words, a street
# word ("221B Baker Street", "No. 88 Jianguo Road"); "建国路88号" and the place
# names before it. libpostal and usaddress parse a text known to be an address
# rather than find one; pyap, which finds them, has had no release since 2020.
_STREET = (
    r"(?i:street|st|road|rd|avenue|ave|boulevard|blvd|lane|ln|drive|dr|court|ct|place|pl|square|sq"
    r"|terrace|way|close|crescent|highway|hwy|parkway|pkwy|alley)"
)
_ADDRESS = re.compile(
    rf"(?<![\w.])(?:No\.?\s*)?\d{{1,5}}[A-Za-z]?,?\s+(?:(?:\d+(?:st|nd|rd|th)|[A-Z][A-Za-z'-]*\.?)\s+){{1,4}}{_STREET}\b"
)
# The number after the street, as much of Europe writes it ("Baker Street 221B").
_STREET_FIRST = r"(?i:street|st|road|rd|avenue|ave|boulevard|blvd|lane)"
_ADDRESS_AFTER = re.compile(
    rf"(?<![\w.])(?:[A-Z][A-Za-z'-]*\.?\s+){{1,4}}{_STREET_FIRST}\.?,?\s+(?:No\.?\s*)?\d{{1,5}}[A-Za-z]?(?!\w)"
)
# In lower case only with a whole street word ending the clause, and digits
# written as digits ("12 baker street.", not "one main street."), or the
# number ending it ("baker street 221b.").
_LOWER_STREET = r"(?:street|road|avenue|lane|boulevard|drive)"
_ADDRESS_LOWER = re.compile(
    rf"(?<![\w.])(?:\d{{1,5}}[a-z]?\s+(?:[a-z]+\s+){{1,3}}{_LOWER_STREET}|(?:(?!(?:on|in|at|to|of|the|near|from|live|lives)\s)[a-z]+\s+){{1,2}}{_LOWER_STREET}\s+\d{{1,5}}[a-z]?)"
    r"(?=\s*[,.;:!?]|\s*$)"
)
_ADDRESS_ZH = re.compile(
    r"(?:路|街|大道|大街|巷|弄|胡同)\s*第?\s*[\d十百]+(?:-\d+)?\s*[号號](?:\s*[\d十百]+\s*(?:号楼|栋|幢|单元|楼|室))*"
)
_ZH_PLACE = re.compile(r"[\u4e00-\u9fff]")
_NOT_PLACE = set("在是住到于从往的址为我你他她们和与及或请寄送")


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    return total % 10 == 0


def _kept_one(atom: str) -> bool:
    if m := _AMOUNT.fullmatch(atom):  # up to seven digits, then two decimals or up to 0.123456
        whole, part = (m["whole"] or m["w"]).replace(",", "").replace(".", ""), m["part"] or m["p"] or ""
        if len(whole) <= 7 and (len(part) <= 2 or len(whole) <= 3 and len(part) <= 6):
            return True
    if _VERSION.fullmatch(atom) and len(re.sub(r"\D", "", atom)) <= 9 or _TIME.fullmatch(atom):
        return True
    if not (m := _DATE.fullmatch(atom)):
        return False
    a, b = (int(m[3]), int(m[4])) if m[1] else (int(m[5]), int(m[7]))
    return 1 <= a <= 31 and 1 <= b <= 31 and min(a, b) <= 12


def _kept(atom: str) -> bool:
    """An amount, date, time or version, or a range of two ("10:30-11:30")."""
    return _kept_one(atom) or any(
        c == "-" and _kept_one(atom[:i]) and _kept_one(atom[i + 1 :]) for i, c in enumerate(atom)
    )


def _joins(text: str, end: int, start: int) -> bool:
    """Whether the digit groups before ``end`` and from ``start`` are one number."""
    gap = text[end:start]
    if any(c.isalpha() or unicodedata.category(c) == "Sc" for c in gap) or _ENDS.search(gap):
        return False
    return gap.count("\n") == 0 or gap.count("\n") == 1 and not _LIST_ITEM.match(text, start)


def _numbers(text: str) -> Iterator[tuple[int, int, str]]:
    groups: list[list[re.Match[str]]] = []
    for atom in _ATOM.finditer(text):
        if _kept(atom.group()):
            groups.append([])
        elif groups and groups[-1] and _joins(text, groups[-1][-1].end(), atom.start()):
            groups[-1].append(atom)
        else:
            groups.append([atom])
    for group in filter(None, groups):
        start, end = group[0].start(), group[-1].end()
        digits = re.sub(r"\D", "", "".join(a.group() for a in group))
        if len(digits) < MIN_NUMBER_DIGITS:
            continue
        if start and text[start - 1] in "#+(":
            start -= 1
        card = 13 <= len(digits) <= 19 and _luhn(digits) and text[start] != "+"
        yield start, end, "card" if card else "number"


def _listed_cards(text: str) -> Iterator[tuple[int, int, str]]:
    runs = list(re.finditer(r"\d+", text))
    for i, first in enumerate(runs):
        group = [first.group()]
        for run in runs[i + 1 : i + 5]:
            if len(group[-1]) != 4 or not _CARD_GAP.fullmatch(text, runs[i + len(group) - 1].end(), run.start()):
                break
            group.append(run.group())
            digits = "".join(group)
            if len(group) > 2 and 13 <= len(digits) <= 19 and _luhn(digits):
                if not all(_YEAR.fullmatch(g) for g in group):
                    yield first.start(), run.end(), "card"


def _addresses(folded: Folded) -> Iterator[tuple[int, int]]:
    text = folded.text
    for m in (*_ADDRESS.finditer(text), *_ADDRESS_AFTER.finditer(text)):
        yield m.start(), m.end()
    for m in _ADDRESS_LOWER.finditer(text):
        if folded.ends[m.start()] - folded.starts[m.start()] == 1:  # not a digit word
            yield m.start(), m.end()
    for m in _ADDRESS_ZH.finditer(text):
        start = m.start()
        while start > max(0, m.start() - 12) and _ZH_PLACE.match(text[start - 1]) and text[start - 1] not in _NOT_PLACE:
            start -= 1
        yield start, m.end()


def _candidates(folded: Folded) -> Iterator[tuple[int, int, str]]:
    text = folded.text
    for m in _EMAIL.finditer(text):
        domain, at = text[m.end("at") : m.end()], m.end("at")  # a dot spelled out ("点", "-dot-") reads "."
        spelled = any(
            c == "." and folded.original[slice(*folded.span(i, i + 1))] != "." for i, c in enumerate(domain, at)
        )
        if "@" in m["at"] or _WRITTEN_OUT.search(m["at"]) or _WRITTEN_OUT.search(domain) or spelled:
            yield m.start(), m.end(), "email"
    for region in PHONE_REGIONS:
        for match in phonenumbers.PhoneNumberMatcher(text, region, leniency=phonenumbers.Leniency.VALID):
            if not _kept(match.raw_string):  # "04.12.2026" is a valid number in Australia
                yield match.start, match.end, "phone"
    for start, end in _addresses(folded):
        yield start, end, "address"
    yield from _numbers(text)
    yield from _listed_cards(text)


def find_personal_data(text: str) -> list[Found]:
    """Every piece of personal data in ``text``, in order, none overlapping
    (of overlapping finds the one that starts first, then the longest, then
    by kind in the order of :data:`PLACEHOLDERS`); each with its span and
    text in ``text`` itself, as written."""
    folded = fold(text)
    found: list[Found] = []
    for start, end, kind in sorted(_candidates(folded), key=lambda f: (f[0], f[0] - f[1], _RANK[f[2]])):
        if not found or start >= found[-1][1]:
            found.append(Found(start, end, kind, ""))
    return [Found(*folded.span(f.start, f.end), f.kind, text[slice(*folded.span(f.start, f.end))]) for f in found]


def personal_words(words: Iterable[str | None]) -> list[str]:
    """The words that identify a user (id, name, city...) worth looking for:
    stripped, two characters or more as read folded, each once, in the order given."""
    return list(dict.fromkeys(w.strip() for w in words if w and len(fold(w).text.strip()) >= 2))


def find_personal_words(text: str, words: Iterable[str | None]) -> list[str]:
    """Those of the ``personal`` words (:func:`personal_words`) that ``text``
    contains, any case, both read folded (a zero-width space inside, full width)."""
    folded = fold(text).text.casefold()
    return [w for w in personal_words(words) if fold(w).text.casefold() in folded]


def _replace(text: str, spans: Iterable[tuple[int, int]], by: Iterable[str]) -> str:
    out, at = [], 0
    for (start, end), placeholder in zip(spans, by, strict=True):
        out += [text[at:start], placeholder]
        at = end
    return "".join([*out, text[at:]])


def scrub_personal_data(text: str, personal: Iterable[str | None] = ()) -> str:
    """``text`` with its personal data (:func:`find_personal_data`) replaced by
    placeholders, then each of the ``personal`` words (any case, the longest
    first, also written with other widths or invisible characters) by
    ``[redacted]``."""
    found = find_personal_data(text)
    text = _replace(text, [(f.start, f.end) for f in found], [PLACEHOLDERS[f.kind] for f in found])
    for word in sorted(personal_words(personal), key=len, reverse=True):
        folded = fold(text)
        spans = [folded.span(*m.span()) for m in re.finditer(re.escape(fold(word).text), folded.text, re.I)]
        text = _replace(text, spans, ["[redacted]"] * len(spans))
    return text
