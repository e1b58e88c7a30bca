"""A place the user gave for a while is kept as a note, in their own words (issue 55 point 4).

"Until the end of June please send my orders to 14 Harbour Lane, Brighton",
"我三月二十号之前都在日本出差": a small model writes the street or the trip's
country as the profile's city (refused: :func:`mnemo.writing.fields.field_said`),
or keeps the town and drops the street (Qwen2.5-Coder-1.5B did both, in both
languages: docs/models.md). So the writing keeps, as a note quoting the user,
each sentence the user stated (no question, no supposition:
:func:`mnemo.writing.quotes.read_sentences`) that holds

- a street address with its house number (:func:`mnemo.profile.house_address`),
- a trip's place (:func:`trip_place`), or
- the city the extraction gave and the writing refused as a trip's place or an address's town,

when no note of the extraction names that street or place. The quote is the
user's words, so it is grounded by construction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from mnemo.profile import house_address
from mnemo.writing.extraction import MAX_NOTE_TEXT
from mnemo.writing.fields import TRIP
from mnemo.writing.grounding import CLAUSE
from mnemo.writing.quotes import ABOUT_USER, quoted, quoting, read_sentences
from mnemo.writing.until import until_day


def place_sentences(texts: Iterable[str], refused_city: str | None = None) -> list[tuple[str, str]]:
    """Each stated sentence of ``texts`` that holds a street address with its house
    number (when it or the sentence before it is about the user, :data:`ABOUT_USER`, or it
    lasts until a day: "Ship it to him? 12 Rubislaw Terrace." is a gift's address), a trip's place, or names
    ``refused_city``, with that street or place: ``(sentence, place)``. A sentence longer than a note
    is cut to its clause that holds the place."""
    found: list[tuple[str, str]] = []
    for text in texts:
        previous = ""
        for said, sentence in read_sentences(text):  # the sentence before, asked or not, tells whose it is
            about_user = ABOUT_USER.search(f"{previous} {said}") or until_day(said)
            previous = said
            if not sentence:
                continue
            place = (house_address(sentence) if about_user else None) or trip_place(sentence)
            if place is None and refused_city and refused_city.strip().casefold() in sentence.casefold():
                place = refused_city.strip()
            if place is not None:
                found.append(_fitted(sentence, place))
    return found


def _fitted(sentence: str, place: str) -> tuple[str, str]:
    if len(sentence) > MAX_NOTE_TEXT:
        sentence = next((c for c in CLAUSE.split(sentence) if place in c), sentence)
    return sentence.strip(), place


def trip_place(sentence: str) -> str | None:
    """The place of a trip ``sentence`` tells ("I'm travelling in Japan until 20 March",
    "我三月二十号之前都在日本出差"), or ``None``."""
    m = TRIP.search(sentence)
    return None if m is None else (m.group("place") or m.group("zh"))


def place_notes(texts: Sequence[str], notes: Iterable[str], refused_city: str | None = None) -> list[tuple[str, str]]:
    """The notes to add for the places of :func:`place_sentences` that none of
    ``notes`` names: ``(note text, the sentence it quotes)``."""
    kept = [n.casefold() for n in notes]
    form = quoting(texts)
    return [
        (quoted(form, sentence), sentence)
        for sentence, place in place_sentences(texts, refused_city)
        if not any(place.casefold() in n for n in kept)
    ]
