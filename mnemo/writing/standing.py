"""A standing wish is kept, in the user's own words (issue 55 point 4).

"Do you have the duvet in king size? Also for all future orders - please never leave
parcels with the neighbours, i'd rather grab them from the locker." A small model
asked for notes about such a turn often answers with its prompt's invented example
(Qwen2.5-Coder-1.5B did, in the third blind set: docs/bench.md), which the
grounding refuses, and the wish is lost. So the writing keeps, as a note quoting the
user, each sentence they stated (no question, no supposition, no clause about an
order: :func:`mnemo.writing.grounding.stated_sentences`) that

- says it stands from now on: "for all future orders", "from now on", "in future",
  "going forward", "please always / never"; "以后", "今后", "往后", "一律" at a clause's start, and
- is the user's: about them or asked by them ("I", "my", "please"; "我", "家", "请", "别"),

when no note of the extraction, nor one read in code before it, says it already (shares
a third of its content words). "Every time I order it's late" is a complaint, "下单以后"
a time: neither is kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.core import content_tokens
from mnemo.writing.grounding import CLAUSE, stated_sentences
from mnemo.writing.quotes import ABOUT_USER, ASKED, quoted_new

#: From now on: a wish that stands, not one errand.
_FROM_NOW_ON = re.compile(
    r"\bfor\s+(?:all|any|every)\s+(?:of\s+)?(?:my\s+)?(?:future\s+)?(?:orders?|deliver(?:y|ies)|parcels?|packages?)\b"
    r"|\bfor\s+(?:my\s+)?future\s+(?:orders?|deliver(?:y|ies)|parcels?|packages?|purchases?)\b"
    r"|\bfrom\s+now\s+on\b|\bin\s+(?:the\s+)?future\b|\bgoing\s+(?:forward|fwd)\b|\b(?:please|pls|plz)\s+(?:always|never)\b"
    r"|(?:^|[，,；;：:\s]|请|麻烦|我)(?:以后|今后|往后|一律)",
    re.IGNORECASE,
)


def standing_sentences(texts: Iterable[str]) -> list[str]:
    """Each stated sentence of ``texts`` that says a wish of the user's stands from now on."""
    return [
        sentence.strip()
        for sentence in stated_sentences(texts)
        if _FROM_NOW_ON.search(sentence) and (ABOUT_USER.search(sentence) or ASKED.search(sentence))
    ]


def standing_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the sentences of :func:`standing_sentences` whose wish none of
    ``notes`` says (:func:`_wish`): ``(note text, the sentence it quotes)``."""
    return quoted_new(texts, standing_sentences(texts), notes, key=_wish)


def _wish(sentence: str) -> str:
    """What of ``sentence`` a note must say to say its wish: the clause that says it stands, and the
    next one when it is short ("for all future deliveries, if I'm out please leave ..."). The whole
    sentence shared a third of its words with the model's note of its other clauses: "以后给我发货能别用
    那种塑料气泡膜了嘛，小区垃圾分类太麻烦了，塞点纸团就行" (the eleventh blind set)."""
    clauses = CLAUSE.split(sentence)
    at = next((i for i, c in enumerate(clauses) if _FROM_NOW_ON.search(c)), 0)
    short = len(content_tokens(clauses[at])) < 4
    return " ".join(clauses[at : at + 2] if short else clauses[at : at + 1])
