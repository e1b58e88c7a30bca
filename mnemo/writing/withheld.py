"""What the user asked not to be kept (the tenth blind set).

"大门密码是4827#，不过这个你别记哈，每个月都换": Qwen2.5-Coder-1.5B kept a note with the gate code.
The codes (words with a digit) of a sentence that asks not to be kept, up to the ask, are in no
note, the extractor's or one read in code (:func:`mnemo.writing.wanted.wanted_writes`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mnemo.writing.grounding import SENTENCE

#: The user asks that what they just said not be kept: "大门密码是4827#，不过这个你别记哈", "the code is 4827,
#: don't save that".
_DONT_KEEP = re.compile(
    r"\b(?:don(?:'|’)?t|dont|do\s+not|no\s+need\s+to|never)\s+(?:\w+\s+)?(?:remember|save|store|keep|note|write|record)"
    r"\w*\s+(?:that|this|it)\b|(?:别|不要|不用|无需|不必)(?:记|存|保存|记录)",
    re.IGNORECASE,
)
_CODE = re.compile(r"[A-Za-z]*\d[A-Za-z\d]*")


def withheld(texts: Iterable[str]) -> frozenset[str]:
    """What the user asked not to be kept: the codes (words with a digit, "4827") of each sentence
    that asks it, up to the ask (the tenth blind set: a note kept a gate code said with "这个你别记")."""
    return frozenset(
        code.casefold()
        for text in texts
        for sentence in SENTENCE.split(text)
        if (m := _DONT_KEEP.search(sentence))
        for code in _CODE.findall(sentence[: m.start()])
    )


def withholds(text: str, codes: frozenset[str]) -> bool:
    """Whether ``text`` holds one of the ``codes`` the user asked not to keep (:func:`withheld`)."""
    return bool(codes) and any(code.casefold() in codes for code in _CODE.findall(text))
