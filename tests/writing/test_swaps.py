"""mnemo.writing.swaps: a correction naming the right value in place of a wrong one revises
the note holding the wrong one (issue 55: "不是芒果 是猕猴桃！" and "打错了，是39码！38那是我妈的码"
left the wrong value kept, the ninth and eleventh blind sets), a name or a city the user corrects
is the profile's (the fourteenth), and nothing else is swapped."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from mnemo import aget_profile, alist_notes
from mnemo.writing import MemoryExtraction, aextract_messages
from mnemo.writing.apply import aapply_extraction
from mnemo.writing.swaps import swapped_fields, swapped_notes
from tests.writing import EXTRACT, load_nothing_extracted


@pytest.mark.parametrize(
    ("said", "note", "revised"),
    [
        (
            "啊等下 我说错了 不是芒果 是猕猴桃！芒果我能吃的 每次都记混😂",
            "用户说：“我芒果过敏哈 甜品礼盒里有芒果的都别给我推”",
            "用户说：“我猕猴桃过敏哈 甜品礼盒里有猕猴桃的都别给我推”",
        ),
        ("我不是花生过敏，是对腰果过敏！", "用户对花生过敏", "用户对腰果过敏"),
        ("啊不对不对打错了，是39码！38那是我妈的码😂", "用户说：“我脚一直穿38的”", "用户说：“我脚一直穿39的”"),
        ("sorry, not peanuts, it's cashews", "The user is allergic to peanuts.", "The user is allergic to cashews."),
        ("oops not peanuts, cashews", "The user is allergic to peanuts.", "The user is allergic to cashews."),
        ("I meant cashews, not Peanuts", "The user is allergic to peanuts.", "The user is allergic to cashews."),
    ],
)
def test_a_swap_revises_the_note_holding_the_wrong_value(said, note, revised):
    assert swapped_notes([said], {"k": note}) == [("k", note, revised)]


@pytest.mark.parametrize(
    ("said", "note"),
    [
        ("the wrong item came, I ordered 2 not 3", "The user has 3 cats."),  # no mistake of the user's own
        ("not me, it's my wife who is vegan", "The user is vegan."),  # no value swapped
        ("I do not like red, blue is ok", "The user does not like red."),
        ("not bad, thanks", "The user has bad knees."),  # no correction said
        ("sorry, not peanuts, cashews", "The user has bad knees."),  # the note holds no wrong value
        ("不是芒果 是猕猴桃吗？", "用户对芒果过敏"),  # asked
        ("typo, I meant 12", "The user has 2 cats and 3 dogs."),  # which number is wrong is not said
        ("typo, I meant 9.5", "The user has 2 kids."),  # nor here: the message names no number of the note
        ("不是芒果 是猕猴桃", "用户住在北京"),  # the note holds no wrong value
    ],
)
def test_nothing_else_is_swapped(said, note):
    assert swapped_notes(["sorry, not peanuts, it's cashews"], {"k": "allergic to peanuts"}) != []  # precondition
    assert swapped_notes([said], {"k": note}) == []


async def test_the_extractor_s_silence_leaves_no_wrong_value(store, user):
    """Through the write pipeline, with an extractor that keeps nothing: the corrected note replaces the old."""
    said = "我芒果过敏哈 甜品礼盒里有芒果的都别给我推"
    thread = [HumanMessage(said, id="h1")]
    await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT)
    assert [n["text"] for n in await alist_notes(store, user)] == [f"用户说：“{said}”"]
    thread.append(HumanMessage("啊等下 我说错了 不是芒果 是猕猴桃！芒果我能吃的", id="h2"))
    await aextract_messages(store, user, load_nothing_extracted, thread, 1, **EXTRACT)
    texts = [n["text"] for n in await alist_notes(store, user)]
    assert texts == ["用户说：“我猕猴桃过敏哈 甜品礼盒里有猕猴桃的都别给我推”"]


@pytest.mark.parametrize(
    ("said", "profile", "fields"),
    [
        ("sorry typo not Cardiff — Cork. Cardiff is where my sister lives haha", {"city": "Cardiff"}, {"city": "Cork"}),
        ("不对不对 说错了 还有名字打错了 是马丽 美丽的丽", {"name": "马莉"}, {"name": "马丽"}),
        ("btw my name's spelt Siobhan", {}, {"name": "Siobhan"}),
        ("there's a typo in my name, it's Niamh", {"name": "Neve"}, {"name": "Niamh"}),
    ],
)
def test_a_name_or_a_city_the_user_corrects_is_swapped(said, profile, fields):
    assert swapped_fields([said], profile) == fields


@pytest.mark.parametrize(
    ("said", "profile"),
    [
        ("sorry, not peanuts, it's cashews", {"city": "Cardiff", "name": "Tomasz"}),  # no field holds the wrong value
        ("not Cardiff — Cork?", {"city": "Cardiff"}),  # asked
        ("名字没错 是马莉", {"name": "马莉"}),  # no mistake said
        ("my name is Tomasz", {"name": "Tomasz"}),
    ],
)
def test_no_field_is_swapped_without_a_correction_of_its_value(said, profile):
    assert swapped_fields(["sorry typo not Cardiff — Cork"], {"city": "Cardiff"}) == {"city": "Cork"}  # precondition
    assert swapped_fields([said], profile) == {}


async def test_a_corrected_city_and_name_replace_the_profile_s_though_the_extractor_kept_nothing(store, user):
    """Through the write pipeline: "not Cardiff — Cork" and "名字打错了 是马丽" (the fourteenth blind set kept the
    wrong name) change the fields whose value they correct."""
    await aapply_extraction(store, user, MemoryExtraction(city="Cardiff", name="马莉"))
    thread = [HumanMessage("sorry typo not Cardiff — Cork. 还有名字打错了 是马丽 美丽的丽", id="h1")]
    await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT)
    profile = await aget_profile(store, user)
    assert (profile["city"]["value"], profile["name"]["value"]) == ("Cork", "马丽")


def test_a_number_said_to_be_of_the_past_is_the_wrong_one():
    """ "and size is UK 8, 7 was before my feet decided to grow" (the fifteenth blind set): the 7 is left out of
    what is stated, and still read as the value the note holds."""
    said = "ugh sorry, I meant Leicester not Leeds. and size is UK 8, 7 was before my feet decided to grow"
    note = "The user said: “looking for trail running shoes, I'm a UK 7”"
    assert swapped_notes([said], {"k": note}) == [("k", note, note.replace("UK 7", "UK 8"))]
