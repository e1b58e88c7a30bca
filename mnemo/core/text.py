"""Text helpers of notes: the lexical guard of semantic dedupe, BM25 tokens, rank fusion.

A near neighbour is the same note only if no content word (or CJK character) is new
on either side; written by hand, since no maintained library detects "same fact"
offline for Chinese and English (measurements: ``docs/thresholds.md``).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_FUNCTION_WORDS = frozenset(
    """a an the and or but is are was were be been am to of in on at by for from with via as it its
    this that these those they them their there he she his her him we our you your i me my user users
    has have had does did do not no very really also just who which what when where would rather
    prefers prefer likes like owns own""".split()
)
_FUNCTION_CHARS = frozenset("用户的了是在有对和与也都很一个着过吗呢吧啊我你他她它们这那就还又把被给让于")

_WORD = re.compile(r"[a-z0-9]+")
_WHITESPACE = re.compile(r"\s+")
#: One Han character (CJK ideographs, their extension A and compatibility block).
HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_HAN_RUN = re.compile(f"(?:{HAN.pattern})+")


def collapse_whitespace(text: str) -> str:
    """``text`` with every run of white space (newlines, tabs) made one space, stripped."""
    return _WHITESPACE.sub(" ", text).strip()


def content_tokens(text: str) -> frozenset[str]:
    folded = text.casefold()
    # Numbers are content, whole: "item 2" is not "item 12", "123456" not "123457".
    words = {
        w if w.isdigit() else w[:5]
        for w in _WORD.findall(folded)
        if w not in _FUNCTION_WORDS and (len(w) > 1 or w.isdigit())
    }
    chars = {c for c in HAN.findall(folded) if c not in _FUNCTION_CHARS}
    return frozenset(words | chars)


def adds_nothing(new: str, old: str) -> bool:
    """True when every content token of ``new`` is already in ``old``."""
    return content_tokens(new) <= content_tokens(old)


# --------------------------------------------------------------------------- BM25
# Dense similarity alone leaves recall on the table for notes: names, places
# and rare words ("Xiaomi", "Mia", "滤芯") are exact-match signals an embedding
# blurs. Measured on LoCoMo (docs/bench.md): dense + BM25 by reciprocal rank
# fusion beats either alone. The store API has no lexical search, so mnemo
# keeps its own postings at write time (mnemo.notes.index) over these tokens.

_BM25_STOP = _FUNCTION_WORDS | {"i", "me", "my", "what", "when", "how", "why", "did", "does", "do", "about", "any"}


def bm25_tokens(text: str) -> list[str]:
    """Lower-cased words without function words; CJK as single characters and
    bigrams (no segmenter needed: character bigrams are the usual BM25 unit
    for Chinese)."""
    folded = text.casefold()
    tokens = [w for w in _WORD.findall(folded) if w not in _BM25_STOP and len(w) > 1]
    for run in _HAN_RUN.findall(folded):
        tokens.extend(c for c in run if c not in _FUNCTION_CHARS)
        tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
    return tokens


def reciprocal_rank_fusion(rankings: list[list[str]], *, k: int = 60, weights: list[float] | None = None) -> list[str]:
    """Keys ordered by the sum of ``weight / (k + rank)`` over the rankings
    (``k=60`` and equal weights are the textbook defaults; mnemo's recall
    passes its own, :data:`mnemo.notes.recall.FUSION_K`)."""
    fused: dict[str, float] = {}
    for ranking, weight in zip(rankings, weights or [1.0] * len(rankings), strict=True):
        for rank, key in enumerate(ranking):
            fused[key] = fused.get(key, 0.0) + weight / (k + rank + 1)
    return sorted(fused, key=lambda key: -fused[key])


#: Letters looked at to tell a note's script (a note is a fact, its start says it).
_SCRIPT_SAMPLE = 200


def script_of(text: str) -> str:
    """The writing system most of ``text``'s first letters are in ("LATIN",
    "CJK", "CYRILLIC", ...; Japanese, with any kana, is "KANA"), as Unicode
    names it: the embedder's score offset between languages follows it."""
    sample = text[:_SCRIPT_SAMPLE]
    if sample.isascii():  # most notes: no need to name each letter
        return "LATIN" if any(ch.isalpha() for ch in sample) else ""
    counts: dict[str, int] = {}
    for ch in sample:
        if ch.isalpha():
            script = unicodedata.name(ch, "?").split(" ", 1)[0]
            if script in ("HIRAGANA", "KATAKANA"):
                return "KANA"
            counts[script] = counts.get(script, 0) + 1
    return max(counts, key=lambda s: counts[s]) if counts else ""


def mentions(value: str, texts: Iterable[str]) -> list[tuple[str, re.Match[str]]]:
    """Each place a text of ``texts`` says ``value`` (any case): the text and the match."""
    pattern = re.compile(re.escape(value.strip()), re.IGNORECASE)
    return [(t, m) for t in texts for m in pattern.finditer(t)]


def said_only_between(value: str, texts: Iterable[str], before: re.Pattern[str], after: re.Pattern[str]) -> bool:
    """Whether ``texts`` say ``value`` and every time right after ``before`` (searched in
    the text up to it: anchor it with ``$``) or right before ``after`` (matched where it ends):
    a place said only as a trip's, only inside a street address."""
    said = mentions(value, texts)
    return bool(said) and all(before.search(t[: m.start()]) or after.match(t, m.end()) for t, m in said)
