"""A sentence that corrects itself is read as corrected (issue 55 point 4).

"i told ur chat last week im allergic to latex, thats wrong, its nickel": the sentence
holds a value and takes it back at once. Quoted whole, the note kept "latex" beside
"nickel" (the fourteenth blind set's false memory). So what the user states
(:func:`mnemo.writing.grounding.stated`) reads the word before "that's wrong" as the one
the word after "it's" replaces, in brackets: "im allergic to [nickel]". Only in English;
Chinese says it as "不是X，是Y", which :mod:`mnemo.writing.swaps` reads. A value said to be of
the past after the one that holds ("床是1米8的 1米5那是以前租的房子", "UK 8, 7 was before ...") is
left out the same way, in both languages (:func:`without_bygone`).
"""

from __future__ import annotations

import re

#: "<... old>, that's wrong, it's <new>": the mistake owned between the two values.
_MENDS = re.compile(
    r"\b(?P<old>[^\W\d_][\w'’-]*)\s*[,;:—–-]*\s*(?:that(?:'|’)?s|thats|that\s+is|that\s+was)\s+"
    r"(?:(?:all\s+)?wrong|not\s+right|not\s+true|incorrect|a\s+mistake|a\s+typo|my\s+bad)\s*[,;:—–-]*\s*"
    r"(?:(?:it(?:'|’)?s|its|it\s+is|it(?:'|’)?s\s+actually|actually)\s+)(?P<new>[^\W\d_][\w'’-]*)",
    re.IGNORECASE,
)


#: A clause that says its value is of the past: "1米5那是以前租的房子", "7 was before my feet decided to grow" (the
#: fifteenth blind set, after the value that holds now).
_BYGONE = re.compile(
    r"那是以前|那是之前|那都是以前|是以前的|\b(?:was|were)\s+(?:before|my\s+old|years\s+ago)\b|\bthat\s+was\s+(?:my\s+)?old\b",
    re.IGNORECASE,
)


#: Where a value said before a bygone one starts, or the bygone part ends: a space or a clause's mark.
_GAP = re.compile(r"[\s,，;；、]")
_PART_END = re.compile(r"[,，;；、.。!！?？]")


def without_bygone(sentence: str) -> str:
    """``sentence`` without each value it says is of the past (:data:`_BYGONE`), from the word before it to
    its clause's end: "床是1米8的 1米5那是以前租的房子" is "床是1米8的"; "size is UK 8, 7 was before ..." is
    "size is UK 8,"."""
    return _bygone_split(sentence)[0]


def bygone_parts(sentence: str) -> list[str]:
    """What :func:`without_bygone` leaves out of ``sentence``: "1米5那是以前租的房子", "7 was before ..." (the
    wrong value of a correction: :mod:`mnemo.writing.swaps` reads its number)."""
    return _bygone_split(sentence)[1]


def _bygone_split(sentence: str) -> tuple[str, list[str]]:
    parts: list[str] = []
    while (m := _BYGONE.search(sentence)) is not None:
        before = sentence[: m.start()].rstrip()
        gaps = list(_GAP.finditer(before))
        start = gaps[-1].end() if gaps else 0
        end = _PART_END.search(sentence, m.end())
        parts.append(sentence[start : end.start() if end else len(sentence)])
        sentence = sentence[:start].rstrip(" ") + (sentence[end.start() :] if end else "")
    return sentence, parts


def mended(sentence: str) -> str:
    """``sentence`` with each value it takes back at once (:data:`_MENDS`) replaced by the one it
    gives, in brackets: "im allergic to latex, thats wrong, its nickel" is "im allergic to [nickel]"."""
    return _MENDS.sub(lambda m: f"[{m.group('new')}]", sentence)
