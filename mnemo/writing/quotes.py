"""How a note the writing reads in code quotes the user (:mod:`mnemo.writing.places`,
:mod:`mnemo.writing.until`, :mod:`mnemo.writing.remembered`, :mod:`mnemo.writing.contact`):
their words, in the form of the language they write, so the note is grounded by construction."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from mnemo.core import content_tokens
from mnemo.writing.extraction import MAX_NOTE_TEXT, writing_language
from mnemo.writing.grounding import SENTENCE, stated, unsupposed

#: How the note quotes the user, by the language they write (:func:`writing_language`).
_SAID = {"zh": "用户说：“{}”", "ja": "ユーザーの言葉：「{}」"}
_SAID_ELSE = "The user said: “{}”"


#: Words that make a sentence about the user: "I", "my", "we", "nobody's home", "我", "家"; "im", "ive" as typed.
#: Asked by the user, not only about them: "please", "pls", "请", "麻烦", "别", "不要".
ASKED = re.compile(r"\b(?:please|pls|plz|kindly)\b|请|麻烦|别|不要", re.IGNORECASE)
ABOUT_USER = re.compile(r"\b(?:i|i'm|im|i'll|i've|ive|me|my|we|we're|our|us|nobody|no\s+one)\b|我|家", re.IGNORECASE)


#: A standing request for the user's deliveries asked as a question: "can u send my orders to 14 Harbour
#: Lane until march 3rd?", "以后能不能都寄到公司？", "when stuff comes can the courier leave it in the bin?",
#: "快递能不能都放丰巢柜", "can future deliveries go to the parcel locker at the Tesco instead?" (the fourteenth
#: blind set): what it asks stands, for the facts read in code.
_REQUEST = re.compile(
    r"\b(?:can|could|would|will)\s+(?:you|u|they|(?:the\s+|your\s+)?(?:couriers?|drivers?|delivery\s+(?:drivers?|guys?|people)"
    r"|postm[ae]n))\s+(?:pls\s+|please\s+|kindly\s+)?(?:always\s+|just\s+)?"
    r"(?:send|ship|deliver|post|hold|keep|leave|use|bring|drop|forward)\b"
    r"|\b(?:can|could)\s+(?:all\s+)?(?:my\s+|the\s+)?(?:future\s+)?(?:deliver(?:y|ies)|parcels?|packages?|orders?|stuff|things)"
    r"\s+(?:always\s+|just\s+)?(?:go|come|be\s+(?:sent|left|delivered|dropped|shipped))\b"
    r"|(?:能不能|可不可以|能否|可以|麻烦)\S{0,6}?(?:寄|送|发|放|别|不要)",
    re.IGNORECASE,
)
_STANDING = re.compile(
    r"\b(?:until|till|til|through|all|every\w*|always|any\w*|only|future|from\s+now\s+on)\b"
    r"|\bwhen(?:ever)?\s+(?:stuff|things|parcels?|packages?|deliveries|orders?|it|they)\s+(?:comes?|arrives?)\b"
    r"|以后|之前|今后|一律|只|都",
    re.IGNORECASE,
)


#: A sentence that goes on with the one before: "from now on can couriers always leave stuff with my
#: neighbour? or in the blue recycling bin by the gate" (the twelfth blind set), "或者放快递柜".
_GOES_ON = re.compile(r"^\s*(?:or|otherwise|else)\b|^\s*(?:或者|要不|不然|或)", re.IGNORECASE)


def read_sentences(text: str) -> list[tuple[str, str]]:
    """Each sentence of ``text``, as said and as read for a fact: what it states
    (:func:`mnemo.writing.grounding.stated`), or, for a standing request for the
    user's deliveries asked as a question, the request (its supposition left out),
    with the sentence that goes on with it ("... or in the bin by the gate").
    For :mod:`mnemo.writing.places` and :mod:`mnemo.writing.until` only: grounding
    never takes a question's words as stated."""
    read: list[tuple[str, str]] = []
    requested = False  # the sentence before was a standing request
    for said in SENTENCE.split(text):
        if requested and _GOES_ON.search(said):
            before, asked = read.pop()
            read.append((f"{before} {said}", f"{asked} {said.strip()}"))
            continue
        asked = unsupposed(said)
        requested = bool(_REQUEST.search(asked) and _STANDING.search(asked))
        read.append((said, (asked if requested else stated(said)).strip()))
    return read


def requested_sentences(texts: Iterable[str]) -> list[str]:
    """Each standing request for the user's deliveries asked as a question in ``texts``
    ("快递能不能只周六周日送啊？": :func:`read_sentences`), what stated sentences leave out."""
    return [read for text in texts for said, read in read_sentences(text) if read and read != stated(said).strip()]


def new_facts(facts: Iterable[str], notes: Iterable[str], *, key: Callable[[str], str] = str) -> list[str]:
    """The ``facts`` none of ``notes`` says: no note shares a third of the content words of a
    fact (of ``key(fact)``: what of it is compared)."""
    kept = [content_tokens(n) for n in notes]
    return [f for f in facts if not any(len((words := content_tokens(key(f))) & k) * 3 >= len(words) for k in kept)]


def quoted_new(
    texts: Sequence[str], facts: Iterable[str], notes: Iterable[str], *, key: Callable[[str], str] = str
) -> list[tuple[str, str]]:
    """Each of ``facts`` none of ``notes`` says (:func:`new_facts`, comparing ``key(fact)``) as a
    note quoting the user of ``texts`` (:func:`quoting`): ``(note text, the fact)``."""
    form = quoting(texts)
    return [(quoted(form, fact), fact) for fact in new_facts(facts, notes, key=key)]


def quoting(texts: Sequence[str]) -> str:
    """How a note quotes the user, in the language their ``texts`` are written in: a ``{}`` for the words."""
    return _SAID.get(writing_language(texts) or "", _SAID_ELSE)


def quoted(form: str, words: str) -> str:
    """The note ``form`` (of :func:`quoting`) quoting ``words``, cut to fit a note."""
    return form.format(words[: MAX_NOTE_TEXT - len(form) + 2])
