"""A sentence that corrects itself is read as corrected (issue 55 point 4).

"i told ur chat last week im allergic to latex, thats wrong, its nickel": the sentence
holds a value and takes it back at once. Quoted whole, the note kept "latex" beside
"nickel" (the fourteenth blind set's false memory). So what the user states
(:func:`mnemo.writing.grounding.stated`) reads the word before "that's wrong" as the one
the word after "it's" replaces, in brackets: "im allergic to [nickel]". Only in English;
Chinese says it as "不是X，是Y", which :mod:`mnemo.writing.swaps` reads.
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


def mended(sentence: str) -> str:
    """``sentence`` with each value it takes back at once (:data:`_MENDS`) replaced by the one it
    gives, in brackets: "im allergic to latex, thats wrong, its nickel" is "im allergic to [nickel]"."""
    return _MENDS.sub(lambda m: f"[{m.group('new')}]", sentence)
