"""mnemo.writing.gifts: a gift the user is choosing, and its budget, are kept in their words (the fifteenth
blind set: Qwen2.5-Coder-1.5B kept none of "a bday present for my dad, he turns 60 on the 3rd of March"),
and what someone else said about a gift, or one purchase's wish, is not."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from mnemo import alist_notes
from mnemo.writing import aextract_messages
from mnemo.writing.gifts import gift_notes, gift_sentences
from tests.writing import EXTRACT, load_nothing_extracted


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            "looking for a bday present for my dad, he turns 60 on the 3rd of March. he's mad about fly fishing",
            "looking for a bday present for my dad, he turns 60 on the 3rd of March. he's mad about fly fishing",
        ),
        ("budget's around £80. nothing too techy", "budget's around £80."),
        ("想给女朋友挑个圣诞礼物 她超喜欢小熊维尼 啥都要维尼的🐻", "想给女朋友挑个圣诞礼物 她超喜欢小熊维尼"),
        ("她手腕细 手链一般戴最小号 预算500以内吧。对了别给我推", "她手腕细 手链一般戴最小号 预算500以内吧。"),
        # One purchase's wish is left out (the eleventh blind set forbade "滤网").
        (
            "帮同事老陈挑个保温杯吧，他人在成都，直接寄他公司那边，他特别爱喝茶，带滤网的那种最好",
            "帮同事老陈挑个保温杯吧，他人在成都，他特别爱喝茶",
        ),
        (
            "a bday present for my mum, she's turning 70, lives up in Glasgow and is obsessed with gardening",
            "a bday present for my mum, she's turning 70, lives up in Glasgow and is obsessed with gardening",
        ),
    ],
)
def test_a_gift_for_someone_the_user_names_and_a_budget_are_read(text, sentence):
    assert gift_sentences([text]) == [sentence]


@pytest.mark.parametrize(
    "text",
    [
        "my brother (lives in Perth, useless at presents) said get him a smartwatch but nah",  # someone else's advice
        "is this a good gift?",  # asked
        "my dad loves fishing",  # no gift
        "if I bought a present for my dad, would you wrap it?",  # supposed
    ],
)
def test_no_gift_is_read_from_advice_a_question_or_a_supposition(text):
    assert gift_sentences(["need a present for my dad"]) != []  # precondition
    assert gift_sentences([text]) == []


def test_the_gift_is_quoted_unless_a_note_says_what_it_says_beyond_the_gift():
    said = "looking for a bday present for my dad, he turns 60 on the 3rd of March."
    assert gift_notes([said], ["The user is looking for a birthday present for their dad."]) != []  # the date
    assert gift_notes([said], ["The user's dad turns 60 on the 3rd of March."]) == []


async def test_a_gift_the_extractor_dropped_is_kept(store, user):
    said = "looking for a bday present for my dad, he turns 60 on the 3rd of March. he's mad about fly fishing"
    await aextract_messages(store, user, load_nothing_extracted, [HumanMessage(said, id="h1")], 0, **EXTRACT)
    assert [n["text"] for n in await alist_notes(store, user)] == [f"The user said: “{said}”"]


def test_the_sixteenth_blind_set_s_gifts():
    """An occasion of someone the user names ("我婆婆过六十大寿"), a gift for them ("给她挑个"), and the
    idea though asked ("so I'm thinking a decent pair of binoculars?")."""
    zh = "下个月我婆婆过六十大寿，想给她挑个按摩足浴盆，她老说脚冷"
    assert gift_sentences([zh]) == [zh]
    en = (
        "hunting for a present for my dad's 70th in June — he's gone full birdo lately, "
        "so I'm thinking a decent pair of binoculars?"
    )
    assert gift_sentences([en]) == [en.rstrip("?")]
    assert gift_sentences(["so I'm thinking a decent pair of binoculars?"]) == []  # an idea for no one named
    on_them = "looking for a present for my dad. he loves birds, I'm thinking binoculars?"
    assert gift_sentences([on_them]) == ["looking for a present for my dad. he loves birds, I'm thinking binoculars"]
    assert gift_sentences(["my dad's 70th is in June, do you have binoculars?"]) == []  # asked, no idea
