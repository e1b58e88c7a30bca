"""mnemo.writing.needs: an allergy or an intolerance the user stated is kept in their
words when the extractor dropped it (issue 55: Qwen2.5-Coder-1.5B did, in Chinese, on the
held-out half and the fourth blind set), and a question, a supposition or a product's
words are none."""

from __future__ import annotations

import pytest

from mnemo.writing.needs import need_notes, need_sentences
from tests.writing import assert_quoted_once


@pytest.mark.parametrize(
    ("texts", "sentence"),
    [
        (
            [
                "你们那款进口全麦面包是用什么粉做的啊？",
                "我麸质不耐受 吃了肚子疼，只能买无麸质的。顺便问下我昨天下单的那箱牛奶还能改送货时间不",
            ],
            "我麸质不耐受 吃了肚子疼，只能买无麸质的。",
        ),
        (
            ["asking cuz im seriously allergic to tree nuts, cashews especially. also is it vegan"],
            "asking cuz im seriously allergic to tree nuts, cashews especially.",
        ),
        (["我对海鲜过敏，这个汤里有虾吗？"], "我对海鲜过敏"),  # the question's clause left out
        (["my son cant eat eggs"], None),  # the user's household, "cant" as typed
        (["I'm coeliac so gluten-free only please."], None),
        (["I'm lactose intolerant."], None),
        # A need of access (the fifth blind set).
        (
            ["quick q - is it a scanned PDF? I'm blind and use a screen reader, so plain text please"],
            "I'm blind and use a screen reader, so plain text please",
        ),
        # The invoice's clause left out: a space between Han characters is a comma.
        (["还有我眼睛老花得厉害 发票能不能给我发大字版的，字太小😭"], "还有我眼睛老花得厉害 字太小😭"),
        (["fyi I'm partially sighted, no tables pls"], None),
        (["I'm hard of hearing so please don't call, email me instead."], None),
    ],
)
def test_an_allergy_the_user_stated_is_read_in_code(texts, sentence):
    assert need_sentences(texts) == [sentence or texts[-1]]


@pytest.mark.parametrize(
    "text",
    [
        "Is this allergy-friendly?",  # a question
        "If I were allergic to nuts, could I eat it?",  # a supposition
        "The label says it may cause allergic reactions.",  # not about the user
        "这款面包不含麸质吗？",
        "假如我对花生过敏，这个能吃吗？",
        "I need a roller blind for my kitchen window.",  # a window's blind
        "Do you sell screen readers?",
    ],
)
def test_no_allergy_is_read_from_a_question_a_supposition_or_a_product(text):
    assert need_sentences(["I'm allergic to peanuts."]) != []  # the rule reads one at all
    assert need_sentences([text]) == []


def test_the_note_quotes_the_allergy_unless_a_note_says_it():
    assert need_notes(["I'm allergic to peanuts."], []) == [
        ("The user said: “I'm allergic to peanuts.”", "I'm allergic to peanuts.")
    ]
    assert need_notes(["I'm allergic to peanuts."], ["The user is allergic to peanuts."]) == []
    lactose = "Remember that I can't have anything with lactose."
    assert need_notes([lactose], ["The user lives in Leeds."]) != []  # precondition: quoted
    assert need_notes([lactose], ["The user cannot have lactose."]) == []  # a third of its words not shared
    assert need_notes([lactose], ["The user cannot have gluten."]) != []  # another allergy
    sighted = (
        "fyi I'm partially sighted and use a screen reader, so plain text works best for me, no tables or pics pls"
    )
    assert need_notes([sighted], ["The user lives in Leeds."]) != []  # precondition: quoted
    assert need_notes([sighted], ["The user is partially sighted."]) == []  # a need of access, a word of it


async def test_an_allergy_the_extractor_dropped_is_kept_once(store, user):
    await assert_quoted_once(
        store, user, "这个汤里有虾吗？我对海鲜过敏。", "再说一次，我对海鲜过敏。", "用户说：“我对海鲜过敏。”"
    )
