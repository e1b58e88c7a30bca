"""Whether a profile field's value is the user's (issue 42, 55): a name or a city
every word of which they said, a name that is no pronoun, relation or place, a city
not only a trip's or an address's, a style they asked for, a language they named
or write in. The note's rules are :mod:`mnemo.writing.grounding`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from mnemo.core import HAN, mentions, script_of
from mnemo.profile import LANGUAGE_NAMES, SAID_FIELDS, in_address, is_no_town, is_street_address
from mnemo.writing.grounding import CLAUSE, SENTENCE_ENDS, stated_sentences
from mnemo.writing.kin import HE_OR_SHE_ZH, KIN_EN, KIN_ZH
from mnemo.writing.traits import names_a_trait
from mnemo.writing.until import until_day
from mnemo.writing.wishes import style_said
from mnemo.writing.words import words_of

#: What a model appends to a Chinese place name the user said bare ("杭州" -> "杭州市"):
#: city, province, district, county. Not words of their own in a value that has others.
_PLACE_SUFFIXES = frozenset("市省区县")


def all_words_said(text: str, said: frozenset[str]) -> bool:
    """Whether every content word of ``text`` (a name, a city) is in ``said``;
    a value with no content word is not. A Chinese place's suffix (市, 省, 区,
    县) after a place the user said needs not be said."""
    words = words_of(text)
    if text.rstrip()[-1:] in _PLACE_SUFFIXES and len(words) > 1:
        words -= {text.rstrip()[-1]}
    return bool(words) and words <= said


#: The words before a place, not a person: "in Gdansk", "from Leeds", "住在南京", "从南京".
_PLACE_BEFORE = re.compile(r"(?:\b(?:in|from|to|at|near)\s+|(?:在|从|到|去|来自)\s*)$", re.IGNORECASE)
#: Scripts whose writers are answered in a CJK language when they name none.
_CJK_LANGUAGES = frozenset({"zh", "ja", "ko"})
#: The one language of a script (:func:`mnemo.core.script_of`: ``KANA`` when any kana).
_SCRIPT_LANGUAGE = {"KANA": "ja", "HANGUL": "ko"}


#: The words before what someone is, not who: "I'm a teacher", "我在健身房当教练", "我是一名护士".
_WHAT_BEFORE = re.compile(r"\b(?:a|an)\s+$|(?:一个|一名|一位|当|做|干)\s*$", re.IGNORECASE)


def said_as_what(value: str, texts: Iterable[str]) -> bool:
    """Whether the user's ``texts`` name ``value`` only after "a", "an", "当", "一名" ...: what they
    are ("I'm a Teacher": the thirteenth blind set's model took it for the name), never who."""
    said = mentions(value, texts)
    return bool(said) and all(_WHAT_BEFORE.search(t[: m.start()]) for t, m in said)


def said_as_place(value: str, texts: Iterable[str]) -> bool:
    """Whether the user's ``texts`` name ``value`` right after a place word
    ("I live in Gdansk", "我从南京搬来"): a place, never the user's name."""
    return any(_PLACE_BEFORE.search(t[: m.start()]) for t, m in mentions(value, texts))


#: A trip's words: before its place ("travelling in", "a trip to", "visiting" ...) and, in
#: Chinese, after it (出差, 旅游 ...: "在日本出差").
_TRIP_WORDS = (
    r"(?:travell?ing|trip|visiting|holiday(?:ing)?|vacation(?:ing)?|touring|a\s+(?:conference|course|training))"
    r"\s+(?:in\s+|to\s+|around\s+)?"
)
_TRIP_ZH = r"(?:出差|旅游|旅行|度假|出游|游玩|玩|培训|开会|参会|进修|学习|探亲)"
#: Where a trip's place is said: right after the trip's words or right before the Chinese ones.
_TRIP_BEFORE = re.compile(rf"\b{_TRIP_WORDS}$", re.IGNORECASE)
_TRIP_AFTER = re.compile(rf"\s*{_TRIP_ZH}")
#: Where a parcel is sent, said right before the place: "先寄西安项目部" (the thirteenth blind set: written as the
#: city), "do you deliver on saturdays to norwich": a destination only, no home.
_SENT_TO = re.compile(
    r"(?:寄|送|发|邮)(?:到|去|往|至)?\s*$|\b(?:ship|send|deliver|post|forward)\w*\s+(?:\w+\s+){0,3}(?:to|in)\s+$",
    re.IGNORECASE,
)
#: A trip's place in a sentence: "travelling in Japan", "on a trip to New York", "在日本出差", "去云南旅游".
TRIP = re.compile(
    rf"\b(?i:{_TRIP_WORDS})(?P<place>[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)"
    rf"|(?:在|去|到)(?P<zh>[^\W\d_]{{1,8}}?){_TRIP_ZH}"
)
#: Words for the user themselves, never a name: first-person and reflexive pronouns.
_SELF_WORDS = frozenset({"i", "me", "myself", "self", "user", "the user", "我", "自己", "我自己", "本人", "用户", "俺"})
#: A word that makes a value someone's relation, not a name: "The user's sister", "my mum", "用户的姐姐".
_RELATION = re.compile(r"\b(?:users?|my|me|mine|our|your|their|his|her)\b|用户|我的|我们", re.IGNORECASE)


#: A relation said as a name ("宝宝", "Mum"): never the user's name. Kin words that are
#: also given names ("Nan", "Nana") are not in it.
_KIN_NAME = re.compile(rf"(?:(?!nan\b|nana\b)(?:{KIN_EN})|(?:{KIN_ZH})+)", re.IGNORECASE)
#: Someone else, as a clause's subject before a name or a place: "she", "his", "my grandad", "at my sister's",
#: "她", "我妈".
_SOMEONE = re.compile(
    rf"\b(?:she|he|they|her|his|their|him|she's|he's)\b|\bmy\s+(?:{KIN_EN})(?:s|'s|’s)?\b|{HE_OR_SHE_ZH}|我的?(?:{KIN_ZH})"
    r"|(?:同事|朋友|同学|老板|领导|邻居|闺蜜)$",  # "帮同事老陈挑个保温杯" (the eleventh blind set)
    re.IGNORECASE,
)
#: The user as a subject after it ("my sister and I live in ..."), not "我妈".
_SELF = re.compile(rf"\b(?:i|i'm|im|i've|ive|me|myself|we|we're|us)\b|我(?!的?(?:{KIN_ZH}))", re.IGNORECASE)
#: A place said by whose it is, no city's name: "姐姐的家" (a city's name has no 的), "my sister's place".
_WHOSE_PLACE = re.compile(rf"的|{_RELATION.pattern}|\b(?:{KIN_EN})(?:'s|’s)", re.IGNORECASE)
#: Where the sentence a name or a place is said in starts: after one of these.
_SENTENCE_END = re.compile(rf"[;；\n{SENTENCE_ENDS}]")


def said_of_someone_else(value: str, texts: Iterable[str]) -> bool:
    """Whether the user's ``texts`` name ``value`` only about someone else: after a third
    person or a relation in its sentence, with no "I" after it ("for my grandad Albert - he
    lives in Aberdeen", "她叫王秀兰，住哈尔滨": a clause without a subject is its sentence's
    subject's): their name or town, not the user's."""
    said = mentions(value, texts)
    return bool(said) and all(_of_someone(t, m.start()) for t, m in said)


def _sentence_start(text: str, start: int) -> int:
    """Where the sentence of ``text`` that holds position ``start`` begins."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, start)]
    return ends[-1] if ends else 0


def _of_someone(text: str, start: int) -> bool:
    lead = text[_sentence_start(text, start) : start]
    someone = list(_SOMEONE.finditer(lead))
    return bool(someone) and not _SELF.search(lead[someone[-1].end() :])


def said_only_away(value: str, texts: Iterable[str]) -> bool:
    """Whether the user's ``texts`` name ``value`` only where they do not live: each time a
    trip's place (:data:`TRIP`), an address's town
    (:func:`mnemo.profile.address.said_in_address`), someone else's (:func:`said_of_someone_else`),
    where they come from ("originally from", "我老家是": :data:`_ORIGIN`), where a parcel is sent
    (:data:`_SENT_TO`) or where they are
    until a day ("staying in Whitby till March 14th": :func:`mnemo.writing.until.until_day`)."""
    said = mentions(value, texts)
    return bool(said) and all(
        _TRIP_BEFORE.search(t[: m.start()])
        or _TRIP_AFTER.match(t, m.end())
        or _SENT_TO.search(t[: m.start()])
        or in_address(t, m.start(), m.end())
        or _of_someone(t, m.start())
        or _ORIGIN.search(t[: m.start()])
        or until_day(_sentence_at(t, m.start())) is not None
        for t, m in said
    )


#: Where the user comes from, right before the place: not where they live now.
_ORIGIN = re.compile(
    r"\b(?:originally\s+(?:from|in)|grew\s+up\s+in|born\s+(?:and\s+(?:raised|bred)\s+)?in|home\s?town\s+(?:is\s+)?)\s*$"
    r"|(?:老家|家乡|故乡|祖籍|出生地|出生在|生在)(?:是|在)?\s*$",
    re.IGNORECASE,
)


def _sentence_at(text: str, start: int) -> str:
    """The sentence of ``text`` that holds position ``start``."""
    after = _SENTENCE_END.search(text, start)
    return text[_sentence_start(text, start) : after.end() if after else len(text)]


def _named(names: Iterable[str], folded: str) -> bool:
    return any(n in folded for n in names if len(n) > 2 or not n.isascii())


def named_languages(texts: Iterable[str]) -> list[str]:
    """The codes of the languages the user's ``texts`` name ("German", "英文"): a language
    not named is only inferred from the script they write in."""
    folded = " ".join(texts).casefold()
    return [code for code, names in LANGUAGE_NAMES.items() if _named(names[1:], folded)]


def field_said(field: str, value: str, texts: Sequence[str], words: frozenset[str], *, city: str | None = None) -> bool:
    """Whether the user's ``texts`` (content ``words``) support ``value`` for a profile ``field``.

    A name or a city: every word of it said (:func:`all_words_said`); a name
    also is not a pronoun ("myself", "自己"), no relation ("The user's sister",
    "用户的姐姐": :data:`_RELATION`), no trait ("左撇子", "vegan":
    :func:`mnemo.writing.traits.names_a_trait`), not the ``city`` extracted with it nor
    said as a place nor only of someone else (:func:`said_of_someone_else`); a city not said
    only as a trip's, an address's or someone else's (:func:`said_only_away`), nor a place
    named by whose it is ("姐姐的家", "my sister's place"). A
    ``response_style``: the user asked for it, in a sentence about the answers
    (:func:`mnemo.writing.wishes.style_said`).
    A ``language``: named by the user, or, when they named none, one of the
    script they write in (Japanese for text with kana, Korean for Hangul, a CJK
    language for Han alone, else not one).
    """
    if field in SAID_FIELDS and not all_words_said(value, words):
        return False
    if field == "name":
        if value.strip().casefold() in _SELF_WORDS or _RELATION.search(value) or _KIN_NAME.fullmatch(value.strip()):
            return False
        if names_a_trait(value) or said_as_what(value, texts) or any(c.isdigit() for c in value):  # "43 42"
            return False
        if said_of_someone_else(value, texts):
            return False
        return (city is None or value.casefold() != city.casefold()) and not said_as_place(value, texts)
    if field == "city":
        return not _WHOSE_PLACE.search(value) and not said_only_away(value, texts)
    if field == "response_style":
        return style_said(value, texts)
    folded = " ".join(texts).casefold()
    if field == "language":
        named = named_languages(texts)
        if named:
            return value in named
        script = script_of(folded)
        if script in _SCRIPT_LANGUAGE:  # kana however many kanji: Japanese; mostly Hangul: Korean
            return value == _SCRIPT_LANGUAGE[script]
        return (value in _CJK_LANGUAGES) == (script == "CJK")
    return True


#: Where the user says they live: "I live in Bristol but I'm staying at my sister's in Cardiff until 15
#: March" (the tenth blind set: the city left unset), "I'm based in Leeds", "I moved to Cardiff", "I'm in
#: Swansea", "我家在南京", "我住在成都", "我搬到南京了".
_HOME = re.compile(
    r"\b(?:[Ii]|[Ww]e)(?:(?:\s+am|'m|’m|\s+are|'re|’re)\s+(?:based\s+)?in"
    r"|(?:'ve|’ve|\s+have)?(?:\s+just|\s+now|\s+still|\s+actually|\s+also)?\s+(?:live\s+in"
    # "I moved from Bristol up to Aberdeen" (the sixteenth blind set).
    r"|moved\s+(?:from\s+[A-Z][^\W\d_]+(?:[ -][A-Z][^\W\d_]+)?\s+)?(?:(?:up|down|over|back)\s+)?to))"
    r"\s+(?P<en>[A-Z][^\W\d_]+(?:[ -][A-Z][^\W\d_]+)?)"
    r"|\b[Ii]m\s+(?:based\s+)?in\s+(?P<im>[A-Z][^\W\d_]+)"
    r"|我(?:家)?(?:现在|刚|刚刚|已经|是|还是|一直|常)?(?:就)?(?:住在|家在|家是在|搬到了?|搬去了|住(?![得的过着不了在这那哪]))"
    rf"(?P<zh>{HAN.pattern}{{2,3}}?)"
    r"(?:市|的|，|。|哈|呢|啊|吧|了|\s|$)"
    # "while my flat in Dublin gets renovated", "现在不在那边了哈 搬苏州了" (the fifteenth blind set).
    r"|\b[Mm]y\s+(?:own\s+)?(?:flat|house|home|apartment)\s+in\s+(?P<flat>[A-Z][^\W\d_]+(?:[ -][A-Z][^\W\d_]+)?)"
    # "after the 14th it's back to normal, home in Croydon", "我家还是在无锡的" (the sixteenth blind set).
    r"|(?<![\w-])(?<!holiday\s)(?<!second\s)(?<!summer\s)(?<!my\s)[Hh]ome\s+(?:is\s+)?in\s+"
    r"(?P<home>[A-Z][^\W\d_]+(?:[ -][A-Z][^\W\d_]+)?)"
    rf"|我家(?:现在|还是|一直|就)?在(?P<jia>{HAN.pattern}{{2,3}}?)(?:市|的|，|。|哈|呢|啊|吧|\s|$)"
    # "I need delivery to Phoenix, where I live" (the tune half, en-hypo-1: a destination, and the home).
    r"|\b(?P<where>[A-Z][^\W\d_]+(?:[ -][A-Z][^\W\d_]+)?),\s+(?:which\s+is\s+)?where\s+(?:I|we)\s+"
    r"(?:live|(?:am|'m|’m)\s+based)\b"
    rf"|(?:^|(?<=[，,\s]))(?:现在|已经|刚|刚刚)?搬(?:到|去)?(?![过回走进出家新])(?P<moved>{HAN.pattern}{{2,3}}?)(?:了|啦)"
)


def home_city(texts: Sequence[str], words: frozenset[str]) -> str | None:
    """The city the user's stated ``texts`` (content ``words``) say they live in ("I live in X",
    "我家在X"), the last one said: every word of it said, no street, not only for now (a stay
    elsewhere in the same sentence is no matter: "I live in Bristol but I'm staying in Cardiff
    until 15 March"); ``None`` when they say none."""
    found = None
    for sentence in stated_sentences(texts):
        for m in _HOME.finditer(sentence):
            city = next(c for c in m.groups() if c)
            clause = _BUT.split(sentence[m.end() :], maxsplit=1)[0]
            if (
                all_words_said(city, words)
                and not is_street_address(city)
                and not is_no_town(city)
                and not _FOR_NOW.search(clause)
            ):
                found = city
    return found


#: Where what is said of the home ends: a clause's mark, "but", "though", "但", "不过".
_BUT = re.compile(rf"{CLAUSE.pattern}|\b(?:but|though|although|while|whereas)\b|但|不过|可是", re.IGNORECASE)
#: Where the user lives only for now: "I live in Cardiff until March", "我住在杭州到月底".
_FOR_NOW = re.compile(
    r"\b(?:until|till|til|for\s+now|at\s+the\s+moment|temporarily|for\s+work|on\s+(?:holiday|vacation|business)"
    r"|visiting|travel\w*|trip|this\s+week|next)\b|之前|暂时|到|出差|旅游|玩",
    re.IGNORECASE,
)


def city_of_district(value: str, texts: Iterable[str]) -> str:
    """The city the user named right before the district ``value`` ("住厦门思明区这边": "厦门", where
    Qwen2.5-Coder-1.5B wrote "思明区", the eleventh blind set; "在哈尔滨道里区": "哈尔滨"), else ``value``."""
    if not value.endswith(("区", "县")) or len(value) < 2:
        return value
    for text in texts:
        at = text.find(value)
        before = text[:at].removesuffix("市") if at > 0 else ""
        if len(before) >= 2 and _HAN.fullmatch(before[-2:]) and before[-2] not in _NOT_A_CITY_START:
            three = len(before) >= 3 and _HAN.fullmatch(before[-3]) and before[-3] not in _NOT_A_CITY_START
            return before[-3:] if three else before[-2:]
    return value


_HAN = re.compile(f"{HAN.pattern}+")
#: Words before a city's name, no part of it: "住厦门", "在杭州", "江苏省杭州".
_NOT_A_CITY_START = frozenset("在住到去是的我家了省从来")
