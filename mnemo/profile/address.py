"""A street address is never a city (issue 55 point 4).

The profile's ``city`` is where the user lives, a place's name: a value with a
house number, a postcode or a street ("14 Harbour Lane, Brighton", "西湖区文三路 88 号")
is an address, which is a note (with its end date when the user gives one), never
the city. :func:`is_street_address` holds for every way a city is written (the
extractor, the profile API, the tools, an import: :func:`mnemo.profile.normalize_field`);
:func:`said_in_address` tells the writing that a city the user named only inside
a street address ("send it to 14 Harbour Lane, Brighton") is not where they live.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mnemo.core import HAN, said_only_between

#: Words naming a street after its name ("Harbour Lane"; not "St" or "Dr": "Port St. Lucie" is a
#: city), compounds' endings ("Hauptstraße") and the words before a street's name ("Rue de Rivoli").
_STREET_WORDS = (
    r"street|road|rd|lane|ln|avenue|ave|boulevard|blvd|drive|way|close|court|terrace|crescent|"
    r"highway|hwy|alley|parkway|square|straße|strasse|str|gasse|weg|straat|laan|vej|gatan|gata"
)
_STREET_BEFORE = r"rue|calle|via|avenida|rua|viale|piazza|plaza|ulica|ul"
#: A street in a script with case: a word then a street word, or a street word then a name.
_LATIN_STREET = re.compile(
    rf"[^\W\d_][\w'’-]*\s+(?:{_STREET_WORDS})\b\.?|\b(?:{_STREET_BEFORE})\.?\s+(?:de\s+|del\s+|della\s+)?[^\W\d_]"
    rf"|[^\W\d_]+(?:straße|strasse|gasse|weg)\b",
    re.IGNORECASE,
)
#: A street or a house number in Chinese or Japanese (路, 街, 巷, 弄, 胡同, 大道, 88 号, 丁目, 番地),
#: in Korean (세종대로 1, 테헤란로 152, 가로수길 5); a floor, a unit or a room ("6楼", "3单元").
_CJK_STREET = re.compile(r"[路街巷弄]|胡同|大道|\d\s*[号號楼樓层層室]|单元|丁目|番地|[로길]\s*\d")
#: A house number opening the value ("14 Harbour Lane", "221B, Baker ...", "4th floor"), a floor, or a postcode.
_NUMBER = re.compile(
    r"^\s*\d+(?:st|nd|rd|th|[a-z])?\b\s*,?\s*[^\W\d_]|\bfloor\b|\d{4,6}|\b[A-Z]{1,2}\d[A-Z0-9]?\s?\d[A-Z]{2}\b",
    re.IGNORECASE,
)


#: A place a parcel is left, no town: "丰巢快递柜" (the tenth blind set: written as the city), "前台", "a locker".
_DELIVERY_POINT = re.compile(
    r"快递柜|驿站|丰巢|菜鸟|酒店|宾馆|前台|门卫|小区|大厦|写字楼|\b(?:locker|reception|hotel|concierge|front\s+desk)\b",
    re.IGNORECASE,
)


#: A place that is no town: a word for home or here ("我家", "家里", "home"), a pronoun's ("我家"), a venue
#: ("健身房", "项目部", "the gym"): the thirteenth blind set's model wrote "我家", "家里" and "健身房" as the city.
#: Not 家 inside a name ("石家庄", "张家界").
_NO_TOWN = re.compile(
    r"^(?:家|家里|老家|家乡|本地|当地|这里|这边|那里|那边|公司|单位|学校)$|[我你他她]"
    rf"|{HAN.pattern}(?:房|馆|厅|室|场|院|所|部|公司|单位|学校)$"  # not 店: 驻马店
    r"|^(?:(?:my|our|the)\s+)?(?:home|house|place|flat|gym|office|work|school|hospital|here|there|local)$",
    re.IGNORECASE,
)


def is_no_town(value: str) -> bool:
    """Whether ``value`` (a city as written) names no town: home, here, a venue ("我家", "健身房", "the gym")."""
    return bool(_NO_TOWN.search(value.strip()))


def is_street_address(value: str) -> bool:
    """Whether ``value`` (a city as written) is a street address or part of one:
    it has a house number or a postcode (no city's name has one), a street
    ("Harbour Lane", "Rue de Rivoli", "Hauptstraße"), or a Chinese, Japanese or
    Korean street or house number, or a place a parcel is left ("丰巢快递柜", "a locker")."""
    found = (p.search(value) for p in (_NUMBER, _LATIN_STREET, _CJK_STREET, _DELIVERY_POINT))
    return any(found)


#: A flat, a unit or a floor after the street: "Apt 3B", "Flat 2", "Suite 400", "#12", "2nd Floor".
_UNIT = (
    r"(?:,?\s*(?:(?:apt|apartment|unit|suite|ste|flat|room|rm|floor|fl|building|bldg)\.?\s*#?|#\s*)\w+"
    r"|,?\s*\d+\w*\s+floor)"
)
#: Right before a place, the end of a street address and a postcode: "14 Harbour Lane, ", "Hauptstraße 5, 10115 ",
#: "27 Wrenfield Lane, Apt 3B, ".
_ADDRESS_BEFORE = re.compile(
    rf"(?:\d+[a-z]?\s+(?:[^\W\d_][\w'’-]*\s+){{0,3}}(?:{_STREET_WORDS})|[^\W\d_]*(?:{_STREET_WORDS})\s+\d+[a-z]?)"
    rf"\.?(?:{_UNIT})*\s*,?\s*"
    r"(?:\d{4,6}\s+|[A-Z]{1,2}\d[A-Z0-9]?\s?\d[A-Z]{2}\s+)?$",
    re.IGNORECASE,
)
#: Right after a place, in Chinese: the rest of a street address ("西湖区文三路", "杭州市西湖区文三路").
_ADDRESS_AFTER = re.compile(r"[^\W\d_]{0,10}?(?:[路街巷弄]|胡同|大道)")


def said_in_address(value: str, texts: Iterable[str]) -> bool:
    """Whether the user's ``texts`` name ``value`` only inside a street address
    ("14 Harbour Lane, Brighton", "西湖区文三路 88 号"): the town of an address
    (a delivery's, a relative's) is not where the user lives."""
    return bool(value.strip()) and said_only_between(value, texts, _ADDRESS_BEFORE, _ADDRESS_AFTER)


def in_address(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a place's name) stands inside a street address, as
    :func:`said_in_address` reads one mention."""
    return bool(_ADDRESS_BEFORE.search(text[:start]) or _ADDRESS_AFTER.match(text, end))


#: A word that is no part of a street's name ("3 miles down the road", "2 road bikes", "11 is always way
#: too tight": the tenth blind set).
_NOT_A_NAME = (
    r"(?!(?:the|a|an|my|our|your|his|her|their|this|that|down|up|along|on|in|at|to|of|and|or|miles?|km|times?"
    r"|is|are|was|were|be|always|never|too|so|very|way|still|just|not)\b)"
)
#: A street address with its house number, in a sentence: "14 Harbour Lane", "221B Baker Street",
#: "Hauptstraße 5", "文三路 88 号", "建国路12号". The named group is the street's name without the number.
_HOUSE_ADDRESS = re.compile(
    rf"\b\d+[a-z]?,?\s+(?P<street>(?:{_NOT_A_NAME}[^\W\d_][\w'’-]*\s+){{1,3}}(?:{_STREET_WORDS}))\b"
    r"|\b(?P<compound>[^\W\d_]+(?:straße|strasse|gasse|weg|straat|laan|vej|gatan|gata))\s+\d+[a-z]?\b"
    r"|(?P<cjk>[^\W\d_]{0,2}(?:[路街巷弄]|胡同|大道))\s*\d+\s*[号號]",
    re.IGNORECASE,
)


def house_address(text: str) -> str | None:
    """The street of the first street address with a house number in ``text``
    ("Harbour Lane" in "send it to 14 Harbour Lane, Brighton", "文三路" in
    "寄到西湖区文三路 88 号"), or ``None``: a number alone, a street alone or a
    postcode is none."""
    m = _HOUSE_ADDRESS.search(text)
    return None if m is None else next(g for g in m.groups() if g).strip()
