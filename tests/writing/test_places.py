"""mnemo.writing.places: a street address or a trip's place the user gives is kept as a note in
their own words, whatever the extractor returned (issue 55 point 4: Qwen2.5-Coder-1.5B
kept the town, or wrote the street as the city, and no note had the street)."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from langchain_core.messages import HumanMessage

from harness.scripted import ScriptedChatModel, tool_call
from mnemo import aget_profile, alist_notes
from mnemo.writing import aextract_messages
from mnemo.writing.places import place_notes, place_sentences
from tests.writing import EXTRACT

EN = "Until the end of June please send my orders to 14 Harbour Lane, Brighton, I'm staying with my sister there."
ZH = "七月底之前，我的快递都寄到西湖区文三路 88 号吧，我暂时住朋友家。"


@pytest.mark.parametrize(
    ("text", "street"),
    [
        (EN, "Harbour Lane"),
        (ZH, "文三路"),
        ("Hi! I'm at my aunt's for now. Deliver to Hauptstraße 5, Berlin.", "Hauptstraße"),
        # No address the user stated: a question, a supposition, a number, a street alone.
        ("Do you deliver to 14 Harbour Lane?", None),
        ("If I moved to 22 Orchard Street, could you still deliver?", None),
        ("I have 2 cats and 3 road bikes.", None),
        ("I walked 3 miles down the road today.", None),
        ("I live on Harbour Lane.", None),
        ("能送到文三路 88 号吗？", None),
    ],
)
def test_a_stated_sentence_with_a_house_address_is_found(text, street):
    found = place_sentences([text])
    assert [s for _, s in found] == ([street] if street else [])
    if street:
        assert found[0][0] in text  # the user's own words


def test_the_note_quotes_the_user_unless_a_note_already_names_the_street():
    ((note, quoted),) = place_notes([EN], ["The user is staying with their sister in Brighton."])
    assert note == f"The user said: “{quoted}”" and "14 Harbour Lane" in note
    ((note, _),) = place_notes([ZH], [])
    assert note.startswith("用户说：“") and "文三路 88 号" in note
    assert place_notes([EN], ["The user wants orders sent to 14 harbour lane until June."]) == []


async def test_the_address_is_kept_when_the_extractor_wrote_the_town_as_the_city(store, user):
    """What the real model did: the town as the city, a note without the street,
    a temporary note with the end date (kept, and its date given to the address)."""
    until = (date.today() + timedelta(days=40)).isoformat()
    answer = tool_call(
        "MemoryExtraction",
        city="Brighton",
        notes=["The user is staying with their sister in Brighton."],
        temporary_notes=[{"text": "The user is staying in Brighton until the end of June.", "expires": until}],
    )

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: answer)

    assert await aextract_messages(store, user, load, [HumanMessage(EN, id="h1")], 0, **EXTRACT) == (1, 0)
    notes = {n["text"]: n for n in await alist_notes(store, user)}
    (address,) = [t for t in notes if "Harbour Lane" in t]
    assert address.startswith("The user said:") and notes[address]["expires_at"].startswith(until)
    assert {
        "The user is staying with their sister in Brighton.",
        "The user is staying in Brighton until the end of June.",
    } < set(notes)
    assert "city" not in await aget_profile(store, user)  # the town of an address is not where they live


async def test_the_address_is_kept_when_the_extractor_wrote_the_street_as_the_city(store, user):
    async def load():
        return ScriptedChatModel(
            respond=lambda messages, tools: tool_call("MemoryExtraction", city="西湖区文三路 88 号")
        )

    assert await aextract_messages(store, user, load, [HumanMessage(ZH, id="h1")], 0, **EXTRACT) == (1, 0)
    (note,) = await alist_notes(store, user)
    assert "文三路 88 号" in note["text"] and note["source"] == "user_said"
    assert "city" not in await aget_profile(store, user)


async def test_a_trip_s_place_refused_as_the_city_is_kept_in_the_user_s_words(store, user):
    """The real model's answer to this message: the country of a business trip as the city."""
    text = "我三月二十号之前都在日本出差，这段时间请先别给我发货。"

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: tool_call("MemoryExtraction", city="日本"))

    assert await aextract_messages(store, user, load, [HumanMessage(text, id="h1")], 0, **EXTRACT) == (1, 0)
    (note,) = await alist_notes(store, user)
    assert note["text"] == f"用户说：“{text}”"
    assert "city" not in await aget_profile(store, user)


def test_a_refused_city_is_quoted_only_from_a_stated_sentence():
    """The city the checks refused (here a relative's) is quoted where the user stated it."""
    text = "My sister lives in Madrid, she visits a lot."
    assert place_notes([text], [], "Madrid") == [(f"The user said: “{text}”", text)]
    assert place_notes([text], ["The user's sister lives in Madrid."], "Madrid") == []
    assert place_notes([text], [], None) == []
    assert place_notes(["If I lived in Madrid, would shipping be free?"], [], "Madrid") == []
    assert place_notes(["Do you ship to Madrid?"], [], "Madrid") == []


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("I'm travelling in Japan until 20 March, so please hold any deliveries until then.", "Japan"),
        ("Travelling in Japan until May.", "Japan"),
        ("I'm on a trip to New York next week.", "New York"),
        ("我三月二十号之前都在日本出差，这段时间请先别给我发货。", "日本"),
        ("我下周去云南旅游。", "云南"),
        ("另外我下周要去澳洲玩，1月15号才回来，这期间先别给我发货了", "澳洲"),  # issue 55, the fourth blind set
        ("I love travelling.", None),
        ("We are travelling light.", None),
        ("If I went on a trip to Peru, would you ship there?", None),
    ],
)
def test_a_trip_s_place_the_user_stated_is_quoted_whatever_the_extractor_gave(text, place):
    found = place_notes([text], [])
    assert [p for _, p in place_sentences([text])] == ([place] if place else [])
    assert len(found) == (1 if place else 0) and all(text.startswith(q) for _, q in found)


def test_an_address_is_the_user_s_when_its_words_or_its_end_say_so_not_a_gift_s():
    """Issue 55, the second blind set: a grandfather's address, given for one gift, quoted as the user's."""
    gift = "A big-button radio sounds good. Can you ship it straight to him? 21 Moss Street."
    assert place_sentences([gift]) == []
    assert place_sentences(["Could it go to my place instead? 21 Moss Street."]) == [("21 Moss Street.", "Moss Street")]
    assert place_sentences(["Send everything to 21 Moss Street until 30 June."]) == [
        ("Send everything to 21 Moss Street until 30 June.", "Moss Street")
    ]  # no "I", but a while: the user's deliveries


def test_a_standing_request_for_deliveries_asked_as_a_question_is_read_one_errand_is_not():
    standing = "Can you send all my orders to 3 Quay Road from now on?"
    assert place_sentences([standing]) == [(standing, "Quay Road")]
    assert place_sentences(["Can you send my order to 3 Quay Road?"]) == []  # one errand


async def test_a_city_the_extractor_gave_of_someone_else_is_no_place_of_the_user_s(store, user):
    """The fifteenth blind set: the city of "我表妹也想买 她在重庆", refused as the cousin's, was quoted as a place."""
    said = "哦对了 我表妹也想买 她在重庆 到时候可能让她自己来找你们"

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: tool_call("MemoryExtraction", city="重庆"))

    await aextract_messages(store, user, load, [HumanMessage(said, id="h1")], 0, **EXTRACT)
    assert await alist_notes(store, user) == [] and "city" not in await aget_profile(store, user)


async def test_the_home_the_user_names_wins_over_another_city_the_extractor_gave(store, user):
    """The sixteenth blind set: "home in Croydon ... Brighton's way too pricey" gave "Brighton" as the city."""
    said = (
        "after the 14th it's back to normal, home in Croydon. not moving there for good lol, Brighton's way too pricey"
    )

    async def load():
        return ScriptedChatModel(respond=lambda messages, tools: tool_call("MemoryExtraction", city="Brighton"))

    assert await aextract_messages(store, user, load, [HumanMessage(said, id="h1")], 0, **EXTRACT) == (1, 0)
    assert (await aget_profile(store, user))["city"]["value"] == "Croydon"
