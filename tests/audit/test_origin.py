"""mnemo.audit.origin: who stated a value, as every prompt line says it."""

from __future__ import annotations

import pytest

from mnemo.audit import SOURCES, stated
from mnemo.audit.origin import STATED_BY


def test_every_source_has_its_words_and_only_the_user_s_say_said():
    assert set(STATED_BY) == set(SOURCES)
    assert {s for s, words in STATED_BY.items() if words == "said"} == {"user_said", "tool"}


@pytest.mark.parametrize(
    ("source", "first_seen", "line"),
    [
        ("user_said", "2026-11-30T08:00:00+00:00", "said 2026-11-30"),
        ("tool", "2026-11-30", "said 2026-11-30"),
        ("app", None, "set by an application"),
        ("inferred", "2026-12-01T00:00:00Z", "inferred 2026-12-01"),
        ("admin", "2026-12-01", "inferred 2026-12-01"),  # a source it does not know is never the user's words
        (None, "", "inferred"),
    ],
)
def test_stated_says_who_and_since_when(source, first_seen, line):
    assert stated(source, first_seen) == line
