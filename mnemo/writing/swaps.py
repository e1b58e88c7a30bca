"""A correction that names the right value in place of a wrong one revises the note that
holds the wrong one (issue 55 point 4).

"我芒果过敏哈" then "啊等下 我说错了 不是芒果 是猕猴桃！"; "我脚一直穿38的" then "打错了，是39码！
38那是我妈的码"; "I'm allergic to peanuts" then "sorry, not peanuts, it's cashews". The second
message names no allergy or size of its own, so no reader of a kind finds it, and a small
model left the wrong value in the note (the ninth and eleventh blind sets: docs/bench.md).
So the writing reads, in a stated sentence of the user's (no question, no supposition), a swap:

- "不是X(，)是Y", "not X, (it's|but) Y", "I meant Y, not X": X is replaced by Y;
- a number said with a mistake the user owns ("打错了", "typo", "I meant"; not "the wrong item
  came"): the one number of the
  message a note holds is replaced by the one number of the message it does not,

in each note shown to the extractor that holds X (a word of it, not part of one), when the
extractor asked nothing of that note. The note's new text is its old text with Y for X: the
user's words, corrected by the user.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

from mnemo.core import HAN
from mnemo.writing.grounding import SENTENCE, stated_sentences
from mnemo.writing.known import RevisionRequest
from mnemo.writing.mended import bygone_parts
from mnemo.writing.refusals import business_record_term

#: A value in a swap: Han characters, or one word ("not like red, blue is ok" swaps nothing).
_HAN = f"{HAN.pattern}{{1,8}}"
_WORDS = r"[^\W\d_][\w'’-]*"
_SWAP = re.compile(
    rf"不是(?:对)?(?P<old_zh>{_HAN}?)(?:过敏)?[，,、\s]*(?:而|其实|应该)?是(?:对)?(?P<new_zh>{_HAN}?)(?:过敏)?(?!{HAN.pattern})"
    rf"|\bnot\s+(?P<old>{_WORDS})\s*[,;:—–-]+\s*(?:(?P<said>it(?:'|’)?s\s+|it\s+is\s+|i\s+meant\s+)|just\s+|only\s+|actually\s+|but\s+)*(?P<new>{_WORDS})"
    rf"|\bi\s+meant\s+(?P<new2>{_WORDS})\s*,?\s+not\s+(?P<old2>{_WORDS})",
    re.IGNORECASE,
)
#: A mistake owned: what makes a changed number a correction.
_MISTAKE = re.compile(
    r"\b(?:typo|i\s+meant|my\s+bad|mistyped|my\s+mistake|i\s+was\s+wrong|correction)\b|打错|说错|写错|记错|记混|更正|口误",
    re.IGNORECASE,
)
#: What makes "not X, Y" a correction when no "it's" or "I meant" says so: "sorry, not peanuts, cashews".
_CORRECTING = re.compile(
    rf"{_MISTAKE.pattern}|\b(?:sorry|oops|wait|actually|scratch\s+that|no\s+no)\b|^\W*no\b", re.IGNORECASE
)
_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?(?![\d.])")
#: Words that swap nothing: "not me, it's my wife", "not really, but ...".
_NO_VALUE = frozenset({"me", "really", "sure", "yet", "now", "that", "this", "it", "anymore", "any", "a", "the"})


def swaps(text: str) -> list[tuple[str, str]]:
    """The ``(wrong, right)`` values the stated sentences of ``text`` swap (:data:`_SWAP`)."""
    found = []
    for sentence in stated_sentences([text]):
        if business_record_term(sentence) is not None:
            continue
        for m in _SWAP.finditer(sentence):
            old = m.group("old_zh") or m.group("old") or m.group("old2")
            new = m.group("new_zh") or m.group("new") or m.group("new2")
            if m.group("old") and not (m.group("said") or _CORRECTING.search(sentence)):
                continue  # "not bad, thanks" corrects nothing
            if old and new and old.casefold() != new.casefold() and old.casefold() not in _NO_VALUE:
                found.append((old.strip(), new.strip()))
    return found


def _value(value: str) -> re.Pattern[str]:
    """``value`` as a word of its own in a note: any case; Han anywhere; a number not part of one."""
    if _NUMBER.fullmatch(value):
        return re.compile(rf"(?<![\d.]){re.escape(value)}(?![\d.])")
    edge = r"" if HAN.match(value) else r"\b"
    return re.compile(rf"{edge}{re.escape(value)}{edge}", re.IGNORECASE)


def _said_numbers(text: str) -> frozenset[str]:
    """The numbers of ``text``'s stated sentences (none about a business record), when ``text`` owns a
    mistake ("打错了", "typo"); none else."""
    if not _MISTAKE.search(text):
        return frozenset()
    sentences = [s for s in stated_sentences([text]) if business_record_term(s) is None]
    bygone = [p for s in SENTENCE.split(text) for p in bygone_parts(s)]  # "7 was before ...": the wrong one
    return frozenset(_NUMBER.findall(" ".join([*sentences, *bygone])))


def _number_swap(said: frozenset[str], note: str) -> tuple[str, str] | None:
    """The one number of ``said`` (:func:`_said_numbers`) that ``note`` holds and the one it does not:
    "打错了，是39码！38那是我妈的码" on "我脚一直穿38的" is ``("38", "39")``."""
    held = set(_NUMBER.findall(note))
    old, new = said & held, said - held
    return (next(iter(old)), next(iter(new))) if len(old) == 1 and len(new) == 1 and len(held) == 1 else None


def _literal(value: str) -> Callable[[re.Match[str]], str]:
    """A replacement that puts ``value`` as written (no group references read in it)."""
    return lambda _: value


def swapped_notes(texts: Iterable[str], shown: Mapping[str, str]) -> list[RevisionRequest]:
    """A revision of each note of ``shown`` (key -> text) that holds the wrong value of a swap the
    user's ``texts`` state: its text with the right value in place of the wrong one."""
    revised: dict[str, str] = {}
    for text in texts:
        pairs, numbers = swaps(text), _said_numbers(text)  # read once per message, not once per note
        for key, note in shown.items():
            current = revised.get(key, note)
            for old, new in [*pairs, *filter(None, [_number_swap(numbers, current)])]:
                current = _value(old).sub(_literal(new), current)
            if current != note:
                revised[key] = current
    return [RevisionRequest(key, shown[key], text) for key, text in revised.items()]


#: A name the user corrects, no wrong one named: "名字打错了 是马丽 美丽的丽" (the fourteenth blind set kept
#: "马莉"), "my name's spelt Siobhan", "typo in my name, it's Niamh".
_NAME_MENDED = re.compile(
    rf"(?:名字|姓名)[^。！？]{{0,6}}?(?:打错|写错|弄错|记错|错了)[^。！？]{{0,4}}?(?:应该)?是\s*(?P<zh>{HAN.pattern}{{2,4}})(?!{HAN.pattern})"
    r"|\bname(?:'s|’s|\s+is)?\s+(?:spelt|spelled|actually)\s+(?P<en>[A-Z][\w'’-]+)"
    r"|\b(?:typo|misspelt|misspelled|wrong)\b[^.!?]{0,20}?\bmy\s+name\b[^.!?]{0,10}?\bit(?:'s|’s|\s+is)\s+(?P<en2>[A-Z][\w'’-]+)",
)


def swapped_fields(texts: Iterable[str], profile: Mapping[str, str]) -> dict[str, str]:
    """The profile's name and city as the user's ``texts`` correct them: a swap (:func:`swaps`) whose wrong
    value is the field's (``profile``: field -> value; "sorry typo not Cardiff — Cork"), or a name corrected
    (:data:`_NAME_MENDED`). What the writing then checks as any value the extractor gave."""
    fields: dict[str, str] = {}
    for text in texts:
        for old, new in swaps(text):
            fields |= {f: new for f in ("name", "city") if profile.get(f, "").casefold() == old.casefold()}
        for sentence in stated_sentences([text]):
            if m := _NAME_MENDED.search(sentence):
                fields["name"] = m.group("zh") or m.group("en") or m.group("en2")
    return fields
