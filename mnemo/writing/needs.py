"""An allergy, an intolerance or a need of access is kept, in the user's own words (issue 55 point 4).

"我麸质不耐受 吃了肚子疼，只能买无麸质的。顺便问下……", "asking cuz im seriously allergic to
tree nuts": what a shop must never forget. A small model drops it when the turn also asks
about an order or a product, or answers its prompt's example instead (Qwen2.5-Coder-1.5B
did, in Chinese, on the held-out half and the fourth blind set: docs/bench.md). So the
writing keeps, as a note quoting the user, each sentence they stated (no question, no
supposition, no clause about an order: :func:`mnemo.writing.grounding.stated_sentences`)
that is about them ("I", "my", "我", "家") and names an allergy or an intolerance
("allergic to", "intolerant", "coeliac", "can't eat"; "过敏", "不耐受", "不能吃") or a need of
access ("I'm blind and use a screen reader", "hard of hearing", "我眼睛老花", "听力不好"; the
fifth blind set), when no note of the extraction, nor one read in code before it, says it already.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.core import content_tokens
from mnemo.writing.grounding import stated_sentences
from mnemo.writing.quotes import ABOUT_USER, quoted_new

#: An allergy, an intolerance, a food the body cannot take.
_ALLERGY = re.compile(
    r"\ballerg(?:ic|y|ies)\b|\bintoleran(?:t|ce)\b|\bc(?:o|oe)?eliac\b|\banaphyla\w*"
    r"|\bcan(?:'|’)?t\s+(?:eat|have|drink|digest|tolerate)\b|\bcannot\s+(?:eat|have|drink|digest|tolerate)\b"
    r"|过敏|不耐受|乳糜泻|不能吃|不能喝|吃不了|喝不了",
    re.IGNORECASE,
)
#: A need of access: how the user must be served ("blind" and "deaf" only said of the user: a
#: window blind is none).
_ACCESS = re.compile(
    r"\b(?:i'm|i\s+am|im)\s+(?:\w+\s+)?(?:blind|deaf)\b|\bscreen[\s-]?readers?\b|\bvisually\s+impaired\b"
    r"|\bpartially\s+sighted\b|\blow\s+vision\b|\bhard\s+of\s+hearing\b|\bhearing\s+aids?\b"
    r"|\b(?:use|in)\s+a\s+wheelchair\b|\bdyslexi\w*|\blarge[\s-]print\b"
    r"|老花|视力(?:不好|差|很差)|视障|失明|盲人|读屏|听力(?:不好|差|很差)|耳背|听障|坐轮椅|大字版",
    re.IGNORECASE,
)


def need_sentences(texts: Iterable[str]) -> list[str]:
    """Each stated sentence of ``texts`` about the user that names an allergy, an intolerance or a need of access."""
    return [
        sentence.strip()
        for sentence in stated_sentences(texts)
        if (_ALLERGY.search(sentence) or _ACCESS.search(sentence)) and ABOUT_USER.search(sentence)
    ]


def need_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the sentences of :func:`need_sentences` that none of
    ``notes`` says: none shares a third of its words (:func:`mnemo.writing.quotes.new_facts`),
    nor names an allergy or a need with a word of it ("The user cannot have lactose." says "Remember
    that I can't have anything with lactose."): ``(note text, the sentence it quotes)``."""
    notes = list(notes)
    allergies = [content_tokens(n) for n in notes if _ALLERGY.search(n) or _ACCESS.search(n)]
    unsaid = [s for s in need_sentences(texts) if not any(words & content_tokens(s) for words in allergies)]
    return quoted_new(texts, unsaid, notes)
