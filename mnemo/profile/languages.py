"""A language a user names, as the profile keeps it: its code ("pl"), from any of its
names ("Polish", "polski", "波兰语"), and its English name back for the prompt.

:data:`LANGUAGE_NAMES` are the names the writing looks for anywhere in what the user
said (a language named at all, one taken back); a few, since a name is also a word
("French fries"). :func:`language_code` reads any language by its English, Chinese or
own name, through langcodes and CLDR's names (language-data): the sixth blind set asked
for Polish, which the seven names written by hand here before did not know.
"""

from __future__ import annotations

from functools import cache

import langcodes

#: A language's code -> the names a user calls it by (its code first), looked for in free text.
LANGUAGE_NAMES: dict[str, tuple[str, ...]] = {
    "zh": ("zh", "chinese", "mandarin", "中文", "汉语", "普通话", "简体中文", "zh-cn"),
    "en": ("en", "english", "英文", "英语"),
    "ja": ("ja", "japanese", "日语", "日文"),
    "ko": ("ko", "korean", "韩语", "韩文"),
    "fr": ("fr", "french", "法语", "français"),
    "de": ("de", "german", "德语", "deutsch"),
    "es": ("es", "spanish", "西班牙语", "español"),
    "yue": ("yue", "cantonese", "粤语", "粵語", "广东话", "廣東話"),  # 广东话: no name CLDR gives
}
_BY_NAME = {name: code for code, names in LANGUAGE_NAMES.items() for name in names}


@cache
def language_code(name: str) -> str | None:
    """The code of the language ``name`` names (any case), or ``None``: one of
    :data:`LANGUAGE_NAMES`, or a language whose English, Chinese or own name it is
    exactly (with "文" for "语": "波兰文"), its macrolanguage's code ("cmn" is "zh").
    Not a near name: langcodes finds Persian for "person" and Frisian for "fries"."""
    folded = name.strip().casefold()
    if folded in _BY_NAME:
        return _BY_NAME[folded]
    if folded.isascii() and len(folded) < 3:  # "To" is a language's English name too
        return None
    try:
        found = langcodes.find(folded)
    except LookupError:
        return None
    code = langcodes.standardize_tag(found.language or "", macro=True)
    return code if folded in _names(code) else None


@cache
def _names(code: str) -> frozenset[str]:
    """The names of the language ``code`` a user writes: English, Chinese (its "语" also as "文"), its own."""
    language = langcodes.Language.get(code)
    names = {language.display_name("en"), language.display_name("zh"), language.autonym()}
    names |= {n[:-1] + "文" for n in names if n.endswith("语")}
    return frozenset(n.casefold() for n in names)


@cache
def language_label(code: str) -> str | None:
    """The English name of the language ``code`` ("Spanish" for "es"), or ``None`` when
    ``code`` is none that is known."""
    if code in LANGUAGE_NAMES:
        return LANGUAGE_NAMES[code][1].title()
    try:
        language = langcodes.Language.get(code)
    except ValueError:
        return None
    if not language.is_valid() or language.language in (None, "und"):
        return None
    name = language.display_name("en")
    return None if name.lower().startswith("unknown") else name


@cache
def is_language(text: str) -> bool:
    """Whether ``text`` names a language at all: a valid tag ("pt-br") or a name langcodes
    finds that says the language's English name ("Brazilian Portuguese"); "the user's
    preferred language" is none."""
    folded = text.strip().casefold()
    if language_code(folded) is not None or (langcodes.tag_is_valid(folded) and language_label(folded) is not None):
        return True
    try:
        found = langcodes.find(folded)
    except LookupError:
        return False
    return found.language_name("en").casefold() in folded  # not a near name: "person" is no Persian
