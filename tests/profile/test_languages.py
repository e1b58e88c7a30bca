"""mnemo.profile.languages: a language's code from any of its names, and its name back."""

from __future__ import annotations

import pytest

from mnemo.core import InvalidInputError
from mnemo.profile import format_profile, language_code, normalize_field
from mnemo.profile.languages import language_label


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("English", "en"),  # the names written here
        ("普通话", "zh"),
        ("Polish", "pl"),  # CLDR's, through langcodes (the sixth blind set)
        ("polski", "pl"),  # its own name
        ("波兰语", "pl"),
        ("波兰文", "pl"),  # "文" for "语"
        ("Cantonese", "yue"),
        ("粤语", "yue"),
        ("Vietnamese", "vi"),
        ("意大利语", "it"),
        ("mandarin", "zh"),  # the macrolanguage
        ("person", None),  # langcodes' nearest is Persian: no name of it
        ("fries", None),  # ... Western Frisian
        ("to", None),  # the English name of a language, and a word
        ("email", None),
        ("", None),
    ],
)
def test_a_language_is_read_by_its_english_chinese_or_own_name_exactly(name, code):
    assert language_code(name) == code


def test_the_profile_keeps_the_code_and_shows_the_name():
    assert normalize_field("language", "Polish") == "pl"
    assert normalize_field("language", "Brazilian Portuguese") == "brazilian portuguese"  # a language: as said
    assert normalize_field("language", "pt-BR") == "pt-br"  # a tag
    entry = {"source": "user_said", "first_seen": "2026-12-06"}
    assert format_profile({"language": {"value": "pl"} | entry}) == '- language: "pl" (Polish)  ("said 2026-12-06")'
    assert language_label("es") == "Spanish" and language_label("yue") == "Cantonese"
    assert language_label("klingonish") is None and language_label("zz") is None and language_label("") is None


@pytest.mark.parametrize("value", ["the user's preferred language", "person", "user language", "x"])
def test_a_value_that_names_no_language_is_refused(value):
    """A small model answered "the user's preferred language" for the field (the eighth blind set)."""
    assert normalize_field("language", "Spanish") == "es"  # precondition: a name passes
    with pytest.raises(InvalidInputError, match="language's name or code"):
        normalize_field("language", value)
