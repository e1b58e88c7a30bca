"""mnemo.writing.retract: what memory holds is removed only when the user took it back
(issue 55, the second blind set: Qwen2.5-Coder-1.5B invalidated every note it was shown
after an order question, and forgot every profile field after a coupon question)."""

from __future__ import annotations

import pytest

from mnemo import aget_profile, alist_notes, aremember, aupdate_profile
from mnemo.writing.apply import Said, aapply_extraction
from mnemo.writing.extraction import MemoryExtraction, NoteUpdate
from mnemo.writing.known import Known
from mnemo.writing.retract import forgets_field, forgotten, retracting_sentences, retracts

ADDRESS = "The user said: “Till March 3 please send anything I order to 9 Elm Road, Flat 4, Norwich.”"


@pytest.mark.parametrize(
    "text",
    [
        "Please forget my address.",
        "Can you forget that I'm vegan?",  # asking to forget, as a question too
        "I sold my car.",
        "I'm not vegan any more.",
        "I moved to Leeds last week.",
        "I got a hamster; the cats live with my sister now.",  # a change said with "now"
        "我现在不住杭州了。",
        "我不吃素了。",
        "把我的地址删了吧。",
        "我搬家了，现在住苏州。",
    ],
)
def test_a_sentence_that_asks_to_forget_or_states_a_change_takes_back(text):
    (taken_back,) = retracting_sentences([text])
    assert taken_back in text
    assert "now" in taken_back or "了" in taken_back or text == taken_back


def test_a_change_is_read_in_its_own_clauses_when_they_name_something():
    """The sixteenth blind set: "出差完就回去，不是搬家哈" took back the trip's note by "出差"."""
    trip = "用户说：“这个月底到10月15号我在杭州出差，这段时间快递寄到杭州滨江江陵路那个全季酒店前台。”"
    assert retracts(trip, retracting_sentences(["不去杭州出差了"]))  # precondition: a retraction names the trip
    assert retracting_sentences(["我家还是在无锡的，出差完就回去，不是搬家哈"]) == ["不是搬家哈"]
    assert not retracts(trip, retracting_sentences(["我家还是在无锡的，出差完就回去，不是搬家哈"]))
    assert retracting_sentences(["I got a hamster; the cats live with my sister now."]) == [
        "the cats live with my sister now."
    ]
    # a change that names nothing of its own is read in its whole sentence
    assert retracts("The user has a dog named Rex.", retracting_sentences(["my dog, I don't have it any more"]))
    assert retracts("The user is vegan.", retracting_sentences(["the vegan thing, that's not true any more"]))
    assert retracting_sentences(["I have a cat, no longer a dog."]) == ["no longer a dog."]


@pytest.mark.parametrize(
    "text",
    [
        "oh and order 7730418 is already on its way, can that one be redirected too?",
        "stocking up before then, is the code SAVE10 still valid?",
        "Don't forget I'm vegan.",
        "别忘了我不吃香菜。",
        "If I moved to Leeds, would shipping be cheaper?",  # a supposition
        "The refund for my order was wrong.",  # the order system's, no fact of the user's
        "Is it not in stock?",  # a question that asks no forgetting
    ],
)
def test_a_question_a_supposition_a_reminder_or_an_order_takes_nothing_back(text):
    assert retracting_sentences(["I sold my car."]) != []  # the rule reads a retraction at all
    assert retracting_sentences([text]) == []


def test_a_note_or_a_field_is_taken_back_only_when_the_retraction_names_it():
    assert retracts("The user drives a red car.", retracting_sentences(["I sold my car."]))
    assert not retracts("The user is left-handed.", retracting_sentences(["I sold my car."]))
    assert forgets_field("city", retracting_sentences(["Please forget where I live."]))
    assert forgets_field("name", retracting_sentences(["Forget Ingrid, call me Inge."]), value="Ingrid")
    assert not forgets_field("name", retracting_sentences(["Please forget where I live."]))
    assert forgets_field("language", retracting_sentences(["Stop answering in German, not needed any more."]))


def test_laughter_or_a_negation_s_stub_ties_no_retraction_to_a_note():
    """The sixteenth blind set: the model invalidated every note it was shown, and "说不定下周就放弃了哈哈" took
    back a peanut allergy's note ending "帮我避开哈", "don't call him" an ICU nurse's "don't ring me"."""
    nuts = "用户说：“我对花生过敏，挺严重的，零食礼包里有花生的帮我避开哈。”"
    nurse = "The user said: “I'm an ICU nurse so please don't ring me before 2pm”"
    assert retracts("用户吃素", retracting_sentences(["我不吃素了"]))  # precondition: a retraction's word
    assert retracting_sentences(["我最近在控糖，不过我这人三分钟热度，说不定下周就放弃了哈哈。"])  # it retracts
    assert not retracts(nuts, retracting_sentences(["我最近在控糖，不过我这人三分钟热度，说不定下周就放弃了哈哈。"]))
    him = retracting_sentences(["my husband's the early bird, he'd pick up at 6am lol but don't call him"])
    assert him and not retracts(nurse, him)
    assert retracts(nurse, retracting_sentences(["I'm not a nurse anymore"]))
    hearing = "用户听力不太好，戴助听器的，售后有啥问题别打电话，发文字消息就行。"
    dad = retracting_sentences(["我爸是色弱，上次帮他买衣服颜色搞错了，不过这次是给我自己买"])
    assert dad and not retracts(hearing, dad)
    assert retracts("用户养了一只猫", retracting_sentences(["我不养猫了"]))


async def test_an_order_question_invalidates_no_note_a_retraction_does(store, user):
    address = (await aremember(store, user, ADDRESS))["note"]
    hand = (await aremember(store, user, "The user is left-handed."))["note"]
    known = Known.of_notes([address, hand])  # n1, n2
    grabby = MemoryExtraction(invalidates=["n1", "n2"])
    question = [Said("oh and my order is it on its way? can that one be redirected to Norwich too", None)]
    applied = await aapply_extraction(store, user, grabby, said=question, known=known)
    assert applied["revised"] == [] and len(await alist_notes(store, user)) == 2
    moved = [Said("Scratch that, I'm not at the Norwich flat any more.", None)]
    applied = await aapply_extraction(store, user, grabby, said=moved, known=known)
    assert applied["revised"] == [address["id"]]  # the note its words name; the other stays
    assert [n["text"] for n in await alist_notes(store, user)] == ["The user is left-handed."]


async def test_a_field_is_forgotten_only_when_the_user_took_it_back(store, user):
    await aupdate_profile(store, user, {"name": "Ingrid", "city": "Lisbon", "language": "en"})
    forget_all = MemoryExtraction(forget_fields=["name", "city", "language", "response_style"])
    await aapply_extraction(store, user, forget_all, said=[Said("is the code SAVE10 still valid?", None)])
    assert {f: v["value"] for f, v in (await aget_profile(store, user)).items()} == {
        "name": "Ingrid",
        "city": "Lisbon",
        "language": "en",
    }
    await aapply_extraction(store, user, forget_all, said=[Said("Please forget where I live.", None)])
    assert set(await aget_profile(store, user)) == {"name", "language"}  # the city, only


async def test_an_update_copying_a_prompt_example_is_not_applied(store, user):
    """The check alone refuses it: its words were said, and it shares words with its note."""
    sms = (await aremember(store, user, "用户希望发短信联系。"))["note"]
    said = [Said("还有，有事请联系我，发短信，我不看邮件。", None)]
    copy = MemoryExtraction(updates=[NoteUpdate(id="n1", text="用户希望用邮件联系。")])
    applied = await aapply_extraction(store, user, copy, said=said, known=Known.of_notes([sms]))
    assert applied["revised"] == []
    assert [n["text"] for n in await alist_notes(store, user)] == ["用户希望发短信联系。"]
    own = MemoryExtraction(updates=[NoteUpdate(id="n1", text="用户希望发短信联系，不看邮件。")])
    applied = await aapply_extraction(store, user, own, said=said, known=Known.of_notes([sms]))
    assert applied["revised"] == [sms["id"]]  # the same words, not the example: applied


def test_a_note_the_user_asks_to_forget_is_named_by_a_word_or_two_han_characters():
    """The thirteenth blind set: the model kept "teacher" and "健身房" after the user asked to forget them."""
    teacher = "The user said: “i'm a teacher so summer's basically my only time to shop”"
    shown = {"t": teacher, "v": "The user is vegan.", "g": "用户在健身房当教练", "c": "用户说：“别给我推猫相关的”"}
    shown["k"] = "用户家厨房在装修"  # "房" alone names it: two characters in a row do not
    assert forgotten(["actually forget the teacher thing, don't want my job on file. vegan stays tho"], shown) == ["t"]
    assert forgotten(["呃 健身房那个别记了 删掉吧 下个月就辞职了"], shown) == ["g"]  # not "别": one character
    assert forgotten(["don't forget I'm vegan"], shown) == []  # a reminder
    assert forgotten(["please remove the cheese, I'm vegan"], shown) == []  # no ask to forget a fact


async def test_the_writing_drops_a_note_the_user_asked_to_forget(store, user):
    from langchain_core.messages import HumanMessage

    from mnemo.writing import aextract_messages
    from tests.writing import EXTRACT, load_nothing_extracted

    thread = [HumanMessage("i'm a teacher so summer's basically my only time to shop lol", id="h1")]
    await aextract_messages(store, user, load_nothing_extracted, thread, 0, **EXTRACT)
    assert [n["text"] for n in await alist_notes(store, user)] != []  # precondition: a note to forget
    thread.append(HumanMessage("actually forget the teacher thing, don't want my job on file", id="h2"))
    await aextract_messages(store, user, load_nothing_extracted, thread, 1, **EXTRACT)
    assert await alist_notes(store, user) == []
