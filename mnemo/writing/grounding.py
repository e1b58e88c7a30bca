"""Whether an extracted value is the user's own: supported by the words of the
user messages it was extracted from.

A model can fill the extraction's schema with what the user never said: the
ids of the notes it was shown (``"n1"``), its prompt's example ("I'm in
Suzhou."), a note it was shown, copied back. Measured with a small model on
llama.cpp's server (docs/bench.md, the real-model check), every turn did.
The schema cannot catch it (the values have the right shape), so the write
does: a note is kept only when at least half of its content words are the
user's, every name in it (a capitalised word past a sentence's start: a
place, a person, a month) was said and each sentence's first word in some
form (:func:`supported`; one shared word let
the prompt's "I moved to Suzhou last March" through on "moved", issue 42); a
removal by :mod:`mnemo.writing.retract`, a profile field by :mod:`mnemo.writing.fields`. Content words are
:func:`mnemo.core.content_tokens` (function words out, five-letter stems,
whole numbers, CJK characters), so a third-person restatement ("The user is
allergic to peanuts." of "I'm allergic to peanuts") is grounded while a value
in other words than the user's (a translated city) is not: the cost of never
storing what the user did not say (docs/memory.md).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from mnemo.core import HAN, content_tokens
from mnemo.writing.mended import mended, without_bygone
from mnemo.writing.refusals import business_record_term
from mnemo.writing.words import names, words_of

logger = logging.getLogger(__name__)
T = TypeVar("T")

#: Causes already logged at WARNING (later ones at INFO): a small model drops
#: values every turn, and one warning says what to do about it.
_warned: set[str] = set()


#: The marks that end a question, in any script: every character Unicode names a question
#: mark (``?``, ``？``, ``؟``, ``﹖``, ``⁇``, ``⁈``, ``⁉``, ``❓`` ...) and the interrobang ``‽``,
#: but those that open one (``¿``), the invisible tag and the Greek question mark, which is
#: ``;`` (a clause's end elsewhere: no ``;`` asks). A small set, checked against
#: :mod:`unicodedata` by tests/writing/test_grounding.py.
QUESTION_MARKS = frozenset(
    "?\uff1f\ufe56\ufe16\u061f\u055e\u1367\u1945\u2047\u2048\u2049\u203d\u2753\u2754"
    "\u2cfa\u2cfb\u2e2e\u2e54\ua60f\ua6f7\U00011143\U0001fbc4"
)
#: Pictographs a chat message ends a sentence with ("Marguerite here from Galway 👋 do u ship
#: ...?"): the emoji blocks and the variation selector that follows one (``🌶️``).
EMOJI = "\u2600-\u27bf\ufe0f\U0001f000-\U0001faff"
#: The characters that end a sentence: its marks, a question's, an emoji.
SENTENCE_ENDS = f".!。！{re.escape(''.join(sorted(QUESTION_MARKS)))}{EMOJI}"
#: Where a sentence ends (kept with it; an emoji's selector, joiner or skin tone kept too) and where a clause does.
#: No end inside a number ("a UK 9.5"), after "no." before one ("my neighbour at no. 14"), nor between
#: two ends ("in 11.5 US?? thats my size").
SENTENCE = re.compile(
    rf"(?<=[{SENTENCE_ENDS}])(?![{SENTENCE_ENDS}])(?!(?<=\d\.)\d)(?!(?<=\b[Nn][Oo]\.)\s*\d)(?![\ufe0f\u200d\U0001f3fb-\U0001f3ff])\s*"
)
#: A space between two Han characters is a comma as Chinese is typed in chat ("我麸质不耐受 吃了肚子疼"), and
#: between a number and Han that is no unit of it ("我的鞋码是42 帮我看看": the thirteenth blind set).
CLAUSE = re.compile(
    rf"[,;，；、]|(?<={HAN.pattern})\s+(?={HAN.pattern})|(?<=\d)\s+(?={HAN.pattern})(?![码号岁年月日楼层斤块元件个只条点分])"
)
#: Where a question's clause may start: a clause's mark or a dash between words ("I live in Brighton
#: and I've got a sofa cover on order — when's it arriving?"; not the hyphen of "66-2041" or "e-mail").
_ASKING_CLAUSE = re.compile(rf"{CLAUSE.pattern}|\s[-–—]+\s|[–—]")
#: A Chinese condition that happens, after 如果, 假如, 要是: "我不在家", "……就放门卫".
_HAPPENS_ZH = r"(?!(?:我|我们|家里|家)?(?:不在|没人|上班))(?![^。！？.!?]{0,12}?就(?:放|交给))"
#: Where a supposition starts, at a sentence's start or a clause's ("If I had a car, ...", "问一下，假如……",
#: "问下 如果……", "Quick question - say I ordered ...", "I'm vegetarian, if that helps."): it runs to the
#: sentence's end.
#: Not a condition that happens ("if I'm out please leave it with my neighbour", "如果我不在家就放门口"), nor
#: one a parcel is left by ("if the lockers full just leave it with next door": the fourteenth blind set,
#: "要是快递柜满了就放门卫").
_SUPPOSES = re.compile(
    rf"(?:^|[,;:，；：、]|\s[-–—]|[-–—]\s|(?<={HAN.pattern})\s)\s*"
    r"(?:(?:if(?!\s+(?:at\s+all\s+)?poss(?:ible)?\b)(?!\s+(?:i(?:'|’)?m|i\s+am|we(?:'|’)?re|we\s+are|no\s*(?:one|body)(?:'|’)?s|no\s*(?:one|body)\s+is)"
    r"\s+(?:out|not\s+(?:in|home|at\s+home|there|around|available|back)|away|at\s+work)\b"
    r"|\s+no\s*(?:one|body)\s+(?:answers|is\s+(?:in|home)|'s\s+(?:in|home))"
    r"|[^.!?]{0,40}?(?:,\s*(?:just\s+|please\s+|pls\s+|then\s+)?|\s(?:just|please|pls|then)\s+)(?:leave|put|drop|hand)\s+"
    r"(?:it|them|parcels?|packages?|stuff"
    r"|things|deliveries)\s+(?:with|at|in|on|by|behind|under|next)\b)"
    r"|suppose|supposing|imagine|what\s+if|let's\s+say|say(?=\s+(?:i|we|you|my|it|that)\b))\b"
    rf"|(?:如果|假如|要是){_HAPPENS_ZH}|假设|万一)",
    re.IGNORECASE,
)
#: A request to remember, stated as a question or not: an imperative at a clause's start or after
#: "please", "and", "you" ... ("Could you remember that ...?", "please note: my ...", "don't forget
#: I'm ...", "keep in mind we ..."; not "I can't remember my size"), "请记住", "帮我记一下", "别忘了".
#: The one list: :mod:`mnemo.writing.remembered` reads the fact after it.
REMEMBER_EN = (
    r"(?:^|[,;:.!]\s*|\b(?:please|pls|kindly|and|also|anyway|just|oh|so|you)\s+)"
    r"(?:remember|note|don't\s+forget|do\s+not\s+forget|keep\s+in\s+mind)\b"
)
REMEMBER_ZH = r"(?:记住|记下|记一下|别忘了?|不要忘了?)"
REMEMBER = re.compile(f"{REMEMBER_EN}|{REMEMBER_ZH}", re.IGNORECASE)
#: A question about memory, no request: "What do you remember about my pets?", "Do you remember my size?".
_ABOUT_MEMORY = re.compile(
    r"\b(?:do|did|does|what|how\s+much|anything)\b[^.!?]{0,20}?\byou\s+(?:still\s+)?remember\b", re.IGNORECASE
)
#: A question that asks to remember ("btw can you remember that I'm vegan?", "帮我记一下我不吃辣好吗？"), not
#: about memory.
_ASKING_TO_REMEMBER = re.compile(
    rf"\b(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+|also\s+)?(?:remember|note|keep\s+in\s+mind)\b"
    r"|[,\s]\s*(?:ok|okay|alright|yeah|right|pls|please|k)\W*$"  # a tag: "Keep in mind I'm vegan, ok?"
    rf"|(?:能|可以|麻烦|帮我).*{REMEMBER_ZH}|{REMEMBER_ZH}.*(?:好吗|好不好|行吗|行不行|可以吗|成吗)",
    re.IGNORECASE,
)


def asks_to_remember(sentence: str) -> bool:
    """Whether ``sentence`` asks to remember: "please remember that I'm vegan", "Could you remember ...?",
    "请记住我不吃香菜"; not a question about memory ("Do you remember my size?", "Remember my size?")."""
    return bool(
        REMEMBER.search(sentence)
        and not _ABOUT_MEMORY.search(sentence)
        and (not is_question(sentence) or _ASKING_TO_REMEMBER.search(sentence))
    )


def is_question(text: str) -> bool:
    """Whether ``text`` asks rather than states: a question mark (:data:`QUESTION_MARKS`)
    after its last letter or digit, whatever follows it (a quote, a bracket, an emoji:
    ``Is it Max?)``, ``是马克斯吗？」``), or the Chinese question particle 吗 last
    ("用户希望保温杯能进洗碗机吗"). A question is no fact to keep."""
    end = len(text)
    while end and not text[end - 1].isalnum():
        end -= 1
    return not QUESTION_MARKS.isdisjoint(text[end:]) or text[:end].endswith("吗")


#: A Chinese supposition inside a clause, after its subject or its time: "我老公说明年要是调去上海还得再搬一次" (the
#: fifteenth blind set); it takes its whole clause. Not "只要是", nor a condition that happens (:data:`_SUPPOSES`).
_SUPPOSES_INSIDE = re.compile(rf"(?:(?<!只)要是|如果|假如){_HAPPENS_ZH}")


def unsupposed(sentence: str) -> str:
    """``sentence`` up to where it starts to suppose (:data:`_SUPPOSES`): "问一下，假如我买的月饼……"
    keeps "问一下", "If I had a car, ..." nothing; a Chinese one inside a clause, up to that clause
    (:data:`_SUPPOSES_INSIDE`). What a supposition says is no fact (issue 55)."""
    m = _SUPPOSES.search(sentence)
    cut = len(sentence) if m is None else m.start()
    if (inside := _SUPPOSES_INSIDE.search(sentence, 0, cut)) is not None:
        marks = list(CLAUSE.finditer(sentence, 0, inside.start()))
        cut = marks[-1].start() if marks else 0
    return sentence[:cut]


def supposed(sentence: str) -> str:
    """What ``sentence`` only supposes: its part :func:`unsupposed` leaves out."""
    return sentence[len(unsupposed(sentence)) :]


def clauses_where(sentence: str, keep: Callable[[str], bool]) -> str:
    """``sentence`` with only its clauses that ``keep`` keeps, separators kept."""
    parts = re.split(f"({CLAUSE.pattern})", sentence)
    pairs = zip(parts[0::2], [*parts[1::2], ""], strict=True)
    return "".join(clause + mark for clause, mark in pairs if keep(clause))


def _without_records(sentence: str) -> str:
    """``sentence`` without its clauses about an order, a refund or a payment
    (:func:`mnemo.writing.refusals.business_record_term`), separators kept."""
    return clauses_where(sentence, lambda clause: business_record_term(clause) is None)


def stated(text: str) -> str:
    """What ``text`` states: without its suppositions ("If I had a car, I would
    drive to Denver.", "Quick question - say I ordered ...": :func:`unsupposed`),
    the asking clause of a question ("I'm in Leeds, do you deliver there?", "I live in
    Brighton - when's it arriving?" keep where they live), unless they ask to remember or
    the next sentence says it names where they live ("... in Norwich? that's where I live"), and its clauses about an
    order, a refund or a payment, the order system's ("订单……少发了个杯盖"). A fact
    is grounded only by what the user stated (issue 42)."""
    return " ".join(_without_records(s) for s in _stated(text))


#: A sentence that makes what a question named the user's: "that's where I live", "我就住那",
#: "thats my size" (the tenth blind set: "do u have the trail runners in 11.5 US?? thats my size").
_THATS_MINE = re.compile(
    r"^\W*(?:that(?:'|’)?s|thats|which\s+is|it(?:'|’)?s)\s+(?:where\s+(?:i|we)\s+(?:live|stay|(?:am|'m|’m)\s+based)"
    r"|(?:my|our)\s+(?:usual\s+|normal\s+)?size)\b"
    r"|^\W*我(?:就|也)?(?:住|在)(?:那|那儿|那里|那边)|^\W*(?:那|这)(?:就)?是我的(?:尺码|码|尺寸)",
    re.IGNORECASE,
)
_HAN_ENDS, _HAN_STARTS = re.compile(f"{HAN.pattern}$"), re.compile(rf"^\W*{HAN.pattern}")
#: A clause that asks without a question mark: "有没有S码啊", "顺便问下狗粮有小包装的吗，……" (the tenth
#: blind set), "是不是", "能不能"; a clause that ends with 吗 (not 呢: "还没到呢" states).
_ASKING_ZH = re.compile(
    r"^\W*(?:请问|想问|问一下|问下|顺便问)|有没有|是不是|能不能|可不可以|会不会|要不要|行不行|对不对|吗[啊呀哈\s]*$"
    r"|(?:能|可以|会|有|是|要|行)\S*不[啊呀哈嘛\s]*$"  # "能寄到酒店不" (the thirteenth blind set)
)


def _without_asking_clauses(sentence: str) -> str:
    """``sentence`` without its clauses that ask in Chinese without a mark (:data:`_ASKING_ZH`),
    separators kept."""
    if not HAN.search(sentence):
        return sentence
    return clauses_where(sentence, lambda clause: not _ASKING_ZH.search(clause)).strip(" ,，")


def _stated(text: str) -> list[str]:
    kept: list[str] = []
    asked = ""  # the asking clause of the question just before
    for sentence in SENTENCE.split(text):
        if asked and _THATS_MINE.search(sentence):
            # "do you do click & collect in Norwich? that's where I live": one sentence, no longer asking.
            lead = asked.rstrip("".join(QUESTION_MARKS) + " ")
            # One clause in Chinese ("有没有L码那是我的尺码"): a space between Han characters is a comma.
            kept.append(f"{lead}{'' if _HAN_ENDS.search(lead) and _HAN_STARTS.search(sentence) else ' '}{sentence}")
            asked = ""
            continue
        asked = ""
        if asks_to_remember(sentence):
            kept.append(sentence)
        elif (lead := unsupposed(sentence)) != sentence:
            kept.append(_without_asking_clauses(lead))
        elif is_question(sentence):
            marks = list(_ASKING_CLAUSE.finditer(sentence))
            start, end = (marks[-1].start(), marks[-1].end()) if marks else (0, 0)
            kept.append(_without_asking_clauses(sentence[:start]).rstrip())
            asked = sentence[end:]
        else:
            # "latex, thats wrong, its nickel"; "床是1米8的 1米5那是以前租的房子"
            kept.append(_without_asking_clauses(without_bygone(mended(sentence))))
    return kept


def stated_sentences(texts: Iterable[str]) -> Iterator[str]:
    """Each sentence of what the user's ``texts`` state (:func:`stated`), one text after another:
    what :mod:`mnemo.writing.places` and :mod:`mnemo.writing.contact` read."""
    for text in texts:
        for kept in _stated(text):  # the lead clauses of a question end a sentence of their own
            yield from SENTENCE.split(_without_records(kept))


def said_words(texts: Iterable[str]) -> frozenset[str]:
    """The content words of what the user's messages ``texts`` state (:func:`stated`),
    with their words outside ASCII whole (:func:`mnemo.writing.words.word_tokens`: "josé", "максим")."""
    return frozenset().union(*map(words_of, map(stated, texts)))


#: A note's words for the user themselves, never only supposed.
_NOTE_WORDS = content_tokens("user user's 用户")


def supposed_words(texts: Iterable[str]) -> frozenset[str]:
    """The content words the user's ``texts`` say only in a supposition ("If I went
    vegan, ...", "假如我改吃素……"): a note with one keeps what was only supposed (issue 55)."""
    only = [supposed(s) for t in texts for s in SENTENCE.split(t) if not REMEMBER.search(s)]
    return frozenset().union(*map(content_tokens, only)) - said_words(texts) - _NOTE_WORDS


def shares_a_word(text: str, said: frozenset[str]) -> bool:
    """Whether ``text`` (a note) has a content word of ``said``."""
    return not content_tokens(text).isdisjoint(said)


def _said_in_a_form(token: str, said: frozenset[str]) -> bool:
    """Whether ``token`` (a sentence's first word) is the user's in some form: said, or,
    without a final "e", one starting the other ("works" for "work", "livin" for
    "live"), or their first four letters shared ("prefe" for "prefs")."""

    def alike(a: str, b: str) -> bool:
        a, b = a.removesuffix("e"), b.removesuffix("e")
        if min(len(a), len(b)) < 3:
            return False
        return a.startswith(b) or b.startswith(a) or (min(len(a), len(b)) >= 4 and a[:4] == b[:4])

    return token in said or any(alike(token, s) for s in said)


def supported(text: str, said: frozenset[str], supposed: frozenset[str] = frozenset()) -> bool:
    """Whether the user's words ``said`` support ``text`` (a note, a revision's new
    text): it states, not asks (:func:`is_question`), at least half of its content
    words (one at least) are the user's, every one of its :func:`mnemo.writing.words.named_words` too,
    and each sentence's first word in some form (:func:`_said_in_a_form`): a capital
    there does not tell a name ("Max is the user's dog.") from a verb ("Works at the
    bakery."); none is only ``supposed`` (:func:`supposed_words`). Words are compared
    case-folded; CJK text by character."""
    words = content_tokens(text)
    shared = words & said
    inner, opening = names(text)
    return (
        not is_question(text)
        and words.isdisjoint(supposed)
        and bool(shared)
        and 2 * len(shared) >= len(words)
        and inner <= said
        and all(_said_in_a_form(token, said) for token in opening)
    )


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
