"""mnemo.writing.until: a situation the user stated until a day is kept in their words,
expiring then, when the extractor dropped it (issue 55 point 4: Qwen2.5-Coder-1.5B
dropped "装修……到X月X号" on every set); one errand's deadline is not kept."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from langchain_core.messages import HumanMessage

from harness.scripted import ScriptedChatModel, tool_call
from mnemo import alist_notes
from mnemo.notes import expiry
from mnemo.writing import aextract_messages
from mnemo.writing.until import until_day, until_notes, until_sentences
from tests.writing import EXTRACT, load_nothing_extracted

ZH = "我们家厨房在翻新，一直到8月18号家里都没人，这段时间的快递先压着别发。"
EN = "heads up - I'm at my parents' farm until the 9th of Sept, nobody can sign for parcels at home."


@pytest.fixture(autouse=True)
def on_june_first(monkeypatch):
    monkeypatch.setattr(expiry, "clock", lambda: datetime(2026, 6, 1, 12, tzinfo=UTC))


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("I'm away until April 20.", date(2027, 4, 20)),  # passed this year: next year's
        ("staying at my mum's till around the 20th of June", date(2026, 6, 20)),
        ("we're closed through Sept 9th", date(2026, 9, 9)),
        ("I'm in hospital up to 3 Jul", date(2026, 7, 3)),
        ("一直到7月31号都没人住", date(2026, 7, 31)),
        ("我三月二十号之前都在日本出差", date(2027, 3, 20)),
        ("到十二月三十一日为止", date(2026, 12, 31)),
        ("从6月1号到6月15号我都不在家", date(2026, 6, 15)),  # the range's end
        ("until June 1", date(2026, 6, 1)),  # today is still to come
        ("我下周一去青岛培训，12月3号才回来", date(2026, 12, 3)),  # back on a day
        ("I'll be back on Jan 9th", date(2027, 1, 9)),
        ("until Feb 30", None),  # no such day
        ("until then", None),
        ("6月5号之前送到", None),  # a deadline, no while
        ("1月20号之前家里都没人，到时候再送吧", date(2027, 1, 20)),  # before a day, a state (the sixth blind set)
        ("公司八月十五号之前在装修", date(2026, 8, 15)),
        ("请在6月5号之前发货", None),
        ("I'm staying at my in-laws in Norwich from 3 to 24 March", date(2027, 3, 24)),  # blind13: a range's end
        ("away from 3 to 5pm", None),  # hours, no day
    ],
)
def test_the_day_a_situation_lasts_until_is_read_in_both_languages(text, day):
    assert until_day(text) == day


@pytest.mark.parametrize(
    "text",
    [
        "Please deliver it before June 5.",  # one errand's deadline
        "Will you be open until June 20?",  # a question
        "If I were away until June 20, could you hold my parcels?",  # a supposition
        "The sale runs until June 20.",  # not about the user
        "能在6月5号之前送到吗？",
    ],
)
def test_a_deadline_a_question_a_supposition_or_the_shop_is_no_situation_of_the_user(text):
    assert until_sentences([EN]) != []  # the rule reads a situation at all
    assert until_sentences([text]) == []


def test_the_note_quotes_the_user_unless_a_note_ends_that_day_says_it_or_quotes_it():
    assert until_notes([EN], [("The user lives in Leeds.", None)]) == [(f"The user said: “{EN}”", date(2026, 9, 9))]
    assert until_notes([EN], [("The user is away.", "2026-09-09T23:59:59.999999+00:00")]) == []
    assert until_notes([EN], [("The user is at their parents' farm until September 9.", None)]) == []
    assert until_notes([EN], [(f"The user said: “{EN}”", None)]) == []
    ((note, day),) = until_notes([ZH], [])
    assert note == f"用户说：“{ZH}”" and day == date(2026, 8, 18)


async def test_a_situation_the_extractor_dropped_is_kept_once_until_its_day(store, user):
    thread = [HumanMessage(ZH, id="h1")]
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT) == (1, 0)
    (note,) = await alist_notes(store, user)
    assert note["text"] == f"用户说：“{ZH}”" and note["expires_at"].startswith("2026-08-18T23:59")
    thread.append(HumanMessage(ZH, id="h2"))  # said again: the note is shown, no second copy
    assert await aextract_messages(store, user, load_nothing_extracted, thread, 1, **EXTRACT) == (2, 0)
    assert len(await alist_notes(store, user)) == 1


async def test_the_extractor_s_own_temporary_note_is_enough(store, user):
    answer = tool_call(
        "MemoryExtraction",
        temporary_notes=[{"text": "The user is at their parents' farm; nobody is home.", "expires": "2026-09-09"}],
    )

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: answer)

    assert await aextract_messages(store, user, load, [HumanMessage(EN, id="h1")], 0, **EXTRACT) == (1, 0)
    assert [n["text"] for n in await alist_notes(store, user)] == [
        "The user is at their parents' farm; nobody is home."
    ]


async def test_an_address_until_a_day_expires_then_though_no_note_gave_its_end(store, user):
    text = "Until 30 June please send my orders to 14 Harbour Lane, Brighton."
    assert await aextract_messages(
        store, user, load_nothing_extracted, [HumanMessage(text, id="h1")], 0, **EXTRACT
    ) == (1, 0)
    (note,) = await alist_notes(store, user)  # one note: the address's quote, not a second one for the day
    assert "14 Harbour Lane" in note["text"] and note["expires_at"].startswith("2026-06-30T23:59")


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("I'm away on a course from 3 Aug till the 14th so nobody's home", date(2026, 8, 14)),  # the month before
        ("I'm away till the 14th", None),  # no month named: no day
        ("我下周住院，估计8月2号才出院，家里没人", date(2026, 8, 2)),
        ("im in hospital after knee surgery until the 28th of February", date(2027, 2, 28)),
    ],
)
def test_a_day_alone_takes_the_month_named_before_it_and_leaving_hospital_ends_a_stay(text, day):
    """Issue 55, the third blind set: "from 12 Jan till the 26th", "12月20号才出院"."""
    assert until_day(text) == day


def test_a_standing_request_asked_as_a_question_keeps_its_end():
    """ "can u send my orders to 14 Harbour Lane, Whitby until march 3rd?" lost its date as a question."""
    asked = "hey - can u send my orders to 3 Quay Road, Whitby until 30 June? staying with my sister"
    ((note, day),) = until_notes([asked], [])
    assert day == date(2026, 6, 30) and "3 Quay Road" in note
    assert until_notes(["Will the lamp be in stock until 30 June?"], []) == []  # a question, no request
    assert until_notes(["Can I still return my kettle until 30 June?"], []) == []  # the user asks, no request


def test_a_pronoun_typed_without_its_apostrophe_makes_a_situation_the_user_s():
    """Issue 55, the fourth blind set: "im in hospital ... until the 28th of February" was dropped."""
    from mnemo.writing.until import until_sentences

    assert until_sentences(["the shop is closed until the 28th of February"]) == []  # not about the user
    assert [d for _, d in until_sentences(["im in hospital until the 28th of February"])] == [date(2027, 2, 28)]
    assert [d for _, d in until_sentences(["ive moved out until the 28th of February"])] == [date(2027, 2, 28)]
