"""A situation the user stated for a while is kept as a note, in their words, until its end (issue 55 point 4).

"家里在装修，一直到7月31号都没人住", "I'm at my parents' until 9 Sept, nobody's home":
a small model drops a temporary fact that names no place (Qwen2.5-Coder-1.5B did, in
Chinese, on every labelled set: docs/models.md). So the writing keeps, as a note quoting
the user that expires at the end of that day, each sentence they stated (no question, no
supposition, or a standing request asked as a question: :func:`mnemo.writing.quotes.read_sentences`) that is about
themselves and runs to a day: "until", "till", "through", "back on", "from 3 to" a day ("April 20",
"20th April"); "到", "一直到" a day ("7月31号", "三月二十号"), or a day "为止", "才回来", or before a day a state
("之前都", "之前在装修", "之前家里都没人").
"Deliver it before June 5" is one errand's deadline, not a time the user is away, and is
not kept. Not when a note of the extraction expires that day or names it.

The day has no year: it is its next one, today or later. Written by hand: a date
library (dateparser) would bring a large dependency to read two languages' few forms.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date

from mnemo.notes import now
from mnemo.writing.quotes import ABOUT_USER, quoted, quoting, read_sentences

#: Each month by its first three letters, the way a sentence may write it ("Sept", "September").
_MONTHS = {m: i for i, m in enumerate("jan feb mar apr may jun jul aug sep oct nov dec".split(), 1)}
_MONTH_NAMES = "|".join(_MONTHS)
_MONTH = rf"(?P<month>{_MONTH_NAMES})[a-z]*\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_DAY2 = _DAY.replace("day>", "day2>")
_MONTH2 = _MONTH.replace("month>", "month2>")
#: "until April 20", "till around the 20th of April", "through Sept 9", "from 3 to 24 March".
_UNTIL_EN = re.compile(
    r"\b(?:until|till|til|through|thru|up\s+to|(?:back|home)\s+(?:on|by)"
    r"|from\s+(?:the\s+)?\d{1,2}(?:st|nd|rd|th)?(?:\s+(?:of\s+)?[a-z]{3,9}\.?)?\s+to)\s+(?:around\s+|about\s+|roughly\s+|approx\.?\s+)?(?:the\s+)?"
    rf"(?:{_MONTH}\s+{_DAY}\b|{_DAY2}\s+(?:of\s+)?{_MONTH2}|(?P<day3>\d{{1,2}})(?:st|nd|rd|th)\b)",
    re.IGNORECASE,
)
#: A month named earlier in the sentence, for a day said alone ("from 12 Jan till the 26th").
_A_MONTH = re.compile(rf"\b({_MONTH_NAMES})[a-z]*\b", re.IGNORECASE)
_NUMBER_ZH = r"[0-9一二三四五六七八九十两]{1,3}"
#: "到7月31号", "一直到三月二十号", "8月18日为止"; before a day, a state ("6月5号之前都", "1月20号之前家里都没人",
#: "八月十五号之前在装修"; not a deadline: "6月5号之前送到").
_DAY_ZH = rf"({_NUMBER_ZH})\s*月\s*({_NUMBER_ZH})\s*[号日]"
_UNTIL_ZH = re.compile(
    rf"(?:到|至)\s*{_DAY_ZH}|{_DAY_ZH}\s*为止|{_DAY_ZH}\s*(?:才|再)?(?:回来|回家|回去|回国|出院)"
    rf"|{_DAY_ZH}\s*(?:之前|以前|前)[^，,。！？!?；;]{{0,4}}?(?:都|在|不在|没人|住)"
)
_DIGITS_ZH = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}


def _number_zh(text: str) -> int | None:
    """``text`` (1 to 3 characters: "31", "三十一", "十二", "二十") as a number, or ``None``."""
    if text.isdigit():
        return int(text)
    tens, _, ones = text.partition("十")
    if "十" not in text:
        return _DIGITS_ZH.get(text) if len(text) == 1 else None
    high = _DIGITS_ZH.get(tens, -1) if tens else 1
    low = _DIGITS_ZH.get(ones, -1) if ones else 0
    return None if high < 0 or low < 0 else 10 * high + low


def _next(month: int | None, day: int | None) -> date | None:
    """The day ``month``/``day`` next, today or later (``None``: no such day)."""
    today = now().date()
    for year in (today.year, today.year + 1):
        try:
            when = date(year, month or 0, day or 0)
        except ValueError:
            return None
        if when >= today:
            return when
    return None


def until_day(sentence: str) -> date | None:
    """The day ``sentence`` says a situation lasts until ("until April 20", "一直到7月31号"), or ``None``."""
    if (m := _UNTIL_EN.search(sentence)) is not None:
        if m.group("day3"):  # the day alone: its month is the last one named before it
            named = _A_MONTH.findall(sentence[: m.start()])
            return _next(_MONTHS[named[-1].casefold()[:3]], int(m.group("day3"))) if named else None
        month = _MONTHS[(m.group("month") or m.group("month2")).casefold()[:3]]
        return _next(month, int(m.group("day") or m.group("day2")))
    if (m := _UNTIL_ZH.search(sentence)) is not None:
        months, days = [g for g in m.groups()[0::2] if g], [g for g in m.groups()[1::2] if g]
        return _next(_number_zh(months[0]), _number_zh(days[0]))
    return None


def until_sentences(texts: Iterable[str]) -> list[tuple[str, date]]:
    """Each stated sentence of ``texts`` about the user that runs until a day, with the day."""
    return [
        (sentence.strip(), day)
        for text in texts
        for _, sentence in read_sentences(text)
        if ABOUT_USER.search(sentence) and (day := until_day(sentence)) is not None
    ]


def until_notes(texts: Sequence[str], notes: Iterable[tuple[str, str | None]]) -> list[tuple[str, date]]:
    """The notes to add, ``(note text, the day it expires)``, for the sentences of
    :func:`until_sentences` that no note of ``notes`` (``(text, expires)``) quotes,
    expires on (its day) or says lasts until (:func:`until_day`)."""
    notes = list(notes)
    days = {(expires or "")[:10] for _, expires in notes} | {str(until_day(text)) for text, _ in notes}
    form = quoting(texts)
    return [
        (quoted(form, sentence), day)
        for sentence, day in until_sentences(texts)
        if day.isoformat() not in days and not any(sentence in text for text, _ in notes)
    ]
