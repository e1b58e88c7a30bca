"""A gift the user is choosing, and its budget, are kept in their own words (issue 55 point 4).

"looking for a bday present for my dad, he turns 60 on the 3rd of March. he's mad about fly
fishing", "budget's around £80", "想给女朋友挑个圣诞礼物 她超喜欢小熊维尼", "她手腕细 手链一般戴最小号
预算500以内吧": Qwen2.5-Coder-1.5B kept none of the English ones and not the Chinese size (the
fifteenth blind set). So the writing keeps, as a note quoting the user, each stated sentence
(:func:`mnemo.writing.grounding.stated_sentences`) that

- names a gift for someone the user names ("a present for my dad", "给女朋友挑个礼物"), with the
  sentences right after it in the same message that open on them ("he's mad about fly fishing"); of
  each, the clauses that name the gift or open on them, or
- names a budget ("budget's around £80", "预算500以内"),

when no note says what it says beyond the gift's words (a third of its other words). What someone
else said about a gift ("my brother said get him a smartwatch") is no gift of the user's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.writing.grounding import SENTENCE, clauses_where, stated
from mnemo.writing.kin import KIN_EN, KIN_ZH
from mnemo.writing.quotes import quoted_new

_GIFT = r"\b(?:presents?|gifts?|b-?day|birthday|anniversary|christmas|xmas)\b|礼物|生日|纪念日|圣诞|送给"
#: A gift for someone the user names: "a present for my dad", "给女朋友挑个礼物", "送给我妈".
_FOR_SOMEONE = re.compile(
    rf"(?:{_GIFT})[^.!?。！？]{{0,40}}?\b(?:for|to)\s+(?:my|our)\s+(?:{KIN_EN})"
    rf"|\b(?:for|to)\s+(?:my|our)\s+(?:{KIN_EN})\b[^.!?。！？]{{0,40}}?(?:{_GIFT})"
    rf"|(?:给|送给|帮)(?:我)?(?:的)?(?:{KIN_ZH})[^。！？]{{0,8}}?(?:买|挑|选|送|礼物|准备)"
    # "下个月我婆婆过六十大寿，想给她挑个按摩足浴盆" (the sixteenth blind set).
    rf"|(?:{KIN_ZH})[^。！？，,]{{0,6}}?过[^。！？，,]{{0,4}}?(?:生日|大寿|寿|纪念日)|(?:给|送)[他她](?:挑|买|选|送)",
    re.IGNORECASE,
)
#: A gift idea, though asked: "so I'm thinking a decent pair of binoculars?" (the sixteenth blind set).
_IDEA = re.compile(
    r"\b(?:i(?:'|’)?m|i\s+am|i\s+was|was)\s+thinking\b|\bthinking\s+(?:of|about)\b|想(?:送|买|挑)|打算(?:送|买)",
    re.IGNORECASE,
)
#: A sentence that opens on the one the gift is for: "he's ...", "she turns 60", "她超喜欢……".
_ON_THEM = re.compile(r"^\W*(?:he|she|he's|she's|hes|shes|they're)\b|^\W*[他她]", re.IGNORECASE)
#: A clause that goes on about them, no subject: "..., she's turning 70, lives up in Glasgow and is obsessed with
#: gardening" (the twelfth blind set).
_GOES_ON = re.compile(
    r"^\W*(?:and\s+)?(?:lives?|loves?|likes?|is|has|enjoys?|turns?|turning|works?|plays?|collects?|wears?)\b",
    re.IGNORECASE,
)
#: A budget: "budget's around £80", "under £50", "预算500以内", "500块以内".
_BUDGET = re.compile(
    r"\bbudget\w*|\b(?:under|below|max|around|about|up\s+to)\s*[£$€¥]\s?\d+|预算|\d+\s*(?:元|块)?(?:以内|以下)",
    re.IGNORECASE,
)
_GIFT_WORDS = re.compile(rf"{_GIFT}|\b(?:for|my|our)\b|{KIN_EN}|{KIN_ZH}", re.IGNORECASE)


def gift_sentences(texts: Iterable[str]) -> list[str]:
    """Each stated sentence of ``texts`` naming a gift for someone the user names, with the ones right after
    it that open on them, or naming a budget."""
    found: list[str] = []
    for text in texts:
        # Each sentence as stated, one with a gift idea as said (:data:`_IDEA`).
        raw = [s.strip() for s in SENTENCE.split(text)]
        said = [s if _IDEA.search(s) else stated(s).strip() for s in raw]
        said = [s for s in said if s]
        i = 0
        while i < len(said):
            if _FOR_SOMEONE.search(said[i]):
                j = i + 1
                while j < len(said) and _ON_THEM.search(said[j]):
                    j += 1
                found.append(" ".join(map(_about_them, said[i:j])))
                i = j
                continue
            if _BUDGET.search(said[i]):
                found.append(said[i])
            i += 1
    return found


def _about_them(sentence: str) -> str:
    """``sentence`` with only its clauses that name the gift or open on the one it is for: "他特别爱喝茶"
    is theirs, "带滤网的那种最好" one purchase's (the eleventh blind set forbade it)."""
    kept = clauses_where(
        sentence, lambda c: bool(_FOR_SOMEONE.search(c) or _ON_THEM.search(c) or _GOES_ON.search(c) or _IDEA.search(c))
    )
    return kept.rstrip(" ,，;；、?？") or sentence


def gift_notes(texts: Sequence[str], notes: Iterable[str]) -> list[tuple[str, str]]:
    """The notes to add for the sentences of :func:`gift_sentences` whose words beyond a gift's and its
    recipient's no note says (:func:`mnemo.writing.quotes.new_facts`): ``(note text, the sentence it quotes)``."""
    return quoted_new(texts, gift_sentences(texts), notes, key=lambda s: _GIFT_WORDS.sub(" ", s))
