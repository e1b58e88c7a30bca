"""What an extraction asks to write that passes the checks (:func:`wanted_writes`):
valid values, no business record (:mod:`mnemo.writing.refusals`), what the user's
own words support (:mod:`mnemo.writing.grounding`), the per-turn note cap.
:mod:`mnemo.writing.apply` writes it."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import date
from typing import Any, NamedTuple

from mnemo.audit import Source
from mnemo.core import InvalidInputError, content_tokens
from mnemo.notes import MAX_NOTES_PER_TURN, expiry_from, validate_note, validate_refers_to
from mnemo.profile import normalize_field, profile_from_items
from mnemo.writing.contact import contact_notes
from mnemo.writing.extraction import MemoryExtraction, copies_an_example
from mnemo.writing.fields import city_of_district, field_said, home_city, named_languages, said_of_someone_else
from mnemo.writing.gifts import gift_notes
from mnemo.writing.grounding import (
    grounded,
    said_words,
    shares_a_word,
    stated_sentences,
    supported,
    supposed_words,
)
from mnemo.writing.kin import names_someone, others_words
from mnemo.writing.known import Known, RevisionRequest
from mnemo.writing.needs import denied_needs, need_notes
from mnemo.writing.places import place_notes
from mnemo.writing.refusals import business_record_term
from mnemo.writing.remembered import remembered_notes
from mnemo.writing.retract import asks_to_forget, forgets_field, forgotten, retracting_sentences, retracts
from mnemo.writing.standing import standing_notes
from mnemo.writing.swaps import swapped_fields, swapped_notes
from mnemo.writing.traits import trait_notes
from mnemo.writing.until import until_day, until_notes
from mnemo.writing.wishes import asked_language, asked_style
from mnemo.writing.withheld import withheld, withholds

logger = logging.getLogger(__name__)


class Wanted(NamedTuple):
    """What an extraction asks to write, validated and grounded (:func:`wanted_writes`)."""

    changes: dict[str, Any]
    forget: list[Any]
    notes: list[ExtractedNote]
    requests: list[RevisionRequest]
    sources: dict[str, Source] = {}
    """A field's own source where it is not the user's words ("inferred")."""

    @property
    def with_profile(self) -> bool:
        return bool(self.forget or self.changes)


def wanted_writes(
    extraction: MemoryExtraction, said: Sequence[str], known: Known | None, *, asked: Sequence[str] | None = None
) -> Wanted:
    """The extraction's profile changes, notes and revisions that pass the
    checks: valid values, no business record, what the user said supports
    (when ``said``, the user's messages, is given), at most :data:`MAX_NOTES_PER_TURN` notes.
    ``asked``: the messages whose requests to remember the writing quotes (default ``said``;
    not those the ``remember_note`` tool answered)."""
    # "not mentioned" values are dropped here too, so an extraction that changes
    # no field skips the profile read.
    changes = {
        f: v
        for f, v in extraction.profile_changes().items()
        if v is not None and validated_or_none(normalize_field, f, v) is not None
    }
    notes = valid_notes(extraction)
    requests = known.requests(extraction) if known is not None else []
    sources: dict[str, Source] = {}
    forget = list(extraction.forget_fields)
    if said:  # only what the user's own words support (mnemo.writing.grounding)
        taken_back = retracting_sentences(said)
        kept_back = withheld(said)  # codes the user asked not to keep: in no note (mnemo.writing.withheld)
        words = said_words(said)  # the content words the user stated, once per write
        profile = profile_from_items(known.profile or []) if known is not None else {}
        # A name or a city the user corrected ("not Cardiff — Cork", "名字打错了 是马丽": mnemo.writing.swaps).
        swapped = swapped_fields(said, {f: str(e["value"]) for f, e in profile.items()})
        mended = {f: validated_or_none(normalize_field, f, v) for f, v in swapped.items()}
        changes |= {f: v for f, v in mended.items() if v is not None}
        changes, notes, requests = grounded_in(said, words, changes, notes, requests, taken_back, kept_back)
        # Where they said they live; a district's city the user named with it (mnemo.writing.fields).
        # The home they name wins over another city the extraction gave ("staying at my aunt's in Brighton
        # ... home in Croydon": the sixteenth blind set).
        if (city := home_city(said, words)) is not None:
            changes["city"] = city
        if "city" in changes:
            changes["city"] = city_of_district(changes["city"], said)
        # A field is forgotten only when the user took it back (mnemo.writing.retract).
        forget = [f for f in forget if forgets_field(f, taken_back, str(profile[f]["value"]) if f in profile else None)]
        shown = known.shown_notes() if known is not None else {}
        # An allergy the user denied is set aside, though the extractor kept it (mnemo.writing.needs).
        asked_for = {r.key for r in requests}
        # And a note the user asked to forget ("forget the teacher thing": mnemo.writing.retract).
        denied = [k for k in dict.fromkeys([*denied_needs(said, shown), *forgotten(said, shown)]) if k not in asked_for]
        requests += [RevisionRequest(k, shown.pop(k), None) for k in denied]
        # A note holding the wrong value of a correction gets the right one ("不是芒果 是猕猴桃": mnemo.writing.swaps);
        # a note set aside above is no longer in shown.
        requests += swapped_notes(said, {k: t for k, t in shown.items() if k not in asked_for})
        notes += in_their_words(
            extraction,
            said,
            changes,
            notes,
            # A note's new text says what it says: "The user has one cat." is "one of my cats died".
            shown=[*shown.values(), *(r.text for r in requests if r.text)],
            asked=said if asked is None else asked,
            kept_back=kept_back,
        )
        # A wish to be answered in a language or a style sets it whatever the model said; a
        # language the user named none of is inferred, never replacing a stated one.
        if (language := asked_language(said)) is not None:
            changes["language"] = language
        elif "language" in changes and not named_languages(said):
            sources["language"] = "inferred"
        if (style := asked_style(said)) is not None:
            changes["response_style"] = style
    if len(notes) > MAX_NOTES_PER_TURN:
        logger.warning("extraction returned %d notes; keeping the first %d", len(notes), MAX_NOTES_PER_TURN)
        notes = notes[:MAX_NOTES_PER_TURN]
    return Wanted(changes=changes, forget=forget, notes=notes, requests=requests, sources=sources)


def in_their_words(
    extraction: MemoryExtraction,
    said: Sequence[str],
    changes: dict[str, Any],
    notes: list[ExtractedNote],
    *,
    shown: Sequence[str] = (),
    asked: Sequence[str] = (),
    kept_back: frozenset[str] = frozenset(),
) -> list[ExtractedNote]:
    """The notes read in code that the extraction's ``notes`` miss, quoting the user:
    a street address or a trip's place (:mod:`mnemo.writing.places`; the city the
    checks refused is one), with the end date of a note about it or its own, a situation
    that lasts until a day (:mod:`mnemo.writing.until`), expiring then, a fact asked to
    be remembered in ``asked`` (:mod:`mnemo.writing.remembered`) and how the user wants to
    be contacted, a wish that stands from now on, an allergy or a need of access and a size, a diet, a
    household or a home's access, said in ``asked`` (:mod:`mnemo.writing.contact`, :mod:`mnemo.writing.standing`,
    :mod:`mnemo.writing.needs`, :mod:`mnemo.writing.traits`), unless a note of the
    extraction or one ``shown`` to it (the user's) says it. Each is checked as every note is
    (:func:`is_storable_note`) and holds no code of ``kept_back`` (:mod:`mnemo.writing.withheld`)."""
    refused = extraction.profile_changes().get("city") if "city" not in changes else None
    if refused and said_of_someone_else(refused, said):  # "我表妹也想买 她在重庆" (blind15): hers, no place of theirs
        refused = None
    texts = [n.text for n in notes] + list(shown)
    places = [
        ExtractedNote(
            text,
            expires=next((n.expires for n in notes if n.expires and shares_a_word(n.text, words)), None)
            or _expires(until_day(quoted)),
        )
        for text, quoted in place_notes(said, texts, refused)
        if (words := content_tokens(quoted))
    ]
    dated = [(n.text, n.expires) for n in [*notes, *places]] + [(t, None) for t in shown]
    places += [ExtractedNote(text, expires=_expires(day)) for text, day in until_notes(said, dated)]
    found = list(places)
    # Each after what those before found.
    for read in (remembered_notes, contact_notes, standing_notes, need_notes, trait_notes, gift_notes):
        found += [
            ExtractedNote(text)
            for text, quoted in read(asked, texts + [n.text for n in found])
            if not asks_to_forget(quoted)  # "Forget my dog.": no fact
        ]
    return [n for n in found if is_storable_note(n.text) and not withholds(n.text, kept_back)]


def _expires(day: date | None) -> str | None:
    """The expiry of a note true until the end of ``day`` (``None``: none, or not one a note may have)."""
    return None if day is None else validated_or_none(lambda d: expiry_from(until=d), day)


def valid_notes(extraction: MemoryExtraction) -> list[ExtractedNote]:
    """The extraction's notes, durable, temporary and dated, that are valid
    notes and name no business record."""
    # Orders, refunds and payments are the order system's, never memory's,
    # whatever the extractor returned (mnemo.writing.refusals).
    notes: list[ExtractedNote] = [ExtractedNote(text) for text in extraction.notes]
    for temporary in extraction.temporary_notes:
        # An unreadable or past expiry drops the note: never kept as durable.
        if (expires := validated_or_none(lambda until: expiry_from(until=until), temporary.expires)) is not None:
            notes.append(ExtractedNote(temporary.text, expires=expires))
    for dated in extraction.dated_notes:
        # An unreadable date is left out, the fact kept: the date only adds to it.
        notes.append(ExtractedNote(dated.text, refers_to=validated_or_none(validate_refers_to, dated.refers_to)))
    return [note for note in notes if is_storable_note(note.text)]


def is_storable_note(text: str) -> bool:
    """Whether ``text`` is a valid note (:func:`mnemo.notes.validate_note`) naming no
    business record (:mod:`mnemo.writing.refusals`): the check of every note an extraction writes."""
    return validated_or_none(validate_note, text) is not None and business_record_term(text) is None


def grounded_in(
    said: Sequence[str],
    words: frozenset[str],
    changes: dict[str, Any],
    notes: list[ExtractedNote],
    requests: list[RevisionRequest],
    taken_back: Sequence[str],
    kept_back: frozenset[str] = frozenset(),
) -> tuple[dict[str, Any], list[ExtractedNote], list[RevisionRequest]]:
    """What of ``changes``, ``notes`` and ``requests`` the user's messages ``said`` (the content
    ``words`` they state: :func:`mnemo.writing.grounding.said_words`) support (the rest logged);
    an invalidation, what their sentences ``taken_back`` take back; no note with a code of
    ``kept_back``, which the user asked not to keep (:func:`mnemo.writing.withheld.withheld`)."""
    texts = list(said)
    supposed = supposed_words(texts)
    others = others_words(texts)  # said only of someone else: no note of the user's (mnemo.writing.kin)
    city = changes.get("city")
    changes = dict(
        grounded(
            "profile value(s)",
            changes.items(),
            lambda fv: field_said(fv[0], fv[1], texts, words, city=city),
            lambda fv: f"{fv[0]}={fv[1]}",
        )
    )

    def own(text: str) -> bool:
        # A copy of the prompt's invented example is the model's, however many of its words the user said;
        # a code the user asked not to keep ("这个你别记") is theirs to withhold.
        unsaid = supposed if names_someone(text) else supposed | others
        return supported(text, words, unsaid) and not copies_an_example(text) and not withholds(text, kept_back)

    notes = grounded("note(s)", notes, lambda n: own(n.text), lambda n: n.text)
    # A new text that shares no word with the note it would replace, said as one more fact
    # ("too", "also", "还"), is another fact: a note of its own, the old one kept (the seventh
    # blind set: "I'm lactose intolerant too" written over the note of a hazelnut allergy).
    added = [content_tokens(s) for s in stated_sentences(texts) if _ONE_MORE.search(s)]
    other = [r for r in requests if r.text is not None and not _same_fact(r, added)]
    notes += [ExtractedNote(text) for r in other if (text := r.text or "") and own(text)]
    requests = [r for r in requests if r not in other]
    # A revision is the user's word on a note: its new text is supported by what they
    # said; an invalidation, they took the note back (mnemo.writing.retract).
    requests = grounded(
        "note revision(s)",
        requests,
        lambda r: own(r.text) if r.text is not None else retracts(r.shown, taken_back),
        lambda r: r.text or f"invalidate {r.shown}",
    )
    return changes, notes, requests


#: One more fact, not a change of one: "too", "also", "as well", "另外", "也", "还有".
_ONE_MORE = re.compile(r"\b(?:too|also|as\s+well|another|besides)\b|另外|也|还有|还对|此外", re.IGNORECASE)


def _same_fact(request: RevisionRequest, added: Sequence[frozenset[str]]) -> bool:
    """Whether ``request``'s new text revises the fact its note states: it names a word of
    the note, or it shares no word with a sentence of the user's that adds one more fact
    (``added``: their content words; "I eat fish again now" revises "The user is
    vegetarian."; "I'm lactose intolerant too" is another)."""
    if retracts(request.shown, [request.text or ""]):
        return True
    words = content_tokens(request.text or "")
    return not any(words & sentence for sentence in added)


class ExtractedNote(NamedTuple):
    """A note of the extraction, with its expiry and date when it has them."""

    text: str
    expires: str | None = None
    refers_to: str | None = None


def validated_or_none(validate, *args):
    """``validate(*args)`` (the cleaned value, ``None`` for "not mentioned"),
    or ``None`` when it rejects the input."""
    try:
        return validate(*args)
    except InvalidInputError:
        return None
